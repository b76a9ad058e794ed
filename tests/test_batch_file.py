"""A questions file is refused whole, before any model call: exit 2 and one line naming the line
and the problem. Rows of CSV and JSONL may set their own mode, corpus, search and max_sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from research_agent.batch.questions import MAX_ROWS, read_batch_file
from research_agent.errors import InputError
from tests.support.batch import batch_deps, run_batch
from tests.support.pipeline import write_docs
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel

GOOD = "How does PostgreSQL VACUUM reclaim space?"
TOO_LONG = "Why" + " very" * 500 + " long?"

BAD_FILES = [
    ("empty.txt", "# only a comment\n\n", "no questions (write one per line"),
    ("blank.csv", "", "no questions (a header row with a question column"),
    ("binary.txt", f"{GOOD}\nabc\x00def\n", "line 2: binary data (a NUL byte)"),
    ("latin1.txt", f"{GOOD}\ncaf\xe9?\n".encode("latin-1"), "line 2: not UTF-8 text"),
    ("twice.txt", f"{GOOD}\n# again\n  how does postgresql   VACUUM reclaim space?\n", "line 3: the same question as line 1"),
    ("long.txt", f"{GOOD}\n{TOO_LONG}\n", f"line 2: the query is {len(TOO_LONG)} characters long; the limit is 2000"),
    ("short.txt", f"{GOOD}\n??\n", "line 2: the question '??' is too short to research"),
    ("escape.txt", f"{GOOD}\nWhat is \x1b[31mred\x1b[0m?\n", "line 2: control characters in the question"),
    ("columns.csv", "question,priority\nWhat is it?,high\n", "line 1: unknown column 'priority'"),
    ("nocolumn.csv", "mode\nquick\n", "line 1: no question column in the header"),
    ("mode.csv", f"question,mode\n{GOOD},fast\n", "line 2: mode must be one of quick, standard, deep"),
    ("sources.csv", f"question,max_sources\n{GOOD},0\n", "line 2: max_sources must be a whole number from 1 to 200"),
    ("cells.csv", f"question\n{GOOD},extra\n", "line 2: a row with more cells than the header has columns"),
    ("provider.jsonl", json.dumps({"question": GOOD, "search": ["bing"]}) + "\n", "line 1: unknown search provider 'bing'"),
    ("key.jsonl", json.dumps({"question": GOOD}) + "\n" + json.dumps({"question": "What?!", "tags": 1}) + "\n",
     "line 2: unknown key 'tags'"),
    ("notjson.jsonl", json.dumps({"question": GOOD}) + "\n{not json\n", "line 2: not JSON"),
    ("array.jsonl", "[1, 2]\n", "line 1: not a JSON object"),
    ("noquestion.jsonl", json.dumps({"mode": "quick"}) + "\n", "line 1: no question"),
    ("corpus.jsonl", json.dumps({"question": GOOD, "corpus": "missing-folder"}) + "\n",
     "line 1: corpus folder 'missing-folder' is not a folder"),
    ("searxng.csv", f"question,search\n{GOOD},searxng\n", "line 2: searxng needs an http(s) URL"),
    ("repeated.jsonl", f'{{"question": "{GOOD}", "mode": "quick", "mode": "deep"}}\n',
     "line 1: the key 'mode' appears twice in the object"),
    ("repeated_question.jsonl", f'{{"question": "{GOOD}", "question": "What is it?"}}\n',
     "line 1: the key 'question' appears twice in the object"),
    ("repeated.csv", f"question,mode,Mode\n{GOOD},quick,deep\n", "line 1: the column 'mode' appears twice in the header"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "content", "problem"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_a_bad_file_is_refused_in_one_line_before_any_model_call(
    tmp_path: Path, name: str, content: str | bytes, problem: str
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    model = ResponderModel(ResearchResponder())
    result = run_batch(tmp_path, batch_deps(tmp_path, model), str(path))
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: questions file {path}: "), result.stderr
    assert problem in result.stderr, result.stderr
    assert model.requests == [], "refused before any model call"
    assert not (tmp_path / "reports" / "meta").exists() or not list((tmp_path / "reports" / "meta").glob("batch-*"))


def test_more_than_the_maximum_of_rows_is_refused_naming_the_first_one_too_many(tmp_path: Path) -> None:
    path = tmp_path / "many.txt"
    path.write_text("".join(f"What is item number {n}?\n" for n in range(MAX_ROWS + 5)), encoding="utf-8")
    with pytest.raises(InputError, match=f"line {MAX_ROWS + 1}: more than 10,000 questions; the limit is 10,000"):
        read_batch_file(path)


def test_a_missing_file_a_folder_and_no_file_at_all_are_one_line_each(tmp_path: Path) -> None:
    deps = batch_deps(tmp_path, ResponderModel(ResearchResponder()))
    missing = run_batch(tmp_path, deps, str(tmp_path / "nope.txt"))
    folder = run_batch(tmp_path, deps, str(tmp_path))
    nothing = run_batch(tmp_path, deps)
    unknown = run_batch(tmp_path, deps, "--resume", "not-a-batch")
    assert [r.exit_code for r in (missing, folder, nothing, unknown)] == [2, 2, 2, 2]
    assert missing.stderr == f"error: questions file {tmp_path / 'nope.txt'}: file not found\n"
    assert folder.stderr.startswith(f"error: questions file {tmp_path}: ")
    assert nothing.stderr == "error: give a questions FILE, or --resume ID\n"
    assert unknown.stderr.startswith("error: --resume 'not-a-batch': not a batch id")


def test_csv_and_jsonl_rows_set_their_own_options(tmp_path: Path) -> None:
    corpus = write_docs(tmp_path / "docs")
    csv_file = tmp_path / "q.csv"
    csv_file.write_text(
        "question,mode,corpus,search,max_sources\n"
        f'"{GOOD}",quick,docs,,3\n'
        '"How does MVCC\nwork in PostgreSQL?",,,"local, ddgs",\n', encoding="utf-8",
    )  # fmt: skip
    first, second = read_batch_file(csv_file)
    assert (first.line, first.mode, first.corpus, first.max_sources) == (2, "quick", (str(corpus.resolve()),), 3)
    assert (second.line, second.question, second.search) == (3, "How does MVCC work in PostgreSQL?", ("local", "ddgs"))
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text(json.dumps({"question": GOOD, "corpus": ["docs"], "search": "local", "max_sources": 5}) + "\n\n"
                     + json.dumps({"question": GOOD, "mode": "deep"}) + "\n", encoding="utf-8")  # fmt: skip
    one, two = read_batch_file(jsonl)
    assert one.row() == {"corpus": [str(corpus.resolve())], "search": ["local"], "max_sources": 5}
    assert (two.line, two.row()) == (3, {"mode": "deep"}), "the same question with other options is another question"


def test_no_endpoint_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    from dataclasses import replace

    from research_agent.llm import NO_ENDPOINT_MESSAGE

    path = tmp_path / "q.txt"
    path.write_text(f"{GOOD}\n", encoding="utf-8")
    deps = replace(batch_deps(tmp_path, None), make_model=None)  # the product's client: no endpoint is set
    result = run_batch(tmp_path, deps, str(path), "--corpus", str(write_docs(tmp_path / "docs")))
    assert result.exit_code == 2 and result.stderr == f"error: {NO_ENDPOINT_MESSAGE}\n"
    assert list((tmp_path / "reports").rglob("batch-*")) == []
