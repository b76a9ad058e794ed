"""Extraction: one set of rules, so a web page and a corpus file of the same bytes read the same."""

from __future__ import annotations

import codecs
import sqlite3
from pathlib import Path

import pytest

from research_agent.fetch import Fetcher, FetchFailure, decode_body, extract, pdf_supported
from research_agent.fetch.extract import HTML, MARKDOWN, RST, TEXT, Unreadable
from research_agent.fetch.html_text import TRAFILATURA_MAX_CHARS
from research_agent.search.corpus_files import read_document
from research_agent.search.corpus_index import CorpusIndex
from research_agent.sources import Document, Page
from research_agent.text.passages import split_passages
from tests.support import http_server
from tests.support.http_server import ARTICLE_TEXT, LocalServer

local_server = http_server.local_server  # the fixture

SITE = "site.test"
HIDDEN = "var hidden = 'scripted words';"
STYLE = "p { color: red }"


def _html(title: str, body: str, *, head: str = "") -> str:
    paragraphs = "".join(f"<p>{p}</p>" for p in body.split("\n\n"))
    return (
        f"<html><head>{head}<title>{title}</title><style>{STYLE}</style><script>{HIDDEN}</script></head>"
        f"<body><nav><a href='/'>Home</a></nav><article><h1>{title}</h1>{paragraphs}</article>"
        "<footer>Copyright Example Energy</footer></body></html>"
    )


