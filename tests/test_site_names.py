"""The site a source counts under: registrable host or corpus-relative folder, never an invalid name."""

from __future__ import annotations

import pytest

from research_agent.memory.critique.site_names import safe_site, site_name
from research_agent.memory.store.names import valid_folder, valid_hostname, valid_site
from research_agent.record import SourceSummary


def _source(location: str, provider: str = "local", site: str = "") -> SourceSummary:
    return SourceSummary(None, "t", location, site, provider, 4, "", "kept", False)


@pytest.mark.parametrize(
    ("location", "roots", "expected"),
    [
        ("/data/pg/guides/vacuum/a.md", ["/data/pg"], "guides/vacuum"),
        ("/data/pg/a.md", ["/data/pg"], "pg"),  # a file at the top: the corpus folder's name
        ("/data/pg/sub/a.md", ["/data", "/data/pg"], "sub"),  # the innermost corpus holding it
        ("/elsewhere/notes/a.md", ["/data/pg"], "notes"),  # no corpus recorded: its folder's name
        ("/data/my docs/a b/x.md", ["/data"], "my-docs/a-b"),
    ],
)
def test_local_files_count_under_their_corpus_folder(location: str, roots: list[str], expected: str) -> None:
    assert site_name(_source(location), roots) == expected
    assert valid_folder(expected)


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
