"""Custom lint rules run under a time budget and the run's deadline (issue 10, item 11).

Every slow rule here uses a pattern that never finishes on the text it gets (exponential
backtracking over 60+ characters), so no outcome depends on how fast the machine is:
the rule is always stopped, by its budget or by the deadline.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from research_agent.cli.review import app as review_app
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.review.checks.rules import RULE_TIMEOUT, check_rules
from research_agent.review.markdown import parse_report
from research_agent.review.review import review_draft
from research_agent.review.rules import Rule, RuleDeadline, RuleLimits
from tests.support.cli import CLI
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import QUERY, DocsProvider, script, settings_for, write_docs
from tests.support.reliability import cli_env, message_lines
from tests.support.research_responder import ResearchResponder
from tests.support.streams import JumpingLoop

NEVER_ENDS = r"^(?:[\w ,]|[\w ,]{2})+$"  # with multiline: exponential on any line of 60+ such characters
SLOW_RULE = {"name": "slow-rule", "pattern": NEVER_ENDS, "reason": "r", "fix": "f", "severity": "warning",
             "flags": ["multiline"]}
LONG_LINE = "Plain VACUUM marks the space as reusable within the table file, without returning it [1]."
REPORT = (
    f"# Title\n\n## Summary\n\n{LONG_LINE}\n\nAnother paragraph with a revolutionary claim.\n\n"
    "## Sources\n\n1. PostgreSQL manual — https://www.postgresql.org/docs/current/routine-vacuuming.html\n"
)


def slow_rule() -> Rule:
    return Rule(name="slow-rule", pattern=NEVER_ENDS, reason="r", fix="f", flags=("multiline",))


def hype_rule() -> Rule:
    return Rule(name="no-hype", pattern=r"\brevolutionary\b", reason="hype", fix="cite", severity="critical")


def test_a_rule_past_its_budget_is_stopped_named_and_the_others_still_run() -> None:
    issues = check_rules(parse_report(REPORT), [slow_rule(), hype_rule()], limits=RuleLimits(per_rule=0.2))
    (overrun,) = [i for i in issues if i.type == RULE_TIMEOUT]
    assert overrun.severity == "warning" and overrun.matched == "slow-rule"
    assert "'slow-rule' ran past its 0.2s time budget" in overrun.reason
    assert [i.type for i in issues if i.type != RULE_TIMEOUT] == ["rule:no-hype"]


def test_the_deadline_stops_a_rule_before_its_budget_and_names_it() -> None:
    now = 1000.0
    limits = RuleLimits(per_rule=3600.0, deadline=now + 0.2, clock=lambda: now)  # 0.2 s left of the run
    with pytest.raises(RuleDeadline) as caught:
        check_rules(parse_report(REPORT), [hype_rule(), slow_rule()], limits=limits)
    assert caught.value.rule == "slow-rule"
    assert RuleLimits(per_rule=2.0, deadline=now - 5, clock=lambda: now).next_budget() == (0.0, True)
    assert RuleLimits(per_rule=2.0, deadline=now + 60, clock=lambda: now).next_budget() == (2.0, False)


def test_review_keeps_its_verdict_and_shows_the_stopped_rule() -> None:
    review = review_draft(REPORT, target_words=None, rules=[slow_rule()], rule_limits=RuleLimits(per_rule=0.2))
    assert review.approved and review.warning_count == 1
    assert review.issues[0].type == RULE_TIMEOUT


def test_the_review_command_reports_the_stopped_rule(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    report.write_text(REPORT, encoding="utf-8")
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"rules": [SLOW_RULE]}), encoding="utf-8")
    result = CliRunner().invoke(review_app, [str(report), "--rules", str(rules)])
    assert result.exit_code == 0, result.output
    assert "custom rule 'slow-rule' ran past its 2s time budget and was stopped" in result.output


# --------------------------------------------------------------------------- in a run


async def test_a_run_skips_a_rule_that_ran_past_its_budget_and_says_so_once(tmp_path: Path, scripted_model) -> None:
    script(scripted_model, ResearchResponder())
    notes: list[str] = []

    class Notes:
        def stage(self, name: str, detail: str = "") -> None:
            return None

        def counts(self, **values: int) -> None:
            return None

        def note(self, message: str) -> None:
            notes.append(message)

    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"rules": [SLOW_RULE]}), encoding="utf-8")
    result = await research(QUERY, settings=settings_for(tmp_path, rules_path=rules), model=scripted_model,
                            providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none, progress=Notes())
    message = "custom rule 'slow-rule' ran past its time budget and was stopped; it is skipped from now on"
    assert notes.count(message) == 1 and result.warnings.count(message) == 1
    assert yaml.safe_load(result.run_record_path.read_text(encoding="utf-8"))["warnings"].count(message) == 1


def test_the_run_deadline_reaches_a_custom_rule_and_the_draft_is_published(tmp_path: Path, scripted_model) -> None:
    loop = JumpingLoop()
    responder = ResearchResponder()
    script(scripted_model, responder, skeptics=0)

    started = loop.time()  # the run's deadline is set just after this: started + 3600 and a little

    def skeptic_while_time_runs_out(request):
        # The skeptic answers 1.5 s before the deadline: less than a rule's own budget (2 s), so the
        # deadline sets the rule's budget, and enough that the event loop's own timeout cannot fire
        # between the skeptic's answer and the lint (the lint then holds the loop).
        loop.offset += (started + 3600.0 - 1.5) - loop.time()
        return responder.answer(request.stage, request.system, request.user)

    scripted_model.enqueue("skeptic", skeptic_while_time_runs_out)
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"rules": [SLOW_RULE]}), encoding="utf-8")
    settings = settings_for(tmp_path, rules_path=rules, run_timeout=3600.0)
    try:
        result = loop.run_until_complete(research(QUERY, settings=settings, model=scripted_model,
                                                  providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none))
    finally:
        loop.close()
    # A draft existed when the deadline passed: it is published as it stood, and the record says why.
    error = ("the run passed its 3600s deadline during the review stage, in custom rule 'slow-rule' "
             "(raise it with --timeout, or simplify the rule)")
    assert result.warnings == (f"{error}; the latest draft is published as it stood",)
    assert result.stop_reason == "deadline" and result.record["stop_reason"] == "deadline"
    limits = result.report_markdown.split("## Limitations & Gaps", 1)[1]
    assert "The run reached its 3600s deadline during the review stage: this is the latest draft as it stood, " \
           "published before the run could finish revising it or planning again." in " ".join(limits.split())
    assert [p.name for p in (tmp_path / "reports").glob("*.md")] == [result.report_path.name]


def test_cli_run_with_a_never_ending_rule_finishes_and_names_it(tmp_path: Path) -> None:
    corpus = write_docs(tmp_path / "corpus")
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"rules": [SLOW_RULE]}), encoding="utf-8")
    with FakeOpenAIServer(ResearchResponder()) as server:
        env = cli_env(tmp_path / "home", server.base_url)
        proc = subprocess.run(
            [str(CLI), "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(tmp_path / "reports"),
             "--no-critique", "--rules", str(rules), "--timeout", "600"],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,  # a hang guard
        )
    assert proc.returncode == 0, proc.stderr
    note, done = message_lines(proc.stderr)
    assert note == "! custom rule 'slow-rule' ran past its time budget and was stopped; it is skipped from now on"
    assert done.startswith("done (") and "): full_report" in done
