"""A report's markdown body as HTML: markdown-it-py's tokens, with citations and sources wired up.

Raw HTML in the markdown is never passed through (it shows as text), images become their
alt text (nothing is loaded from outside), and only ``http(s)``, ``file`` and in-page
``#`` links are made; markdown-it-py escapes every text and attribute it renders. On top
of its tokens, three changes:

- the Sources list gets one anchor per entry (``src-<n>``), and an entry whose address is
  a plain absolute path links to it as a ``file://`` URI;
- every citation ``[n]`` outside Sources becomes a link to that entry, labelled with the
  source's title, and carries the cited passage as a tooltip that hover and keyboard
  focus show and screen readers read as the link's description;
- the first level-1 heading is taken out: the page shows it as its title.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import PurePosixPath

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..review.markdown import SOURCES_TITLES, heading_key
from ..text.citations import CITATION, citation_numbers, sentence_spans
from ..text.passage_window import PassageWindow, key_terms

__all__ = ["Body", "render_body", "PassageFinder"]

# (sentence, source number) -> the cited passage, or None when there is none to show.
PassageFinder = Callable[[str, int], PassageWindow | None]

_ALLOWED_LINK = re.compile(r"(?i)^(?:https?://|file://|#)")
_HEADING_MARK = re.compile(r"#{1,6}")
_PATH_AFTER_DASH = re.compile(r"(\s\u2014\s)(/[^\n]*?)(\s\(search snippet only\))?$")


@dataclass
class Body:
    """The body's HTML, its title (the first level-1 heading; HTML and plain text), and counts."""

    html: str = ""
    heading_html: str = ""
    heading_text: str = ""
    citations: int = 0  # citation links made
    previews: int = 0  # of them, with the cited passage shown
    unresolved: list[int] = field(default_factory=list)  # numbers cited with no Sources entry


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.core.ruler.disable("text_join")  # keep "\[3\]" apart from a citation "[3]"
    md.validateLink = lambda url: bool(_ALLOWED_LINK.match(url.strip()))
    md.add_render_rule("image", _as_text)  # nothing is loaded from outside: an image shows its alt text
    md.add_render_rule("text_special", _as_text)
    return md


def _as_text(renderer: object, tokens: Sequence[Token], idx: int, options: object, env: object) -> str:
    return escape(tokens[idx].content)


_MD = _markdown()


_TEXT_TYPES = frozenset({"text", "text_special", "code_inline", "image"})


def render_body(markdown: str, passage: PassageFinder | None) -> Body:
    """The HTML of ``markdown`` (a report without its front matter); ``passage`` finds the
    passage a citation shows (None: no previews)."""
    tokens = _MD.parse(markdown)
    body = Body()
    tokens = _take_title(tokens, body)
    titles = _sources(tokens)
    counter = itertools.count(1)
    section = ""
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and i + 1 < len(tokens):
            section = heading_key(tokens[i + 1].content)
        elif token.type == "inline" and section not in SOURCES_TITLES and token.children:
            token.children = _cited(token.children, titles, passage, counter, body)
    body.html = _MD.renderer.render(tokens, _MD.options, {})
    return body


def _take_title(tokens: list[Token], body: Body) -> list[Token]:
    """The tokens without the first level-1 heading, which becomes the body's title."""
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h1":
            inline = tokens[i + 1]
            body.heading_html = _MD.renderer.render(inline.children or [], _MD.options, {})
            body.heading_text = "".join(c.content for c in inline.children or () if c.type in _TEXT_TYPES)
            return tokens[:i] + tokens[i + 3 :]
    return tokens


def _sources(tokens: list[Token]) -> dict[int, str]:
    """Anchor each entry of the Sources list (``src-<n>``), link a plain path to its file, and
    return each entry's title (the text before its address) by number."""
    titles: dict[int, str] = {}
    section = ""
    number = 0
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and i + 1 < len(tokens):
            section = heading_key(tokens[i + 1].content)
        elif section not in SOURCES_TITLES:
            continue
        elif token.type == "ordered_list_open":
            token.attrJoin("class", "sources")
        elif token.type == "list_item_open" and token.info.isdigit():
            number = int(token.info)
            token.attrSet("id", f"src-{number}")
        elif token.type == "inline" and number and number not in titles:
            children = token.children or []
            if not any(c.type == "link_open" for c in children):
                token.children = children = _link_path(children)
            text = "".join(c.content for c in children if c.type in _TEXT_TYPES)
            titles[number] = text.split(" \u2014 ", 1)[0].strip() or f"Source {number}"
    return titles


