"""A clean local corpus: Sphinx's build files skipped, each document indexed once (its HTML copy),
and the user's exclusions (.research-ignore, --exclude) at index and at query time."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from research_agent.cli.run_options import settings_overrides
from research_agent.config import load_settings
from research_agent.errors import InputError
from research_agent.fetch.extract import HTML, extract
from research_agent.search.corpus_index import CorpusIndex
from research_agent.search.corpus_rules import CorpusRules, copy_key, stem_copies
from research_agent.search.local import LocalSearchProvider

PAGE = "<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p></main></body></html>"
OS_TEXT = "The os module offers portable ways of using operating system dependent functionality such as paths."


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def sphinx_build(root: Path) -> None:
    write(root / "index.html", PAGE.format(title="Python documentation", text="Welcome to the documentation."))
    write(root / "library" / "os.html", PAGE.format(title="os", text=OS_TEXT))
    write(root / "library" / "os.path.html", PAGE.format(title="os.path", text="Common pathname manipulations."))
    write(root / "_sources" / "library" / "os.rst.txt", f"**\n{OS_TEXT}\n")
    write(root / "_sources" / "library" / "os.path.rst.txt", "*******\nCommon pathname manipulations.\n")
    write(root / "_static" / "copybutton.md", "copy button help")
    for name in ("genindex.html", "genindex-E.html", "genindex-all.html", "search.html", "py-modindex.html"):
        write(root / name, PAGE.format(title="Index", text=f"index page {name} listing os and os.path"))


def refresh(root: Path, cache: Path, **kw):
    return CorpusIndex(root, cache).refresh(**kw)


def indexed(root: Path, cache: Path) -> list[str]:
    with sqlite3.connect(CorpusIndex(root, cache).db_path) as conn:
        return sorted(p for (p,) in conn.execute("SELECT path FROM files WHERE skip_reason IS NULL"))


def test_sphinx_build_files_are_skipped_and_counted_as_generated(tmp_path: Path) -> None:
    root, cache = tmp_path / "html", tmp_path / "cache"
    sphinx_build(root)
    stats = refresh(root, cache)
    assert indexed(root, cache) == ["index.html", "library/os.html", "library/os.path.html"]
    assert stats.skipped == {"generated": 8}
    assert ("_sources/library/os.rst.txt", "generated") in stats.skipped_files


def test_a_text_copy_beside_its_html_page_is_indexed_once_as_the_html(tmp_path: Path) -> None:
    root, cache = tmp_path / "html", tmp_path / "cache"
    sphinx_build(root)
    write(root / ".research-ignore", "# bring Sphinx's text copies back: they are still copies\n!_sources/\n")
    write(root / "notes" / "plan.html", PAGE.format(title="Plan", text="The plan in HTML."))
    write(root / "notes" / "plan.txt", "The plan, as text.")
    stats = refresh(root, cache)
    assert indexed(root, cache) == ["index.html", "library/os.html", "library/os.path.html", "notes/plan.html"]
    assert stats.skipped["duplicate_copy"] == 3
    assert {"_sources/library/os.rst.txt", "_sources/library/os.path.rst.txt", "notes/plan.txt"} == {
        rel for rel, why in stats.skipped_files if why == "duplicate_copy"}  # fmt: skip
    assert copy_key("_sources/library/os.path.rst.txt") == copy_key("library/os.path.html")[:1] + (False,)
    assert stem_copies(["a/x.md", "a/x.htm", "b/x.txt"]) == {"a/x.md"}


def test_files_with_the_same_text_are_indexed_once_and_the_copy_comes_back_when_its_twin_goes(tmp_path: Path) -> None:
    root, cache = tmp_path / "docs", tmp_path / "cache"
    page = PAGE.format(title="Vacuum", text="VACUUM reclaims storage occupied by dead tuples in PostgreSQL tables.")
    write(root / "b" / "notes.txt", "Unrelated notes about autovacuum thresholds.")
    write(root / "guide.md", "VACUUM reclaims storage.\n\nIt runs automatically.")
    write(root / "z" / "guide-copy.txt", "VACUUM reclaims storage.\n\nIt runs automatically.")
    first = refresh(root, cache)
    assert indexed(root, cache) == ["b/notes.txt", "guide.md"]
    assert first.skipped == {"duplicate_copy": 1} and first.indexed == 2 and first.documents == 2
    again = refresh(root, cache)
    assert again.skipped == {"duplicate_copy": 1} and again.indexed == 0 and again.unchanged == 2

    (root / "guide.md").unlink()
    after = refresh(root, cache)
    assert indexed(root, cache) == ["b/notes.txt", "z/guide-copy.txt"] and after.skipped == {}

    extracted = extract(page.encode(), HTML)  # a text file holding exactly the page's text: the HTML wins
    write(root / "z" / "guide-copy.txt", extracted.text)
    write(root / "deep" / "er" / "vacuum.html", page)
    refresh(root, cache)
    assert indexed(root, cache) == ["b/notes.txt", "deep/er/vacuum.html"]


def test_an_index_built_before_copies_were_found_is_upgraded_in_place(tmp_path: Path) -> None:
    root, cache = tmp_path / "docs", tmp_path / "cache"
    write(root / "a.md", "Same words here.")
    refresh(root, cache)
    with sqlite3.connect(CorpusIndex(root, cache).db_path) as conn:
        conn.execute("DROP INDEX files_text_sha")
        conn.execute("ALTER TABLE files DROP COLUMN text_sha")
        conn.execute("INSERT INTO files (path, mtime_ns, size, title) VALUES ('b.md', 0, 0, 'b')")
    write(root / "b.md", "Same words here.")
    stats = refresh(root, cache)
    assert indexed(root, cache) == ["a.md"] and stats.skipped == {"duplicate_copy": 1} and not stats.rebuilt


def test_research_ignore_and_exclude_keep_files_out_and_the_index_remembers_exclude(tmp_path: Path) -> None:
    root, cache = tmp_path / "docs", tmp_path / "cache"
    write(root / "guide.md", "VACUUM guide")
    write(root / "drafts" / "wip.md", "VACUUM draft")
    write(root / "old" / "2019.md", "VACUUM in 2019")
    write(root / ".research-ignore", "old/\n")
    stats = refresh(root, cache, exclude=["drafts/"])
    assert indexed(root, cache) == ["guide.md"] and stats.skipped == {"excluded": 2}
    assert refresh(root, cache).skipped == {"excluded": 2}, "a later refresh (a run's) keeps --exclude"
    assert refresh(root, cache, exclude=[]).skipped == {"excluded": 1}, "corpus index without --exclude clears it"
    assert indexed(root, cache) == ["drafts/wip.md", "guide.md"]
    with pytest.raises(InputError, match=r"--exclude: Invalid git pattern: '!'"):
        refresh(root, cache, exclude=["!"])
    write(root / ".research-ignore", "\\\n")
    with pytest.raises(InputError, match=r"\.research-ignore: Invalid git pattern"):
        refresh(root, cache)


def test_exclude_on_a_run_filters_the_cached_index_at_query_time_without_reindexing(tmp_path: Path) -> None:
    root, cache = tmp_path / "docs", tmp_path / "cache"
    write(root / "guide.md", "VACUUM reclaims space.")
    write(root / "drafts" / "wip.md", "VACUUM reclaims space, a draft.")
    refresh(root, cache)
    provider = LocalSearchProvider([root], cache, token_budget=100, query_exclude=["drafts/"])
    [stats] = provider.prepare()
    assert (stats.indexed, stats.unchanged, stats.skipped) == (0, 2, {}), "nothing re-indexed"
    hits = asyncio.run(provider.search("vacuum reclaims", max_results=5))
    assert [Path(h.location).name for h in hits] == ["guide.md"]
    assert indexed(root, cache) == ["drafts/wip.md", "guide.md"], "the index itself is untouched"
    with pytest.raises(InputError, match="--exclude"):
        LocalSearchProvider([root], cache, token_budget=100, query_exclude=["!"])


def test_run_s_exclude_option_becomes_the_corpus_exclude_setting(tmp_path: Path) -> None:
    overrides = settings_overrides({"corpus": [tmp_path], "exclude": ["drafts/", "*.PDF"]})
    settings = load_settings(overrides, env={}, config_file=tmp_path / "none.toml")
    assert settings.corpus_exclude == ("drafts/", "*.PDF"), "patterns keep their case"
    assert CorpusRules(("drafts/",)).user_excludes("drafts/x.md") and not CorpusRules().user_excludes("x.md")