def _huge_page() -> bytes:
    rows = "".join(f"<li>entry{i} pagination</li>" for i in range(TRAFILATURA_MAX_CHARS // 30))
    return f"<html><head><title>Contents</title></head><body><ul>{rows}</ul></body></html>".encode()


FRENCH = "Le café coûte 5 € de plus, disent les “experts” — vraiment.\n\n" + ARTICLE_TEXT
LATIN = "Le café coûte 5 EUR de plus, disent les experts.\n\n" + ARTICLE_TEXT

# name: (bytes, file suffix, Content-Type served without a charset, expected title, expected words)
CASES: dict[str, tuple[bytes, str, str, str, str]] = {
    "meta windows-1252": (
        _html("Prix “spéciaux” — 5 €", FRENCH, head='<meta charset="windows-1252">').encode("cp1252"),
        ".html", "text/html", "Prix “spéciaux” — 5 €", "Le café coûte 5 €",
    ),
    "utf-8 with a BOM": (
        codecs.BOM_UTF8 + _html("Crème brûlée", FRENCH).encode(),
        ".html", "text/html", "Crème brûlée", "les “experts” — vraiment",
    ),
    "undeclared windows-1252": (
        _html("Café économie", FRENCH).encode("cp1252"),
        ".htm", "text/html", "Café économie", "Le café coûte 5 €",
    ),
    "xml declaration": (
        ('<?xml version="1.0" encoding="iso-8859-1"?>' + _html("Façade", LATIN)).encode("latin-1"),
        ".html", "application/xhtml+xml", "Façade", "Le café coûte 5 EUR",
    ),
    "utf-16 with a BOM": (
        _html("Naïve", FRENCH).encode("utf-16"), ".html", "text/html", "Naïve", "Le café coûte 5 €",
    ),
    "plain windows-1252 text": (
        ("Notes on heat pumps\n\n" + FRENCH).encode("cp1252"),
        ".txt", "text/plain", "Notes on heat pumps", "Le café coûte 5 €",
    ),
    "page over the trafilatura limit": (_huge_page(), ".html", "text/html", "Contents", "entry12345 pagination"),
}  # fmt: skip


async def _fetch(server: LocalServer, body: bytes, content_type: str) -> Page:
    server.extra_routes[("GET", "/same")] = lambda h: h.send(200, body, content_type)
    async with Fetcher(
        allow_private=True, resolver=_resolver, respect_robots=False, total_timeout=60.0
    ) as fetcher:
        page = await fetcher.fetch(server.url("/same", host=SITE))
    assert isinstance(page, Page), page
    return page


async def _resolver(host: str) -> list[str]:
    if host == SITE:
        return ["127.0.0.1"]
    raise OSError(f"unknown host {host}")


@pytest.mark.parametrize("case", list(CASES))
async def test_a_page_and_a_corpus_file_of_the_same_bytes_read_the_same(
    local_server: LocalServer, tmp_path: Path, case: str
) -> None:
    data, suffix, content_type, title, words = CASES[case]
    page = await _fetch(local_server, data, content_type)
    path = tmp_path / "docs" / f"doc{suffix}"
    path.parent.mkdir()
    path.write_bytes(data)
    document = read_document(path, path.stat(), max_bytes=len(data))
    assert isinstance(document, Document)
    assert (document.title, document.text) == (page.title, page.text)
    assert page.title == title and words in page.text
    assert HIDDEN not in page.text and "color: red" not in page.text and "\ufffd" not in page.text

    index = CorpusIndex(path.parent, tmp_path / "cache")
    assert index.refresh().documents == 1
    [hit] = index.search(words, limit_files=1, token_budget=100_000)
    assert hit.title == page.title
    passages = split_passages(page.text)
    assert hit.text.split("\n\n") and all(p in passages for p in hit.text.split("\n\n"))


def test_every_line_of_html_text_is_a_paragraph() -> None:
    html = _html("Heat pumps", "First paragraph of the article.\n\n" + ARTICLE_TEXT).encode()
    document = extract(html, HTML)
    assert isinstance(document, Document)
    assert document.text.split("\n\n")[-2:] == ["First paragraph of the article.", ARTICLE_TEXT]


SPHINX_PAGE = """<html><head></head><body><div class="body">
<h1>Coroutines and Tasks<a class="headerlink" href="#coroutines-and-tasks" title="Permalink">¶</a></h1>
<p>This section outlines high-level asyncio APIs to work with coroutines and tasks in programs.</p>
<h2 id="awaitables">Awaitables<a href="#awaitables">#</a></h2>
<p>An object is awaitable if it can be used in an await expression; most asyncio APIs accept them.</p>
<h3>Cancellation<a class="anchor" href="#cancel">§</a></h3>
<p>Tasks can be cancelled; the cancellation is an exception raised inside the coroutine ¶ itself.</p>
<p>See <a href="#awaitables">awaitables</a> and <a href="#top">#1 in the list</a> for more details here.</p>
</div></body></html>"""


def test_permalink_marks_are_not_text() -> None:
    """Issue 33: Sphinx's ¶ showed in search snippets and citation previews."""
    document = extract(SPHINX_PAGE.encode(), HTML)
    assert isinstance(document, Document)
    paragraphs = document.text.split("\n\n")
    assert document.title == "Coroutines and Tasks"  # from the <h1>, its mark left out
    assert "¶" not in document.text.replace("coroutine ¶ itself", "") and "§" not in document.text
    assert "the coroutine ¶ itself" in document.text  # a mark in prose is the writer's: kept
    assert "See awaitables and #1 in the list for more details here." in paragraphs  # links with words stay


def test_decoding_declarations() -> None:
    xml = b'<?xml version="1.0" encoding="iso-8859-1"?><html><p>caf\xe9</p></html>'
    assert "café" in decode_body(xml, None, html=True)  # an XML declaration is a declaration
    assert decode_body(xml, "utf-8", html=True).endswith("caf\ufffd</p></html>")  # the header wins
    utf16_label = '<meta charset="utf-16"><p>café</p>'.encode()
    assert "café" in decode_body(utf16_label, None, html=True)  # a UTF-16 label read as ASCII is UTF-8
    assert decode_body(b"caf\xe9", "iso-8859-1", html=False) == "café"  # latin-1 labels mean windows-1252
    assert decode_body(b"\x93q\x94", "latin-1", html=False) == "“q”"


@pytest.mark.parametrize(
    ("kind", "text", "title"),
    [
        (MARKDOWN, "Intro line\n\n# Real heading #\n\ntext", "Real heading"),
        (MARKDOWN, "    # indented code, not a heading\n\ntext", ""),
        (RST, "Operations\n==========\n\ntext", "Operations"),
        (TEXT, "\n\n  Short first line  \n\nbody", "Short first line"),
        (TEXT, "word " * 60 + "\n\nbody", ""),  # prose, not a title: the caller names it
    ],
)
def test_plain_text_titles(kind: str, text: str, title: str) -> None:
    document = extract(text.encode(), kind)
    assert isinstance(document, Document) and document.title == title


def test_unreadable_bytes_are_values_not_exceptions() -> None:
    assert extract(b"\x89PNG\r\n\x1a\n" + b"x" * 100, HTML) == Unreadable("binary")
    assert extract(b"\x81\x8d\x8f\x90\x9d" * 20, TEXT) == Unreadable("undecodable", "mostly undecodable text")


async def test_undecodable_page_is_a_decode_error(local_server: LocalServer) -> None:
    local_server.extra_routes[("GET", "/undecodable")] = lambda h: h.send(
        200, b"\x81\x8d\x8f" * 50, "text/plain"
    )
    async with Fetcher(allow_private=True, resolver=_resolver, respect_robots=False) as fetcher:
        result = await fetcher.fetch(local_server.url("/undecodable", host=SITE))
    assert isinstance(result, FetchFailure) and result.reason == "decode_error"


def test_files_read_under_older_extraction_rules_are_read_again(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalpha text")
    (root / "b.txt").write_bytes(b"caf\xe9")  # skipped by older rules as not UTF-8
    index = CorpusIndex(root, tmp_path / "cache")
    assert index.refresh().indexed == 2
    conn = sqlite3.connect(index.db_path)
    with conn:  # what an index built before the shared rules holds
        conn.execute("DELETE FROM meta WHERE key = 'extraction_rules'")
        conn.execute("DELETE FROM passages WHERE file_id = (SELECT id FROM files WHERE path = 'b.txt')")
        conn.execute("UPDATE files SET skip_reason = 'not_utf8', title = '' WHERE path = 'b.txt'")
    conn.close()
    stats = index.refresh()
    assert (stats.indexed, stats.unchanged, stats.skipped) == (2, 0, {})
    assert [h.location for h in index.search("café", limit_files=5)] == [str(root.resolve() / "b.txt")]
    assert index.refresh().unchanged == 2


def _tiny_pdf(title: str, text: str) -> bytes:
    content = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
        b"/Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        f"<< /Title ({title}) >>".encode(),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


@pytest.mark.skipif(not pdf_supported(), reason="needs the optional pypdf")
async def test_a_pdf_page_and_a_pdf_file_read_the_same(local_server: LocalServer, tmp_path: Path) -> None:
    data = _tiny_pdf("Heat pump field trials", "Heat pumps cut heating costs by a third")
    page = await _fetch(local_server, data, "application/pdf")
    path = tmp_path / "trials.pdf"
    path.write_bytes(data)
    document = read_document(path, path.stat(), max_bytes=len(data))
    assert isinstance(document, Document)
    assert (document.title, document.text) == (page.title, page.text)
    assert page.title == "Heat pump field trials" and "cut heating costs" in page.text
