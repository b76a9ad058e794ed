"""``research-agent plan`` and ``run --plan`` / ``run --review-plan`` (issue 44, point 3): the installed
CLI against an OpenAI-compatible server on 127.0.0.1, a review on a real pseudo-terminal with an editor
that is a script, and the terminal review's answers passed in."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from research_agent.cli.plan.review import STOPPED, TerminalReview
from research_agent.errors import Cancelled
from research_agent.plans import ResearchPlan
from tests.support.cli import CLI, cli, cli_env
from tests.support.pipeline import QUERY

MINE = ["postgresql vacuum dead tuples", "autovacuum daemon thresholds"]


def _record(reports: Path) -> dict:
    (path,) = (reports / "meta").glob("run-*.yaml")
    return yaml.safe_load(path.read_text())


def test_plan_then_run_with_the_plan_edited_searches_it_with_no_decompose_call(tmp_path, corpus, server):
    plan_file = tmp_path / "plan.json"
    made = cli(tmp_path, "plan", QUERY, "--quick", "--output", str(plan_file), "--json", base_url=server.base_url)
    assert made.returncode == 0, made.stderr
    plan = json.loads(made.stdout)
    assert plan == json.loads(plan_file.read_text())
    assert plan["question"] == QUERY and plan["domain"] == "technology" and 1 <= len(plan["sub_queries"]) <= 3
    assert [r.stage for r in server.requests] == ["decompose"] and "planned: " in made.stderr

    plan_file.write_text(json.dumps({**plan, "sub_queries": MINE}))
    server.clear()
    reports = tmp_path / "reports"
    ran = cli(tmp_path, "run", "--plan", str(plan_file), "--corpus", str(corpus), "--reports-dir", str(reports),
              "--no-critique", "--quick", "--json", base_url=server.base_url)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["plan_by_person"] is True
    assert "decompose" not in {r.stage for r in server.requests}, "the question comes from the plan; no planner asked"
    record = _record(reports)
    assert record["plan_by_person"] is True and record["sub_queries"] == MINE and record["query"] == QUERY


def test_plan_prints_the_plan_for_a_person_and_refuses_an_output_another_run_owns(tmp_path, server):
    shown = cli(tmp_path, "plan", QUERY, "--quick", base_url=server.base_url)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "domain: technology" and all(line.startswith("- ") for line in lines[1:]) and len(lines) > 1
    owned = cli(tmp_path, "plan", QUERY, "--output", str(tmp_path / "reports" / "meta" / "p.json"),
                base_url=server.base_url)  # fmt: skip
    assert owned.returncode == 2 and owned.stderr.count("\n") == 1 and "refused" in owned.stderr


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "file not found"),
        ("{not json", "not JSON"),
        (json.dumps({"question": QUERY, "sub_queries": ["maxItems: 5"]}), "is no search query"),
        (json.dumps({"question": "Why is the sky blue?", "sub_queries": MINE}), "made for another question"),
    ],
)
def test_a_bad_plan_file_is_one_line_and_exit_2_before_any_model_call(tmp_path, server, content, said):
    plan_file = tmp_path / "plan.json"
    if content is not None:
        plan_file.write_text(content)
    ran = cli(tmp_path, "run", QUERY, "--plan", str(plan_file), "--reports-dir", str(tmp_path / "r"),
              base_url=server.base_url)  # fmt: skip
    assert ran.returncode == 2 and ran.stderr.startswith("error: plan file ") and said in ran.stderr
    assert ran.stderr.count("\n") == 1 and server.requests == []


def test_review_plan_without_a_terminal_refuses_in_one_line(tmp_path, server):
    ran = cli(tmp_path, "run", QUERY, "--review-plan", base_url=server.base_url)
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1 and "--review-plan needs a terminal" in ran.stderr
    both = cli(tmp_path, "run", QUERY, "--review-plan", "--plan", "p.json", base_url=server.base_url)
    assert both.returncode == 2 and "choose one of --plan FILE" in both.stderr and server.requests == []


def test_review_plan_on_a_terminal_edits_in_the_editor_and_searches_the_edit(tmp_path, corpus, server):
    editor = tmp_path / "editor.py"  # the person: keeps the header, writes their own two sub-queries
    editor.write_text("import sys\nfrom pathlib import Path\np = Path(sys.argv[1])\n"
                      "head = [l for l in p.read_text().splitlines() if l.startswith('#')]\n"
                      f"p.write_text('\\n'.join(head + {MINE!r}) + '\\n')\n")  # fmt: skip
    reports = tmp_path / "reports"
    main, child = pty.openpty()
    os.write(main, b"e\na\n")  # edit, then accept the edit (the terminal keeps the lines until they are read)
    env = cli_env(tmp_path, server.base_url, {"EDITOR": f"{sys.executable} {editor}"})
    proc = subprocess.run([str(CLI), "run", QUERY, "--review-plan", "--corpus", str(corpus), "--reports-dir",
                           str(reports), "--no-critique", "--quick"], stdin=child, stderr=child, stdout=subprocess.PIPE,
                          env=env, cwd=tmp_path, timeout=120)  # fmt: skip
    os.close(child)
    said = _read_all(main)
    assert proc.returncode == 0, said
    assert "The plan (technology):" in said and "Search this plan?" in said and f"1. {MINE[0]}" in said
    record = _record(reports)
    assert record["plan_by_person"] is True and record["sub_queries"] == MINE
    assert [r.stage for r in server.requests].count("decompose") == 1


def _read_all(fd: int) -> str:
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the terminal's other end is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(fd)
    return out.decode("utf-8", "replace")


# --- the terminal review's answers, passed in ---------------------------------------------------------


PLAN = ResearchPlan(QUERY, "technology", ("postgres vacuum internals", "dead tuple cleanup"))


def review_with(answers: list[str | None], edits: list[str | None] = ()) -> tuple[TerminalReview, list[str]]:
    lines: list[str] = []
    asked, edited = iter(answers), iter(edits)
    seen: list[str] = []

    def edit(text: str) -> str | None:
        seen.append(text)
        return next(edited)

    review = TerminalReview(show=lines.append, ask=lambda q: next(asked), edit=edit)
    review.seen = seen  # type: ignore[attr-defined]
    return review, lines


def test_enter_accepts_the_plan_as_it_is() -> None:
    review, lines = review_with(["\n"])
    assert review.review(PLAN) is PLAN
    assert lines == ["The plan (technology):", "  1. postgres vacuum internals", "  2. dead tuple cleanup"]


def test_a_refused_edit_is_said_and_the_next_edit_starts_from_the_person_s_text() -> None:
    review, lines = review_with(["e", "e", "a"], ["postgres vacuum internals\nx\n", "postgres vacuum internals\n"])
    assert review.review(PLAN).sub_queries == ("postgres vacuum internals",)
    assert any(line.startswith("! the edited plan: sub-query 2 ('x') is no search query") for line in lines)
    second = review.seen[1]  # type: ignore[attr-defined]
    assert second.startswith("# Refused: the edited plan: sub-query 2") and second.endswith("postgres vacuum internals\nx\n")


@pytest.mark.parametrize(("answers", "edits"), [(["s"], []), ([None], []), (["e"], ["# all gone\n"])])
def test_stop_the_end_of_input_or_an_empty_list_stops_the_run(answers, edits) -> None:
    review, _ = review_with(answers, edits)
    with pytest.raises(Cancelled, match=STOPPED):
        review.review(PLAN)


def test_an_editor_that_saved_nothing_leaves_the_plan_and_an_unknown_answer_is_asked_again() -> None:
    review, lines = review_with(["what", "e", "a"], [None])
    assert review.review(PLAN) is PLAN
    assert "Answer a (accept), e (edit) or s (stop)." in lines and "Nothing was saved: the plan is as it was." in lines


async def test_the_review_answers_the_run_from_a_thread_of_its_own() -> None:
    stopped: list[bool] = []
    review = TerminalReview(show=lambda line: None, ask=_answers(["e", "a"]), edit=lambda text: "vacuum full locking\n",
                            before=lambda: stopped.append(True))  # fmt: skip
    assert (await review(PLAN)).sub_queries == ("vacuum full locking",) and stopped == [True]


def _answers(answers: list[str]):
    it = iter(answers)
    return lambda question: next(it)
