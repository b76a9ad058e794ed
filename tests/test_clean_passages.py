"""Issue 43.5: a page's title is kept apart from its text, and no passage carries markdown that would
change a report's structure (a model that echoed "# Title" made a heading of it and emptied the
Executive Summary). One set of rules for corpus files and web pages (research_agent.fetch.extract).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from research_agent.fetch.extract import HTML, MARKDOWN, RST, TEXT, extract
from research_agent.memory.store.names import corpus_id, local_site
from research_agent.search.corpus_index import CorpusIndex
from research_agent.sources import Document
from research_agent.text.passages import split_passages
from tests.support.cli import cli
from tests.support.pipeline import DOCS, QUERY

# A line a report would read as structure: a heading, a rule or a setext underline.
STRUCTURE = re.compile(r"^\s{0,3}(#{1,6}(\s|$)|([-*_=])(\s*\3){2,}\s*$)", re.MULTILINE)

PAGE = """# VACUUM step by step

VACUUM reclaims storage occupied by dead tuples.

## How it works ##

Plain VACUUM marks the space as reusable within the table file.

---

Setext section
--------------

***

VACUUM FULL rewrites the whole table. In C# terms, #1 on the list is a word.
"""


def test_a_markdown_page_that_opens_with_its_title_has_it_only_as_its_title() -> None:
    document = extract(PAGE.encode(), MARKDOWN)
    assert isinstance(document, Document) and document.title == "VACUUM step by step"
    assert document.text.split("\n\n")[0] == "VACUUM reclaims storage occupied by dead tuples."
    assert "VACUUM step by step" not in document.text
    assert not STRUCTURE.search(document.text), document.text
    paragraphs = document.text.split("\n\n")
    assert "How it works" in paragraphs and "Setext section" in paragraphs  # a heading's words stay
    assert "In C# terms, #1 on the list is a word." in document.text  # a "#" that is no heading mark stays


@pytest.mark.parametrize(
    ("kind", "text", "title", "first"),
    [
        (RST, "==========\nOperations\n==========\n\nRoutine work.\n\nSection\n-------\n\nMore.", "Operations",
         "Routine work."),
        (MARKDOWN, "Title\n=====\n\nBody text.", "Title", "Body text."),
        (MARKDOWN, "Intro line.\n\n# Real heading #\n\nBody.", "Real heading", "Intro line."),
        (TEXT, "# Notes\n\nBody of the notes.", "Notes", "Notes"),  # a text file's first line may be a sentence
    ],
)  # fmt: skip
def test_titles_and_structure_in_every_plain_kind(kind: str, text: str, title: str, first: str) -> None:
    document = extract(text.encode(), kind)
    assert isinstance(document, Document) and document.title == title
    assert document.text.split("\n\n")[0] == first and not STRUCTURE.search(document.text), document.text


def test_an_html_page_s_heading_is_not_its_first_paragraph() -> None:
    body = "Heat pumps move heat instead of making it, which is why they beat resistive heaters. " * 3
    html = (f"<html><head><title>Heat pumps - Energy Site</title></head><body><article><h1>Heat pumps</h1>"
            f"<p>{body}</p><h2>Costs</h2><p>{body}</p><pre># not a heading\n---</pre></article></body></html>")  # fmt: skip
    document = extract(html.encode(), HTML)
    assert isinstance(document, Document) and document.title == "Heat pumps - Energy Site"
    assert not document.text.startswith("Heat pumps\n") and document.text.startswith("Heat pumps move heat")
    assert not STRUCTURE.search(document.text), document.text


def test_corpus_passages_of_markdown_pages_that_start_with_a_title_carry_no_structure(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "steps.md").write_text(PAGE, encoding="utf-8")
    for name, (title, text) in DOCS.items():
        (root / name).write_text(f"# {title}\n\n{text}\n\n---\n\n## See also\n\nThe other notes.\n", encoding="utf-8")
    index = CorpusIndex(root, tmp_path / "cache")
    assert index.refresh().indexed == len(DOCS) + 1
    hits = index.search("VACUUM dead tuples reclaim space", limit_files=10, token_budget=100_000)
    assert len(hits) == len(DOCS) + 1
    opening = {title: text[:40] for title, text in DOCS.values()} | {"VACUUM step by step": "VACUUM reclaims storage"}
    assert {hit.title for hit in hits} == set(opening)
    for hit in hits:  # every passage, in the file's order: the first opens with the body, not the title
        assert not STRUCTURE.search(hit.text), hit.text
        assert split_passages(hit.text)[0].startswith(opening[hit.title]), hit.text


def test_a_run_over_markdown_pages_gives_the_writer_clean_passages_and_records_each_file_s_site(
    tmp_path: Path, server
) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "notes").mkdir(parents=True)
    for name, (title, text) in DOCS.items():
        (corpus / "notes" / name).write_text(f"# {title}\n\n{text}\n\n---\n\n## More\n\nSee also.\n", encoding="utf-8")
    reports = tmp_path / "reports"
    proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports), "--no-critique",
               base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    run_id = Path(proc.stdout.strip()).stem
    store = json.loads((reports / "meta" / f"passages-{run_id}.json").read_text(encoding="utf-8"))
    assert store["sources"]
    opening = {title: text[:40] for title, text in DOCS.values()}
    for source in store["sources"]:
        assert not STRUCTURE.search(source["text"]) and source["text"].startswith(opening[source["title"]])
    record = yaml.safe_load((reports / "meta" / f"run-{run_id}.yaml").read_text(encoding="utf-8"))
    # Issue 43.9: a file's site is its corpus's first folder, in the record as in the gate and the docs.
    site = local_site(corpus_id(str(corpus.resolve())), "notes")
    assert {s["site"] for s in record["sources"]} == {site}
    assert record["cited_site_count"] == 1 and record["gate_reason"].endswith("from 1 site(s)")