def _link_path(children: list[Token]) -> list[Token]:
    """A Sources entry ending in a plain absolute path, with the path made a ``file://`` link."""
    if not children or children[-1].type != "text":
        return children
    last = children[-1]
    match = _PATH_AFTER_DASH.search(last.content)
    if match is None:
        return children
    path = match.group(2)
    link_open = Token("link_open", "a", 1, attrs={"href": _MD.normalizeLink(PurePosixPath(path).as_uri())})
    return [
        *children[:-1],
        _text(last.content[: match.start()] + match.group(1)),
        link_open,
        _text(path),
        Token("link_close", "a", -1),
        _text(match.group(3) or ""),
    ]


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _html(content: str) -> Token:
    token = Token("html_inline", "", 0)
    token.content = content
    return token


def _plain(children: Sequence[Token]) -> tuple[str, list[int]]:
    """The inline's text as a reader sees it, and where each child starts in it."""
    text, starts = "", []
    for child in children:
        starts.append(len(text))
        if child.type in _TEXT_TYPES:
            text += child.content
        elif child.type in ("softbreak", "hardbreak"):
            text += " "
    return text, starts


def _sentence_at(text: str, spans: list[tuple[int, int]], at: int) -> str:
    """The sentence of ``text`` holding offset ``at``, without its citations."""
    start, end = next(((s, e) for s, e in spans if s <= at < e), (0, len(text)))
    return " ".join(CITATION.sub(" ", text[start:end]).split())


def _cited(
    children: list[Token],
    titles: dict[int, str],
    passage: PassageFinder | None,
    counter: Iterator[int],
    body: Body,
) -> list[Token]:
    """The inline's children with each citation made links (none inside a link: no nested anchors)."""
    text, starts = _plain(children)
    spans = sentence_spans(text)
    out: list[Token] = []
    in_link = 0
    for child, start in zip(children, starts, strict=True):
        in_link += child.type == "link_open"
        in_link -= child.type == "link_close"
        if child.type != "text" or in_link or not CITATION.search(child.content):
            out.append(child)
            continue
        last = 0
        for m in CITATION.finditer(child.content):
            numbers = citation_numbers(m.group(1))
            if not all(n in titles for n in numbers):
                body.unresolved.extend(n for n in numbers if n not in titles)
                continue
            sentence = _sentence_at(text, spans, start + m.start())
            out.append(_text(child.content[last : m.start()]))
            out.append(_html(_citation_html(numbers, sentence, titles, passage, counter, body)))
            last = m.end()
        out.append(_text(child.content[last:]))
    return out


def _citation_html(
    numbers: list[int],
    sentence: str,
    titles: dict[int, str],
    passage: PassageFinder | None,
    counter: Iterator[int],
    body: Body,
) -> str:
    """``[n, m]`` as links to the source entries, each with its passage as a tooltip."""
    links = []
    for n in numbers:
        k = next(counter)
        window = passage(sentence, n) if passage is not None else None
        label = escape(f"Source {n}: {titles[n]}", quote=True)
        tip = _tip_html(k, n, titles[n], window) if window is not None else ""
        described = f' aria-describedby="tip-{k}"' if tip else ""
        links.append(
            f'<span class="cite"><a href="#src-{n}" id="cite-{k}" aria-label="{label}"{described}>{n}</a>{tip}</span>'
        )
        body.citations += 1
        body.previews += bool(tip)
    return '<sup class="cites">[' + ", ".join(links) + "]</sup>"


def _tip_html(k: int, n: int, title: str, window: PassageWindow) -> str:
    """The cited passage, its words that match the citing sentence marked."""
    matched = set(window.matched)
    words = []
    for word in window.text.split():
        if _HEADING_MARK.fullmatch(word):
            continue  # a markdown heading's "#" in the source's text says nothing to a reader
        shown = escape(word)
        words.append(f"<mark>{shown}</mark>" if matched and _matches(word, matched) else shown)
    text = (
        ("\u2026 " if window.cut_before else "") + " ".join(words) + (" \u2026" if window.cut_after else "")
    )
    return (
        f'<span class="tip" role="tooltip" id="tip-{k}">'
        f'<span class="tip-source">[{n}] {escape(title)}</span>'
        f'<span class="tip-text">{text}</span></span>'
    )


def _matches(word: str, matched: set[str]) -> bool:
    return bool(set(key_terms(word)) & matched)
