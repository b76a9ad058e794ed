"""What an HTML page is made of, read with the standard library's parser: its elements (tag and
attributes), the text of each element with an id, and its title. Used on exported pages and on
the DOM headless Chromium dumps after loading one."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

__all__ = ["Dom", "parse_dom"]

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Dom:
    elements: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    text_by_id: dict[str, str] = field(default_factory=dict)
    title: str = ""
    text: str = ""  # all of the page's text, as a reader's screen shows it (whitespace folded)

    def tags(self) -> set[str]:
        return {tag for tag, _ in self.elements}

    def with_attr(self, name: str) -> list[dict[str, str]]:
        return [attrs for _, attrs in self.elements if name in attrs]

    def hrefs(self) -> list[str]:
        return [attrs["href"] for tag, attrs in self.elements if tag == "a" and "href" in attrs]

    def ids(self) -> set[str]:
        return {attrs["id"] for _, attrs in self.elements if "id" in attrs}

    def by_class(self, name: str) -> list[dict[str, str]]:
        return [attrs for _, attrs in self.elements if name in attrs.get("class", "").split()]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.dom = Dom()
        self.open: list[tuple[str, str | None, list[str]]] = []  # (tag, id, text pieces)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self.dom.elements.append((tag, values))
        if tag not in _VOID:
            self.open.append((tag, values.get("id"), []))

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            name, ident, pieces = self.open.pop()
            text = "".join(pieces)
            if ident:
                self.dom.text_by_id[ident] = " ".join(text.split())
            if name == "title":
                self.dom.title = text.strip()
            if self.open:
                self.open[-1][2].append(text)
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        self.dom.text += data
        if self.open:
            self.open[-1][2].append(data)


def parse_dom(html: str) -> Dom:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    reader.dom.text = " ".join(reader.dom.text.split())
    return reader.dom
