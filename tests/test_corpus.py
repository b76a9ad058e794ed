"""The local corpus: indexing, incremental refresh, skips, safe queries, concurrency."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import sqlite3
from pathlib import Path

import pytest

from research_agent.errors import InputError, SearchError
from research_agent.search.base import SearchProvider
from research_agent.search.corpus_files import read_document
from research_agent.search.corpus_index import CorpusIndex, index_path_for
from research_agent.search.corpus_query import fts_query
from research_agent.search.local import LocalSearchProvider
from research_agent.sources import Document
from tests.support.files import write_file

# Bytes that mean nothing in UTF-8 or windows-1252 (its five undefined bytes): mostly U+FFFD.
UNDECODABLE = b"\x81\x8d\x8f\x90\x9d" * 20

VACUUM_PARAS = [
    "PostgreSQL VACUUM reclaims storage occupied by dead tuples left behind by updates and deletes.",
    "Autovacuum runs VACUUM automatically; tuning its thresholds keeps tables from bloating.",
    "VACUUM FULL rewrites the whole table into a new file and returns space to the operating system.",
    "Plain VACUUM marks space reusable inside the table but rarely shrinks the file.",
]


def _bump_mtime(path: Path) -> None:
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    # Many VACUUM passages in one markdown file: each paragraph is long enough to be its own passage.
    long_paras = [" ".join([p] * 12) for p in VACUUM_PARAS]
    write_file(root / "vacuum.md", "# Vacuum in PostgreSQL\n\n" + "\n\n".join(long_paras))
    write_file(root / "notes" / "indexes.txt", "B-tree indexes speed up lookups. " * 10 + "\n\nGIN indexes suit full text search.")
    write_file(
        root / "guide.html",
        "<html><head><title>Replication &amp; WAL guide</title><style>p{color:red}</style></head>"
        "<body><article><h1>Replication</h1><p>Streaming replication ships WAL records to standbys. "
        "A standby replays the write-ahead log continuously.</p>"
        "<p>Logical replication publishes table changes; VACUUM on the primary is independent.</p>"
        "</article></body></html>",
    )
    write_file(root / "ops.rst", "Operations\n==========\n\nCheckpoints flush dirty pages to disk.\n")
    write_file(root / "image.png", b"\x89PNG not indexable suffix")
    return root


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def _db_rows(index: CorpusIndex) -> list[tuple[str, str | None]]:
    conn = sqlite3.connect(index.db_path)
    try:
        return sorted(conn.execute("SELECT path, skip_reason FROM files"))
    finally:
        conn.close()


# ---------------------------------------------------------------- indexing and search


def test_indexes_md_txt_html_rst_with_titles(corpus: Path, cache: Path) -> None:
    index = CorpusIndex(corpus, cache)
    stats = index.refresh()
    assert (stats.indexed, stats.unchanged, stats.removed) == (4, 0, 0)
    assert stats.documents == 4 and stats.passages >= 6
    assert stats.skipped == {}

    titles = {Path(h.location).name: h.title for h in index.search("vacuum replication checkpoints indexes", limit_files=10)}
    assert titles == {
        "vacuum.md": "Vacuum in PostgreSQL",
        "guide.html": "Replication & WAL guide",
        "ops.rst": "Operations",
        "indexes.txt": "indexes",
    }


def test_html_text_excludes_markup_and_styles(corpus: Path, cache: Path) -> None:
    index = CorpusIndex(corpus, cache)
    index.refresh()
    [hit] = index.search("standby replays", limit_files=5)
    assert hit.location == str((corpus / "guide.html").resolve())
    assert "write-ahead log" in hit.text
    assert "<p>" not in hit.text and "color:red" not in hit.text


def test_html_falls_back_to_tag_strip_when_trafilatura_finds_nothing(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "site"
    # trafilatura drops footers as boilerplate, so it extracts nothing from this page.
    write_file(
        root / "footer.html",
        "<html><head><title>Footer only</title><script>var hidden = 'scripted';</script></head>"
        "<body><footer>kiwi orchard &amp; co</footer></body></html>",
    )
    index = CorpusIndex(root, cache)
    assert index.refresh().documents == 1
    [hit] = index.search("kiwi orchard", limit_files=5)
    assert hit.title == "Footer only"
    assert hit.text == "kiwi orchard & co"
    assert index.search("scripted hidden", limit_files=5) == []


def test_very_large_html_page_is_tag_stripped(tmp_path: Path, cache: Path) -> None:
    from research_agent.fetch import html_text

    root = tmp_path / "big"
    rows = "".join(f"<li><a href='#{i}'>entry{i} pagination</a></li>" for i in range(html_text.TRAFILATURA_MAX_CHARS // 40))
    write_file(root / "contents.html", f"<html><head><title>Contents</title></head><body><ul>{rows}</ul></body></html>")
    index = CorpusIndex(root, cache)
    stats = index.refresh()
    assert stats.documents == 1 and stats.passages > 100
    [hit] = index.search("entry12345", limit_files=5)
    assert hit.title == "Contents" and "entry12345 pagination" in hit.text


def test_one_file_is_one_hit_with_best_passages_in_order(corpus: Path, cache: Path) -> None:
    index = CorpusIndex(corpus, cache)
    index.refresh()
    hits = index.search("vacuum", limit_files=10, token_budget=10_000)
    locations = [h.location for h in hits]
    assert len(locations) == len(set(locations))
    assert locations[0] == str((corpus / "vacuum.md").resolve())
    top = hits[0]
    assert top.provider == "local"
    assert len(top.snippet) <= 305 and "VACUUM" in top.snippet
    # Every matching passage of the file fits this budget, in document order.
    positions = [top.text.find(p.split(";")[0].split(" and ")[0]) for p in VACUUM_PARAS]
    assert all(pos >= 0 for pos in positions)
    assert positions == sorted(positions)


def test_token_budget_limits_passages(corpus: Path, cache: Path) -> None:
    index = CorpusIndex(corpus, cache)
    index.refresh()
    [small] = index.search("vacuum full rewrites", limit_files=1, token_budget=300)
    [large] = index.search("vacuum full rewrites", limit_files=1, token_budget=5000)
    assert len(small.text) // 4 <= 300
    assert len(large.text) > len(small.text)
    assert "VACUUM FULL rewrites" in small.text  # the best passage comes first in the budget


def test_tiny_budget_trims_the_best_passage(corpus: Path, cache: Path) -> None:
    index = CorpusIndex(corpus, cache)
    index.refresh()
    [hit] = index.search("vacuum full rewrites", limit_files=1, token_budget=10)
    assert 0 < len(hit.text.split()) <= 8


@pytest.mark.parametrize(
    "query",
    ['AND OR NOT "(', "*", "NEAR(", "NEAR(vacuum, 2)", '"unbalanced', "vacuum*", "col:vacuum", "^vacuum", "-", "   ", ""],
)
def test_fts_hostile_queries_never_raise(corpus: Path, cache: Path, query: str) -> None:
    index = CorpusIndex(corpus, cache)
    index.refresh()
    hits = index.search(query, limit_files=5)
    assert isinstance(hits, list)
    if "vacuum" in query:
        assert hits and hits[0].location.endswith("vacuum.md")


def test_fts_query_quotes_terms() -> None:
    assert fts_query('AND OR NOT "(') == '"not"'
    assert fts_query("vacuum NEAR(bloat)") == '"vacuum" OR "near" OR "bloat"'
    assert fts_query("*") == ""
    assert fts_query("the is") == '"the" OR "is"'  # stop words only: keep them rather than nothing


def test_no_match_and_empty_query_give_nothing(corpus: Path, cache: Path) -> None:
    index = CorpusIndex(corpus, cache)
    index.refresh()
    assert index.search("zyzzyva", limit_files=5) == []
    assert index.search("?!", limit_files=5) == []


def test_index_lives_in_cache_outside_corpus(corpus: Path, cache: Path) -> None:
    before = sorted(p.relative_to(corpus) for p in corpus.rglob("*"))
    index = CorpusIndex(corpus, cache)
    index.refresh()
    assert index.db_path == index_path_for(corpus, cache)
    assert index.db_path.parent == cache / "corpus"
    assert index.db_path.is_file() and not index.db_path.is_relative_to(corpus)
    assert sorted(p.relative_to(corpus) for p in corpus.rglob("*")) == before
    # The same folder named another way maps to the same index.
    assert index_path_for(corpus / "notes" / "..", cache) == index.db_path


# ---------------------------------------------------------------- incremental refresh


def test_second_refresh_does_nothing(corpus: Path, cache: Path) -> None:
    index = CorpusIndex(corpus, cache)
    index.refresh()
    stats = index.refresh()
    assert (stats.indexed, stats.unchanged, stats.removed) == (0, 4, 0)


def test_modified_file_alone_is_reindexed(corpus: Path, cache: Path) -> None:
    index = CorpusIndex(corpus, cache)
    index.refresh()
    write_file(corpus / "ops.rst", "Operations\n==========\n\nThe bgwriter trickles dirty buffers out.\n")
    _bump_mtime(corpus / "ops.rst")
    stats = index.refresh()
    assert (stats.indexed, stats.unchanged, stats.removed) == (1, 3, 0)
    assert [Path(h.location).name for h in index.search("bgwriter", limit_files=5)] == ["ops.rst"]
    assert index.search("checkpoints", limit_files=5) == []  # old passages are gone


def test_deleted_file_is_removed_and_new_file_added(corpus: Path, cache: Path) -> None:
    index = CorpusIndex(corpus, cache)
    index.refresh()
    (corpus / "guide.html").unlink()
    write_file(corpus / "new.md", "# New\n\nSequences hand out unique numbers.")
    stats = index.refresh()
    assert (stats.indexed, stats.unchanged, stats.removed) == (1, 3, 1)
    assert stats.documents == 4
    assert index.search("replication", limit_files=5) == []
    assert [h.title for h in index.search("sequences", limit_files=5)] == ["New"]


# ---------------------------------------------------------------- skipped files


def test_bad_files_are_skipped_and_counted(corpus: Path, cache: Path) -> None:
    write_file(corpus / "binary.txt", b"header\x00\x01\x02 more bytes")
    write_file(corpus / "huge.md", "# Huge\n\n" + "word " * 2000)
    write_file(corpus / "latin1.txt", "caf\xe9 cr\xe8me".encode("latin-1"))  # read as windows-1252, like a web page
    write_file(corpus / "undecodable.txt", UNDECODABLE)
    write_file(corpus / "empty.md", "   \n\n")
    outside = write_file(corpus.parent / "outside.md", "# Outside\n\nsecret outside text")
    (corpus / "link.md").symlink_to(outside)
    (corpus / "inner-link.md").symlink_to(corpus / "vacuum.md")
    index = CorpusIndex(corpus, cache, max_file_bytes=5000)
    stats = index.refresh()
    assert stats.indexed == 5
    assert stats.skipped == {
        "bad_encoding": 1,
        "binary": 1,
        "empty": 1,
        "symlink_duplicate": 1,
        "symlink_outside": 1,
        "too_large": 1,
    }
    assert dict(stats.skipped_files) == {
        "binary.txt": "binary",
        "empty.md": "empty",
        "undecodable.txt": "bad_encoding",
        "inner-link.md": "symlink_duplicate",
        "link.md": "symlink_outside",
        "huge.md": "too_large",
    }
    assert index.search("secret outside", limit_files=5) == []
    assert [h.text for h in index.search("crème", limit_files=5)] == ["café crème"]
    # Skips are reported again on the next refresh, without the files being re-indexed.
    again = index.refresh()
    assert again.skipped == stats.skipped and again.indexed == 0 and again.unchanged == 5


def test_fixed_file_leaves_the_skipped_list(corpus: Path, cache: Path) -> None:
    bad = write_file(corpus / "broken.txt", UNDECODABLE)
    index = CorpusIndex(corpus, cache)
    assert index.refresh().skipped == {"bad_encoding": 1}
    write_file(bad, "café au lait")
    _bump_mtime(bad)
    stats = index.refresh()
    assert stats.skipped == {} and stats.indexed == 1
    assert [Path(h.location).name for h in index.search("café", limit_files=5)] == ["broken.txt"]


def test_utf8_bom_and_declared_html_charset(corpus: Path, cache: Path) -> None:
    write_file(corpus / "bom.txt", "\ufeffbom prefixed durable text".encode())
    write_file(
        corpus / "legacy.html",
        '<html><head><meta charset="iso-8859-1"><title>Cr\xe8me</title></head><body><p>cr\xe8me br\xfbl\xe9e '
        "is a custard dessert with caramel</p></body></html>".encode("latin-1"),
    )
    index = CorpusIndex(corpus, cache)
    stats = index.refresh()
    assert stats.skipped == {}
    [bom] = index.search("durable", limit_files=5)
    assert bom.text.startswith("bom prefixed")
    [legacy] = index.search("custard", limit_files=5)
    assert legacy.title == "Crème" and "crème brûlée" in legacy.text


def test_pdf_without_parser_is_skipped_with_reason(corpus: Path, cache: Path) -> None:
    try:
        import pypdf  # noqa: F401
    except ImportError:
        write_file(corpus / "paper.pdf", b"%PDF-1.4 fake")
        stats = CorpusIndex(corpus, cache).refresh()
        assert stats.skipped == {"pdf_unsupported": 1}
    else:
        pytest.skip("pypdf is installed; the skip path is not reachable")


def test_file_changed_after_scan_is_skipped(tmp_path: Path) -> None:
    path = write_file(tmp_path / "a.md", "# A\n\nfirst version")
    scanned = path.stat()
    write_file(path, "# A\n\nsecond, longer version of the text")
    assert read_document(path, scanned, max_bytes=10_000) == "changed_during_read"
    assert read_document(path, path.stat(), max_bytes=10_000) == Document(
        title="A", text="second, longer version of the text"
    )


def test_unreadable_file_is_skipped(corpus: Path, cache: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads files regardless of permissions")
    locked = write_file(corpus / "locked.md", "# Locked\n\nno access")
    locked.chmod(0)
    try:
        stats = CorpusIndex(corpus, cache).refresh()
    finally:
        locked.chmod(0o644)
    assert stats.skipped == {"unreadable": 1}


# ---------------------------------------------------------------- bad corpora and bad indexes


def test_prepare_rejects_missing_file_and_empty_corpus(tmp_path: Path, cache: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        LocalSearchProvider([tmp_path / "nope"], cache, token_budget=100).prepare()
    a_file = write_file(tmp_path / "file.md", "# x")
    with pytest.raises(InputError, match="is not a folder"):
        LocalSearchProvider([a_file], cache, token_budget=100).prepare()
    empty = tmp_path / "empty"
    write_file(empty / "picture.png", b"\x89PNG")
    write_file(empty / "blob.txt", b"\x00\x00")
    with pytest.raises(InputError, match=r"holds no indexable files \(.*\.md.*\); skipped: 1 binary"):
        LocalSearchProvider([empty], cache, token_budget=100).prepare()


def test_missing_folder_error_comes_before_any_indexing(corpus: Path, tmp_path: Path, cache: Path) -> None:
    provider = LocalSearchProvider([corpus, tmp_path / "missing"], cache, token_budget=100)
    with pytest.raises(InputError, match="missing does not exist"):
        provider.prepare()
    assert not CorpusIndex(corpus, cache).exists()


@pytest.mark.parametrize("damage", ["garbage", "truncate"])
def test_corrupt_index_is_rebuilt_with_warning(
    corpus: Path, cache: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    index = CorpusIndex(corpus, cache)
    index.refresh()
    # Fold the WAL into the main file so damaging it damages the data.
    conn = sqlite3.connect(index.db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    if damage == "garbage":
        index.db_path.write_bytes(b"this is not a database" * 100)
    else:
        data = index.db_path.read_bytes()
        index.db_path.write_bytes(data[: len(data) // 2])
    with caplog.at_level(logging.WARNING, logger="research_agent.search.corpus_index"):
        stats = index.refresh()
    assert stats.rebuilt and stats.indexed == 4 and stats.documents == 4
    assert any("rebuilding" in r.getMessage() for r in caplog.records)
    assert index.search("vacuum", limit_files=1)[0].title == "Vacuum in PostgreSQL"


# ---------------------------------------------------------------- the provider


async def test_provider_merges_corpora_by_score(tmp_path: Path, cache: Path) -> None:
    first = tmp_path / "one"
    second = tmp_path / "two"
    write_file(first / "a.md", "# A\n\nvacuum vacuum vacuum reclaims dead tuples")
    write_file(first / "b.md", "# B\n\nunrelated text about sequences")
    write_file(second / "c.md", "# C\n\nvacuum is mentioned once among many other words of a long sentence here")
    write_file(second / "d.md", "# D\n\nanother unrelated document about views")
    provider = LocalSearchProvider([first, second], cache, token_budget=200)
    assert isinstance(provider, SearchProvider) and provider.name == "local"
    stats = provider.prepare()
    assert [s.documents for s in stats] == [2, 2]
    hits = await provider.search("vacuum", max_results=5)
    assert [h.title for h in hits] == ["A", "C"]
    assert await provider.search("vacuum", max_results=1) == hits[:1]
    assert await provider.search('NEAR( "', max_results=5) == []


def test_provider_indexes_a_folder_named_twice_once(corpus: Path, cache: Path) -> None:
    provider = LocalSearchProvider([corpus, corpus / "notes" / ".."], cache, token_budget=100)
    assert len(provider.indexes) == 1
    assert [s.documents for s in provider.prepare()] == [4]


async def test_provider_answers_from_index_after_folder_vanishes(corpus: Path, cache: Path, caplog) -> None:
    provider = LocalSearchProvider([corpus], cache, token_budget=200)
    provider.prepare()
    for path in sorted(corpus.rglob("*"), key=lambda p: -len(p.parts)):
        path.unlink() if not path.is_dir() or path.is_symlink() else path.rmdir()
    corpus.rmdir()
    with caplog.at_level(logging.WARNING):
        hits = await provider.search("vacuum", max_results=3)
    assert hits and hits[0].title == "Vacuum in PostgreSQL"
    assert any("is gone" in r.getMessage() for r in caplog.records)


async def test_provider_with_broken_index_returns_nothing(corpus: Path, cache: Path, caplog) -> None:
    provider = LocalSearchProvider([corpus], cache, token_budget=200)
    provider.prepare()
    index = provider.indexes[0]
    for suffix in ("-wal", "-shm"):
        Path(f"{index.db_path}{suffix}").unlink(missing_ok=True)
    index.db_path.write_bytes(b"garbage" * 1000)
    with caplog.at_level(logging.WARNING):
        assert await provider.search("vacuum", max_results=3) == []
    assert any("local search" in r.getMessage() for r in caplog.records)
    with pytest.raises(SearchError, match="cannot be read .* refresh it with: research-agent corpus index"):
        index.search("vacuum")
    # The next refresh (as before any run) rebuilds it.
    assert provider.prepare()[0].rebuilt
    assert (await provider.search("vacuum", max_results=3))[0].title == "Vacuum in PostgreSQL"


async def test_provider_searches_run_concurrently_in_threads(corpus: Path, cache: Path) -> None:
    provider = LocalSearchProvider([corpus], cache, token_budget=200)
    provider.prepare()
    queries = ["vacuum", "replication", "indexes", "checkpoints"] * 5
    results = await asyncio.gather(*(provider.search(q, max_results=2) for q in queries))
    assert all(r for r in results)
    assert {Path(r[0].location).name for r in results} == {"vacuum.md", "guide.html", "indexes.txt", "ops.rst"}


# ---------------------------------------------------------------- eight processes at once


def _refresh_in_process(root: str, cache: str, barrier, results) -> None:
    barrier.wait()
    stats = CorpusIndex(Path(root), Path(cache)).refresh()
    results.put((stats.indexed, stats.unchanged, stats.documents, stats.passages))


def test_eight_processes_build_the_index_once(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "many"
    for i in range(60):
        write_file(root / f"doc{i:02}.md", f"# Doc {i}\n\n" + f"topic{i} shared words about storage. " * 40)
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(8)
    results = ctx.Queue()
    procs = [ctx.Process(target=_refresh_in_process, args=(str(root), str(cache), barrier, results)) for _ in range(8)]
    for proc in procs:
        proc.start()
    outcomes = [results.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    indexed = sorted(o[0] for o in outcomes)
    assert indexed == [0] * 7 + [60]  # built once; the others found nothing to do
    assert all(o[2] == 60 for o in outcomes)
    assert len({o[3] for o in outcomes}) == 1

    index = CorpusIndex(root, cache)
    rows = _db_rows(index)
    assert [r[0] for r in rows] == [f"doc{i:02}.md" for i in range(60)]
    conn = sqlite3.connect(index.db_path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        per_file = conn.execute("SELECT count(DISTINCT file_id), count(*) FROM passages").fetchone()
        orphans = conn.execute("SELECT count(*) FROM passages WHERE file_id NOT IN (SELECT id FROM files)").fetchone()
    finally:
        conn.close()
    assert per_file[0] == 60 and orphans[0] == 0
    for i in (0, 31, 59):
        hits = index.search(f"topic{i}", limit_files=5)
        assert [Path(h.location).name for h in hits] == [f"doc{i:02}.md"]


def test_hidden_entries_and_linked_folders_are_not_indexed(corpus: Path, cache: Path, tmp_path: Path) -> None:
    write_file(corpus / ".hidden.md", "# Hidden\n\nzebra hidden note")
    write_file(corpus / ".git" / "notes.md", "# Git\n\nzebra in git")
    elsewhere = tmp_path / "elsewhere"
    write_file(elsewhere / "far.md", "# Far\n\nzebra far away")
    (corpus / "linked-out").symlink_to(elsewhere, target_is_directory=True)
    (corpus / "linked-in").symlink_to(corpus / "notes", target_is_directory=True)
    stats = CorpusIndex(corpus, cache).refresh()
    assert stats.documents == 4
    assert stats.skipped == {"symlink_outside": 1}
    assert dict(stats.skipped_files) == {"linked-out": "symlink_outside"}
    assert CorpusIndex(corpus, cache).search("zebra", limit_files=5) == []


def test_excluded_folders_such_as_the_reports_folder_are_not_indexed(tmp_path):
    root = tmp_path / "project"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "a.md").write_text("# Vacuum\n\nVACUUM reclaims space from dead tuples.\n")
    (root / "reports").mkdir()
    (root / "reports" / "old-report.md").write_text("# Old report\n\nVACUUM reclaims space [1].\n")
    index = CorpusIndex(root, tmp_path / "cache", exclude=[root / "reports"])
    index.refresh()
    hits = index.search("vacuum reclaims space", limit_files=10, token_budget=200)
    assert [Path(h.location).name for h in hits] == ["a.md"]
