"""``research-agent corpus index|search``, driven through the sub-app with CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from research_agent.cli import corpus as cli_corpus
from research_agent.search.corpus_index import index_path_for


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "vacuum.md").write_text(
        "# Vacuum\n\nVACUUM reclaims storage held by dead tuples.\n\nVACUUM FULL rewrites the table.\n",
        encoding="utf-8",
    )
    (root / "wal.html").write_text(
        "<html><head><title>WAL</title></head><body><p>The write-ahead log makes commits durable.</p></body></html>",
        encoding="utf-8",
    )
    (root / "blob.txt").write_bytes(b"\x00\x01binary")
    return root


@pytest.fixture
def runner(tmp_path: Path) -> CliRunner:
    return CliRunner()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "RESEARCH_AGENT_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
    }


def test_index_prints_summary_and_uses_cache_dir(runner: CliRunner, env, corpus: Path, tmp_path: Path) -> None:
    result = runner.invoke(cli_corpus.app, ["index", str(corpus)], env=env)
    assert result.exit_code == 0, result.output
    assert "documents" in result.stdout and "1 binary" in result.stdout
    assert index_path_for(corpus, tmp_path / "cache").is_file()
    assert str(corpus.resolve()) in result.stdout.splitlines(), "the folder on one line, never wrapped at 22"

    again = runner.invoke(cli_corpus.app, ["index", str(corpus), "--show-skipped"], env=env)
    assert again.exit_code == 0
    assert "blob.txt: binary" in again.stdout


def test_index_cache_dir_option_wins(runner: CliRunner, env, corpus: Path, tmp_path: Path) -> None:
    result = runner.invoke(cli_corpus.app, ["index", str(corpus), "--cache-dir", str(tmp_path / "elsewhere")], env=env)
    assert result.exit_code == 0, result.output
    assert index_path_for(corpus, tmp_path / "elsewhere").is_file()
    assert not (tmp_path / "cache").exists()


def test_index_missing_folder_is_one_line_error(runner: CliRunner, env, corpus: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    result = runner.invoke(cli_corpus.app, ["index", str(corpus), str(missing)], env=env)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: corpus folder {missing} does not exist"
    assert result.stdout == ""


def test_index_empty_folder_is_an_error(runner: CliRunner, env, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(cli_corpus.app, ["index", str(empty)], env=env)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: corpus folder") and "holds no indexable files" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_search_json_lists_ranked_files(runner: CliRunner, env, corpus: Path) -> None:
    result = runner.invoke(cli_corpus.app, ["search", "vacuum durable", "--corpus", str(corpus), "--json"], env=env)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [d["rank"] for d in data] == [1, 2]
    assert {d["title"] for d in data} == {"Vacuum", "WAL"}
    assert {d["path"] for d in data} == {str((corpus / "vacuum.md").resolve()), str((corpus / "wal.html").resolve())}
    assert all(d["snippet"] and d["text"] for d in data)


def test_search_text_output_and_limit(runner: CliRunner, env, corpus: Path) -> None:
    result = runner.invoke(cli_corpus.app, ["search", "vacuum", "--corpus", str(corpus), "--limit", "1"], env=env)
    assert result.exit_code == 0, result.output
    assert "1. Vacuum" in result.stdout
    assert str((corpus / "vacuum.md").resolve()) in result.stdout
    assert "dead tuples" in result.stdout


def test_search_two_corpora(runner: CliRunner, env, corpus: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "autovac.txt").write_text("autovacuum launches vacuum workers", encoding="utf-8")
    args = ["search", "vacuum", "--corpus", str(corpus), "--corpus", str(other), "--json"]
    result = runner.invoke(cli_corpus.app, args, env=env)
    assert result.exit_code == 0, result.output
    names = {Path(d["path"]).name for d in json.loads(result.stdout)}
    assert names == {"vacuum.md", "autovac.txt"}


@pytest.mark.parametrize("query", ['AND OR NOT "(', "NEAR(", "*"])
def test_search_hostile_query_does_not_crash(runner: CliRunner, env, corpus: Path, query: str) -> None:
    result = runner.invoke(cli_corpus.app, ["search", query, "--corpus", str(corpus), "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert isinstance(json.loads(result.stdout), list)


def test_search_no_match_and_empty_query(runner: CliRunner, env, corpus: Path) -> None:
    result = runner.invoke(cli_corpus.app, ["search", "zyzzyva", "--corpus", str(corpus)], env=env)
    assert result.exit_code == 0 and "no matches" in result.stdout
    empty = runner.invoke(cli_corpus.app, ["search", "   ", "--corpus", str(corpus)], env=env)
    assert empty.exit_code == 2 and empty.stderr.strip() == "error: the search query is empty"


def test_search_missing_corpus_is_one_line_error(runner: CliRunner, env, tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    result = runner.invoke(cli_corpus.app, ["search", "vacuum", "--corpus", str(missing)], env=env)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: corpus folder {missing} does not exist"


def test_index_exclude_counts_what_it_kept_out_and_search_can_filter(
    runner: CliRunner, env, corpus: Path, tmp_path: Path
) -> None:
    (corpus / "drafts").mkdir()
    (corpus / "drafts" / "wip.md").write_text("# Draft\n\nVACUUM drafts and more VACUUM.\n", encoding="utf-8")
    result = runner.invoke(cli_corpus.app, ["index", str(corpus), "--exclude", "drafts/"], env=env)
    assert result.exit_code == 0, result.output
    assert "1 binary, 1 excluded" in " ".join(result.stdout.split())
    found = runner.invoke(cli_corpus.app, ["search", "vacuum", "--corpus", str(corpus), "--json"], env=env)
    assert not any("drafts" in hit["path"] for hit in json.loads(found.output)), "the index remembers --exclude"
    runner.invoke(cli_corpus.app, ["index", str(corpus)], env=env)  # without --exclude: back in the index
    found = runner.invoke(cli_corpus.app, ["search", "drafts", "--corpus", str(corpus), "--json"], env=env)
    assert any("drafts" in hit["path"] for hit in json.loads(found.output))
    filtered = runner.invoke(cli_corpus.app, ["search", "drafts", "--corpus", str(corpus), "--json",
                                              "--exclude", "drafts/"], env=env)  # fmt: skip
    assert not any("drafts" in hit["path"] for hit in json.loads(filtered.output))
