"""A report's markdown body as HTML: markdown-it-py's tokens, with citations and sources wired up.

Raw HTML in the markdown is never passed through (it shows as text), images become their
alt text (nothing is loaded from outside), and only ``http(s)``, ``file`` and in-page
``#`` links are made; markdown-it-py escapes every text and attribute it renders. On top
of its tokens, three changes:

- the Sources list gets one anchor per entry (``src-<n>``), and an entry whose address is
  a plain absolute path links to it as a ``file://`` URI;
- every citation ``[n]`` outside Sources becomes a link to that entry, named by the
  source's title (``aria-labelledby``), whose description is the source's passage preview;
- the first level-1 heading is taken out: the page shows it as its title.

Bounds, for reports someone else wrote: a source's preview is emitted once, after the body,
and every citation of it refers to it (``aria-describedby``; a CSS rule per source shows it
while one of its citations is hovered or focused), so the page grows with the sources, not
with the citations. Its window is the passage that best matches the sentences citing it
(the first :data:`MAX_CITING_CHARS` characters of them). An address longer than
:data:`MAX_LINK_CHARS` is no link; a title, and any run of text without a space, is cut to
:data:`MAX_SHOWN_CHARS`. ``file:`` links are made only when the page is told the report is
local (``local_files``: written by this tool), and only to a path with no host (``file:///``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import PurePosixPath
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..review.checks.common import short
from ..review.markdown import SOURCES_TITLES, heading_key
from ..text.citations import CITATION, citation_numbers, sentence_spans
from ..text.controls import one_line
from ..text.passage_window import PassageWindow, key_terms

__all__ = ["Body", "render_body", "PassageFinder", "MAX_LINK_CHARS", "MAX_SHOWN_CHARS", "MAX_CITING_CHARS"]

# (sentence, source number) -> the cited passage, or None when there is none to show.
PassageFinder = Callable[[str, int], PassageWindow | None]

MAX_LINK_CHARS = 2048  # a longer address is shown as text, never made a link
MAX_SHOWN_CHARS = 300  # a title, and a run of text with no space (a pasted URL, base64), is cut here
MAX_CITING_CHARS = 5000  # per source: the citing sentences that choose its preview's window
_WEB_LINK = re.compile(r"(?i)^(?:https?://|#)")
_LOCAL_FILE = re.compile(r"(?i)^file:///")  # file: with no host: a path on this machine
_LONG_RUN = re.compile(rf"\S{{{MAX_SHOWN_CHARS + 1},}}")
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
    tips_html: str = ""  # each cited source's name, and its preview when it has a passage
    tips_css: str = ""  # the rules that show a preview while one of its citations is hovered or focused


def _markdown(local_files: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.core.ruler.disable("text_join")  # keep "\[3\]" apart from a citation "[3]"
    md.validateLink = lambda url: _link_allowed(url.strip(), local_files)  # type: ignore[method-assign]  # the documented hook
    md.add_render_rule("image", _as_text)  # nothing is loaded from outside: an image shows its alt text
    md.add_render_rule("text_special", _as_text)
    md.add_render_rule("cite", _cite_html)
    return md


def _link_allowed(url: str, local_files: bool) -> bool:
    if len(url) > MAX_LINK_CHARS:
        return False
    return bool(_WEB_LINK.match(url) or (local_files and _LOCAL_FILE.match(url)))


def _as_text(renderer: object, tokens: Sequence[Token], idx: int, options: object, env: object) -> str:
    return escape(tokens[idx].content)


def _shown(text: str) -> str:
    """``text`` with every run of more than :data:`MAX_SHOWN_CHARS` characters without a space cut."""
    return _LONG_RUN.sub(lambda m: m.group()[:MAX_SHOWN_CHARS] + "\u2026", text) if len(text) > MAX_SHOWN_CHARS else text




_TEXT_TYPES = frozenset({"text", "text_special", "code_inline", "image"})


def render_body(markdown: str, passage: PassageFinder | None, *, local_files: bool = False) -> Body:
    """The HTML of ``markdown`` (a report without its front matter); ``passage`` finds the
    passage a source's citations preview (None: no previews); ``local_files``: the report was
    written by this tool, so its local paths (``file:///``) may be links."""
    md = _MD[local_files]
    tokens = md.parse(markdown)
    _bound_text(tokens)
    body = Body()
    tokens = _take_title(md, tokens, body)
    titles = _sources(tokens, local_files)
    citing: dict[int, list[str]] = {}  # source -> the sentences citing it, up to MAX_CITING_CHARS
    section = ""
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and i + 1 < len(tokens):
            section = heading_key(tokens[i + 1].content)
        elif token.type == "inline" and section not in SOURCES_TITLES and token.children:
            token.children = _cited(token.children, titles, citing, body)
    windows = _windows(citing, passage)
    env: dict[str, Any] = {"titles": titles, "windows": windows, "named": set(), "body": body}
    body.html = md.renderer.render(tokens, md.options, env)
    body.tips_html = _names_html(env["named"], titles) + "".join(
        _tip_html(n, titles[n], window) + "\n" for n, window in windows.items()
    )
    body.tips_css = "".join(
        f'body:has(a[aria-describedby="tip-{n}"]:is(:hover, :focus)) #tip-{n} {{ display: block; }}\n'
        for n in windows
    )
    return body


def _bound_text(tokens: list[Token]) -> None:
    """Cut every run of text without a space longer than :data:`MAX_SHOWN_CHARS` (in text, code
    and link labels alike: a 100,000-character address is shown as its first few hundred)."""
    for token in tokens:
        for child in token.children or ():
            if child.type in ("text", "code_inline") and len(child.content) > MAX_SHOWN_CHARS:
                child.content = _shown(child.content)


def _take_title(md: MarkdownIt, tokens: list[Token], body: Body) -> list[Token]:
    """The tokens without the first level-1 heading, which becomes the body's title."""
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h1":
            inline = tokens[i + 1]
            body.heading_html = md.renderer.render(inline.children or [], md.options, {})
            body.heading_text = "".join(c.content for c in inline.children or () if c.type in _TEXT_TYPES)
            return tokens[:i] + tokens[i + 3 :]
    return tokens


def _sources(tokens: list[Token], local_files: bool) -> dict[int, str]:
    """Anchor each entry of the Sources list (``src-<n>``), link a plain path to its file (for a
    report this tool wrote), and return each entry's title (the text before its address) by number."""
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
            if local_files and not any(c.type == "link_open" for c in children):
                token.children = children = _link_path(children)
            text = "".join(c.content for c in children if c.type in _TEXT_TYPES)
            titles[number] = short(text.split(" \u2014 ", 1)[0], MAX_SHOWN_CHARS) or f"Source {number}"
    return titles


def _link_path(children: list[Token]) -> list[Token]:
    """A Sources entry ending in a plain absolute path, with the path made a ``file:///`` link."""
    if not children or children[-1].type != "text":
        return children
    last = children[-1]
    match = _PATH_AFTER_DASH.search(last.content)
    if match is None:
        return children
    path = match.group(2)
    href = _MD[True].normalizeLink(PurePosixPath(path).as_uri())
    if not _link_allowed(href, True):
        return children
    return [
        *children[:-1],
        _text(last.content[: match.start()] + match.group(1)),
        Token("link_open", "a", 1, attrs={"href": href}),
        _text(path),
        Token("link_close", "a", -1),
        _text(match.group(3) or ""),
    ]


def _text(content: str) -> Token:
    token = Token("text", "", 0)
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
    return one_line(CITATION.sub(" ", text[start:end]))


def _cited(children: list[Token], titles: dict[int, str], citing: dict[int, list[str]], body: Body) -> list[Token]:
    """The inline's children with each citation made a ``cite`` token (none inside a link: no
    nested anchors); the citing sentence is kept for each source, up to :data:`MAX_CITING_CHARS`."""
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
            for n in numbers:
                kept = citing.setdefault(n, [])
                if sum(map(len, kept)) < MAX_CITING_CHARS:
                    kept.append(sentence[:MAX_CITING_CHARS])
            out.append(_text(child.content[last : m.start()]))
            cite = Token("cite", "", 0)
            cite.meta = {"numbers": numbers}
            out.append(cite)
            last = m.end()
        out.append(_text(child.content[last:]))
    return out


def _windows(citing: dict[int, list[str]], passage: PassageFinder | None) -> dict[int, PassageWindow]:
    """Each cited source's preview: the window of its passage that best matches its citing sentences."""
    if passage is None:
        return {}
    found = {n: passage(" ".join(sentences), n) for n, sentences in sorted(citing.items())}
    return {n: window for n, window in found.items() if window is not None}


def _cite_html(renderer: object, tokens: Sequence[Token], idx: int, options: object, env: dict) -> str:
    """``[n, m]`` as links to the source entries, each named by its source's title and described
    by its source's preview (both once per source, after the body: a citation costs its link alone)."""
    body: Body = env["body"]
    links = []
    for n in tokens[idx].meta["numbers"]:
        previewed = n in env["windows"]
        described = f' aria-describedby="tip-{n}"' if previewed else ""
        links.append(f'<a href="#src-{n}" aria-labelledby="name-{n}"{described}>{n}</a>')
        env["named"].add(n)
        body.citations += 1
        body.previews += previewed
    return '<sup class="cites">[' + ", ".join(links) + "]</sup>"


def _names_html(named: set[int], titles: dict[int, str]) -> str:
    """Each cited source's name, "Source n: its title", which its citations are labelled by."""
    return "".join(f'<span id="name-{n}" hidden>{escape(f"Source {n}: {titles[n]}")}</span>\n' for n in sorted(named))


def _tip_html(n: int, title: str, window: PassageWindow) -> str:
    """Source ``n``'s passage preview, its words that match the sentences citing it marked."""
    matched = set(window.matched)
    words = []
    for word in window.text.split():
        if _HEADING_MARK.fullmatch(word):
            continue  # a markdown heading's "#" in the source's text says nothing to a reader
        shown = escape(_shown(word))
        words.append(f"<mark>{shown}</mark>" if matched and _matches(word, matched) else shown)
    text = (
        ("\u2026 " if window.cut_before else "") + " ".join(words) + (" \u2026" if window.cut_after else "")
    )
    return (
        f'<span class="tip" role="tooltip" id="tip-{n}">'
        f'<span class="tip-source">[{n}] {escape(title)}</span>'
        f'<span class="tip-text">{text}</span></span>'
    )


def _matches(word: str, matched: set[str]) -> bool:
    return bool(set(key_terms(word)) & matched)


_MD = {False: _markdown(False), True: _markdown(True)}  # without and with file:/// links
