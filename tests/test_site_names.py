"""The site a source counts under: registrable host, or the first folder below its corpus root under
the corpus's id; never an invalid name."""

from __future__ import annotations

import pytest

from research_agent.memory.critique.site_names import safe_site, site_name
from research_agent.memory.store.names import (
    corpus_id,
    is_corpus_id,
    site_corpus,
    valid_folder,
    valid_hostname,
    valid_site,
)
from research_agent.record import SourceSummary


def _source(location: str, provider: str = "local", site: str = "") -> SourceSummary:
    return SourceSummary(None, "t", location, site, provider, 4, "", "kept", False)


@pytest.mark.parametrize(
    ("location", "roots", "corpus", "folder"),
    [
        ("/data/pg/guides/vacuum/a.md", ["/data/pg"], "/data/pg", "guides"),  # the first level only
        ("/data/pg/a.md", ["/data/pg"], "/data/pg", "pg"),  # a file at the top: the corpus folder's name
        ("/data/pg/sub/a.md", ["/data", "/data/pg"], "/data/pg", "sub"),  # the innermost corpus holding it
        ("/data/my docs/A B/x.md", ["/data"], "/data", "my-docs"),  # lower-cased, made safe
    ],
)
def test_local_files_count_under_their_first_folder_and_corpus(
    location: str, roots: list[str], corpus: str, folder: str
) -> None:
    expected = f"{corpus_id(corpus)}/{folder}"
    assert site_name(_source(location), roots) == expected
    assert valid_folder(expected) and site_corpus(expected) == corpus_id(corpus)


def test_a_file_whose_corpus_is_unknown_counts_under_its_folder_name_and_names_no_corpus() -> None:
    assert site_name(_source("/elsewhere/notes/a.md"), ["/data/pg"]) == "notes"
    assert site_corpus("notes") is None and site_corpus("guides/vacuum") is None


def test_two_corpora_with_the_same_folder_name_have_different_ids(tmp_path) -> None:
    first, second = tmp_path / "a" / "html", tmp_path / "b" / "html"
    assert corpus_id(first).startswith("html-") and corpus_id(second).startswith("html-")
    assert corpus_id(first) != corpus_id(second)
    assert is_corpus_id(corpus_id(first))


def test_web_pages_count_under_their_registrable_host() -> None:
    assert site_name(_source("https://docs.python.org/3/", "ddgs", "python.org")) == "python.org"
    assert site_name(_source("https://blog.Example.com/x", "ddgs")) == "example.com"
    assert valid_hostname(site_name(_source("https://news.bbc.co.uk/a", "ddgs", "bbc.co.uk")))


@pytest.mark.parametrize(
    "name",
    [
        "中文/笔记",
        "-leading",
        ".hidden/x",
        "a" * 80,
        "x/" + "b" * 70,
        "../../etc",
        "[::1]",
        "a b/c d",
        "",
        "/",
        "..",
    ],
)
def test_a_name_that_would_fail_validation_gets_a_safe_form(name: str) -> None:
    safe = safe_site(name)
    assert valid_site(safe) and safe[0].isalnum() and safe.isascii() and len(safe) <= 60
    assert safe_site(name) == safe  # the same name always gets the same form
