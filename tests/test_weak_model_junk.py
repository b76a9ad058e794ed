"""A weak model's junk stays out of the report (issue 45, points 9-13): schema junk and echoed lists
are never searched and the report says what was; a viability outside 0-100 is unscored in the run,
the report and ``review`` alike; debris findings are dropped and counted; an address no source has
is a lint issue and never published; a relevance reason that says nothing is no score."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from research_agent import prompts
from research_agent.batch.runner import outcome_of
from research_agent.batch.state import BatchState, Entry, make_batch_id
from research_agent.batch.summary import summary_data, summary_markdown
from research_agent.cli.review import app as review_app
from research_agent.config import Settings
from research_agent.review.checks.addresses import without_unknown
from research_agent.review.lint import lint_report
from research_agent.service.setup.checks import run_checks
from research_agent.sources import Source
from research_agent.stages._sub_queries import list_words, prompt_runs, screen
from research_agent.stages.relevance import reason_problem, score_sources
from research_agent.stages.skeptic import SkepticFinding, is_debris
from tests.support.debris import ISSUE45_DEBRIS, REAL_QUERIES, REAL_REASONS, DebrisResponder
from tests.support.pipeline import DocsProvider, queue, record_of, run, use
from tests.support.research_responder import ResearchResponder

JUNK = ISSUE45_DEBRIS
REAL = ("PostgreSQL VACUUM dead tuples", "autovacuum thresholds tuning")
QUESTION = "What does asyncio.create_task do?"
DOMAINS = list_words(prompts.fragment("domains"), QUESTION)


# --- sub-queries ------------------------------------------------------------------------------------


def test_the_issues_schema_junk_and_echoed_domains_are_dropped_and_real_queries_kept() -> None:
    screened = screen(JUNK.sub_queries, DOMAINS)
    assert screened.kept == ()
    reasons = [d.reason for d in screened.dropped]
    assert reasons[0] == "an address or file name with a query string, not a search"
    assert reasons[1].startswith("a schema fragment ('task:true')")
    assert screen(REAL_QUERIES, DOMAINS).kept == REAL_QUERIES
    echoed = screen(["tech, internet, science, other", "software, computing, engineering, devices"], DOMAINS)
    assert [d.reason for d in echoed.dropped] == ["echoes the prompt's list of domains, not a search"] * 2
    # the question's own words are no echo: a question about them may list them
    asked = list_words(prompts.fragment("domains"), "How do science, health and education interact?")
    assert screen(["science, health, education policy"], asked).kept == ("science, health, education policy",)


# --- a whole run of the issue's junk --------------------------------------------------------------------


@pytest.fixture
async def junk_run(tmp_path, scripted_model):
    responder = DebrisResponder(JUNK)
    plan = {"domain": "technology", "sub_queries": [*JUNK.sub_queries, *REAL]}
    queue(scripted_model, responder, decompose=[lambda request: plan], revise=[use(responder)] * 2)
    scripted_model.enqueue("relevance", use(responder))  # the sources with junk reasons, asked again in one batch
    provider = DocsProvider(tmp_path)
    result = await run(tmp_path, scripted_model, provider=provider)
    return provider, result


async def test_no_junk_is_searched_and_the_limitations_say_what_was(junk_run) -> None:
    provider, result = junk_run
    assert set(provider.calls) == set(REAL)
    report = result.report_markdown
    limitations = report.split("## Limitations & Gaps", 1)[1].split("\n## ", 1)[0]
    assert ("- 2 sub-queries the planner wrote were not searched (an address or file name with a query string, "
            "not a search; a schema fragment); what was searched: \u201cPostgreSQL VACUUM dead tuples\u201d, "
            "\u201cautovacuum thresholds tuning\u201d.") in limitations
    assert "science.json" not in report and "internet" not in report


async def test_a_run_with_no_answer_says_too_what_was_not_searched(tmp_path, scripted_model) -> None:
    """The real quick and standard runs of the asyncio question: a plan of junk alone, and no source
    scored; the short report's Limitations say what was dropped, as an answer's do."""
    scripted_model.enqueue("decompose", {"domain": "technology", "sub_queries": list(JUNK.sub_queries)}, times=3)
    unscored = {"scores": [{"id": n, "score": 1, "reason": "about another tool"} for n in range(1, 13)]}
    scripted_model.enqueue("relevance", lambda request: unscored, times=1)
    scripted_model.enqueue("draft", "## Executive Summary\n\nVACUUM removes dead tuples [1].")  # beside relevance
    result = await run(tmp_path, scripted_model)
    assert result.gate_decision in ("insufficient_data", "no_new_findings")
    limitations = result.report_markdown.split("## Limitations & Gaps", 1)[1].split("\n## ", 1)[0]
    assert "- 2 sub-queries the planner wrote were not searched (an address or file name with a query string" in limitations


async def test_a_nonsense_viability_is_unscored_in_the_run_the_report_and_review(junk_run, tmp_path: Path) -> None:
    _, result = junk_run
    report = result.report_markdown
    assert ("The skeptic's viability score was unusable (1234567890 is no whole number from 0 to 100), so the "
            "answer is unscored.") in report
    assert "/100" not in report.split("## Adversarial Analysis", 1)[1].split("\n## ", 1)[0]
    record = record_of(result)
    assert record["skeptic"]["viability"] is None
    assert record["skeptic"]["viability_note"] == "unscored: the skeptic's viability 1234567890 is outside 0-100"
    assert all(i.viability is None for i in result.iterations)
    assert "unscored: the skeptic's viability 1234567890 is outside 0-100" in result.warnings
    reviewed = CliRunner().invoke(review_app, [str(result.report_path), "--reports-dir", str(tmp_path / "reports")])
    assert "  - Viability: unscored" in reviewed.stdout


async def test_debris_findings_are_dropped_and_counted_not_printed(junk_run) -> None:
    _, result = junk_run
    report = result.report_markdown
    assert "concern," not in report and "confidence}" not in report
    assert "1 of the skeptic's findings said nothing readable (debris) and are not shown." in report
    assert "The skeptic found no problems" not in report
    assert record_of(result)["skeptic"]["findings"] == []
    assert "1 skeptic finding(s) were debris (a claim or reason with no real word) and were dropped" in result.warnings


async def test_an_address_no_source_has_is_never_published(junk_run, tmp_path: Path) -> None:
    _, result = junk_run
    report = result.report_markdown
    assert "LuigiBoschi" not in report and "github.com" not in report
    assert "web address(es) that no source of this research has were taken out of the writer's text" in report
    assert "(address removed)" in report
    data = json.loads(CliRunner().invoke(review_app, [str(result.report_path), "--json"]).stdout)
    assert "unknown_address" not in {i["type"] for i in data["issues"]}


async def test_junk_relevance_reasons_are_no_scores_and_are_asked_again(junk_run) -> None:
    _, result = junk_run
    reasons = [s["reason"] for s in record_of(result)["sources"]]
    assert not set(JUNK.relevance_reasons) & set(reasons)
    assert any(w.startswith("3 relevance score(s) came with a reason that says nothing (the first 'error')")
               for w in result.warnings)  # fmt: skip


# --- each check on its own ----------------------------------------------------------------------------


def test_a_finding_whose_claim_or_reason_is_debris_is_debris_and_real_ones_are_not() -> None:
    def finding(claim: str, reason: str) -> SkepticFinding:
        return SkepticFinding("evidence", "concern", claim, reason, "", 0.5)

    assert is_debris(finding("concern,", "critical"))
    assert is_debris(finding("}], {", "The passage does not say this."))
    assert is_debris(finding("Tasks run at once [1]", "evidence evidence evidence evidence evidence evidence"))
    assert not is_debris(finding("Tasks run at once [1]", "The passage says soon, not at once."))
    assert not is_debris(finding("", "The draft never says a reference must be kept."))  # an omission quotes nothing


@pytest.mark.parametrize("reason", ["error", "type:string", "no_data", "4", "N/A"])
def test_a_relevance_reason_that_says_nothing_is_no_reason(reason: str) -> None:
    assert reason_problem(reason) is not None


def test_real_relevance_reasons_pass() -> None:
    assert [reason_problem(r) for r in REAL_REASONS] == [None] * len(REAL_REASONS)


async def test_a_score_with_a_junk_reason_is_asked_again_and_the_answer_that_says_why_is_kept(scripted_model) -> None:
    sources = [Source(f"/docs/p{n}.html", f"Page {n}", f"/docs/p{n}.html", "/docs", f"asyncio create_task page {n}",
                      "local") for n in (1, 2)]  # fmt: skip
    scripted_model.enqueue("relevance", lambda r: {"scores": [{"id": 1, "score": 4, "reason": "type:string"},
                                                               {"id": 2, "score": 1, "reason": "no_data"}]})
    # neither scored: asked again in halves, one source a call
    scripted_model.enqueue("relevance", lambda r: {"scores": [{"id": 1, "score": 1, "reason": "About threading only."}]})
    scripted_model.enqueue("relevance", lambda r: {"scores": [{"id": 1, "score": 5, "reason": "Says what it returns."}]})
    notes: list[str] = []
    scored = await score_sources(scripted_model, "What does asyncio.create_task do?", sources, token_budget=200,
                                 slots=1, notify=notes.append)  # fmt: skip
    assert [(s.score, s.reason) for s in scored] == [(1, "About threading only."), (5, "Says what it returns.")]
    assert len(scripted_model.calls("relevance")) == 3
    assert notes == ["2 relevance score(s) came with a reason that says nothing (the first 'type:string'); those "
                     "scores were not taken: their sources count as not scored"]


def test_an_unknown_address_is_a_lint_issue_critical_where_it_reads_as_a_citation() -> None:
    found = {(i.line, i.severity) for i in lint_report(JUNK.markdown(), target_words=None) if i.type == "unknown_address"}
    md = JUNK.markdown()
    lines = md.split("\n")
    at = lambda text: next(n for n, line in enumerate(lines, 1) if text in line)  # noqa: E731
    assert (at("see https://github"), "warning") in found  # in running text
    assert (at("- https://github"), "critical") in found  # alone: a reference
    assert (at("repository (https://"), "critical") in found  # in parentheses
    known = md.replace("/docs/mvcc-intro.html", "https://github.com/LuigiBoschi/asyncio")
    assert not [i for i in lint_report(known, target_words=None) if i.type == "unknown_address"]


def test_an_address_a_source_has_stays_and_a_link_keeps_its_words_before_the_mark() -> None:
    known = frozenset({"docs.python.org/3/library/asyncio-task.html", "docs.python.org"})
    text = ("See [the docs](https://docs.python.org/3/library/asyncio-task.html#create_task) and "
            "[the repo](https://github.com/x/y), or https://www.docs.python.org/ and <https://made.up/page>.")
    cleaned, taken = without_unknown(text, known)
    assert taken == 2
    assert cleaned == ("See [the docs](https://docs.python.org/3/library/asyncio-task.html#create_task) and "
                       "the repo (address removed), or https://www.docs.python.org/ and (address removed).")


def test_an_exact_repeat_of_a_line_inside_a_paragraph_is_flagged_like_its_neighbours() -> None:
    md = JUNK.markdown()
    lines = md.split("\n")
    first = next(n for n, line in enumerate(lines, 1) if line.startswith("asyncio.create_task()"))
    again = next(n for n, line in enumerate(lines, 1) if n > first and line.startswith("asyncio.create_task()"))
    issues = [i for i in lint_report(md, target_words=None) if i.type == "duplicate_paragraph"]
    assert [(i.line, i.severity, i.reason) for i in issues] == [(again, "critical", f"repeats line {first} word for word")]


def test_a_responder_that_plans_sensibly_is_not_touched() -> None:
    plan = ResearchResponder()._decompose("", "Question: What does asyncio.create_task do?\nWrite exactly 4 search queries.")
    assert screen(plan["sub_queries"], DOMAINS).dropped == ()


# --- the batch page's call count, doctor --------------------------------------------------------------


async def test_the_batch_pages_call_count_is_the_run_records_sum(tmp_path: Path, scripted_model) -> None:
    # issue 45, point 13: "endpoint: 28 calls" where the run records and the server showed 34
    responder = ResearchResponder()
    queue(scripted_model, responder)
    result = await run(tmp_path, scripted_model)
    recorded = sum(u["calls"] for u in record_of(result)["usage"].values())
    meta = result.run_record_path.parent
    done = Entry(1, "q", "k1", state="done", attempts=1, run_id=result.id, outcome=outcome_of(result, {}))
    planted = Entry(2, "q2", "k2", state="done", attempts=1, run_id="../../etc/passwd",
                    outcome=outcome_of(result, {}))  # no run id: never read
    state = BatchState(make_batch_id("questions", datetime(2026, 1, 1, tzinfo=UTC)), meta, status="done",
                       limits={"calls": 1, "pauses": 0, "paused_seconds": 0, "waited_seconds": 0},
                       entries=[done, planted])  # fmt: skip
    data = summary_data(state, lessons_now={})
    assert recorded > 1 and data["limits"]["calls"] == recorded and data["limits"]["admitted"] == 1
    assert f"endpoint: {recorded} calls (the run records' sum), 0 pause(s)" in summary_markdown(data, tmp_path)


def test_doctor_says_what_it_did_not_test(tmp_path: Path) -> None:
    settings = Settings(reports_dir=tmp_path / "r", cache_dir=tmp_path / "c")  # the default provider: ddgs
    checks = {what: (ok, detail) for what, ok, detail in run_checks(settings, client=httpx.Client(
        transport=httpx.MockTransport(lambda request: httpx.Response(404))))}  # fmt: skip
    assert checks["search providers"] == (True, "set: ddgs")
    ok, detail = checks["search not tested"]
    assert ok == "untried" and detail.startswith("ddgs: not tried: doctor sends it no query")
    local = Settings(reports_dir=tmp_path / "r", cache_dir=tmp_path / "c", corpus_dirs=(tmp_path,))
    assert "search not tested" not in {what for what, _, _ in run_checks(local, client=httpx.Client(
        transport=httpx.MockTransport(lambda request: httpx.Response(404))))}  # fmt: skip


def test_a_limitation_the_writer_repeats_is_listed_once() -> None:
    # the quick run against SmolLM2 listed one limitation ten times, word for word
    from research_agent.run.report import ReportMeta, compose_report
    from research_agent.stages.writing.draft_text import read_draft

    said = "The sources cover only the asyncio documentation."
    draft = read_draft("## Summary\n\nTasks run on the loop [1].\n\n## Limitations\n\n" + f"- {said}\n" * 10)
    meta = ReportMeta("What does asyncio.create_task do?", "quick", "2026-01-01", "smollm2", "full_report")
    assert compose_report(draft, [], meta=meta, skeptic=None, final=False).markdown.count(said) == 1


# --- what the real run against SmolLM2 searched after the first fixes -------------------------------


ECHOES = (  # the standard run's plans 2 and 3 (the prompt's replan framing and a repair message, echoed)
    "] } Question: What does asyncio.create_task do? Answer: The previous plan fell short. Prior response is "
    "invalid, and the user requested a JSON-serializable string with only one line of text. Use. They",
    "] } ``` Your answer is invalid. You should provide a JSON-formatted response with only the requested data, "
    "not multiple lines of text. Use a single line to describe your request and follow the format:",
    "the previous plan fell short asyncio tasks",
    "create-task:fetch/2018-04-30T09:56:37.123Z",  # the standard run's plan 1, after the first fixes
)


async def test_a_sentence_or_an_echo_of_the_prompts_own_words_is_not_searched(tmp_path, scripted_model) -> None:
    lesson_like = "asyncio developments of the last year"  # guidance and lessons may be followed word for word
    real = (*REAL, lesson_like)  # half or more survive, within the schema's 6
    plan = {"sub_queries": [*ECHOES[:3], *real]}
    queue(scripted_model, ResearchResponder(), decompose=[lambda request: {"domain": "technology", **plan}])
    provider = DocsProvider(tmp_path)
    await run(tmp_path, scripted_model, provider=provider)
    assert set(provider.calls) == set(real)
    template = prompts.render("decompose", query=QUESTION, count=4, context="", domain="", lessons="",
                              guidance="\nThe previous plan fell short. \nPlan different queries that fix this.\n")
    echoes = prompt_runs(f"{template.system}\n{template.user}", QUESTION)
    assert [d.reason for d in screen(ECHOES[2:], DOMAINS, echoes).dropped] == [
        "echoes the prompt's own text, not a search", "a machine timestamp, not a search"]
    # what the last quick run searched; braces that close are no reason
    fragment = screen(["parseJSONWithAsyncFunction(function){", "javascript function(){} syntax"], DOMAINS, echoes)
    assert fragment.kept == ("javascript function(){} syntax",)


def test_a_relevance_reason_of_serialized_data_is_no_reason() -> None:
    assert reason_problem("type':'string', 'value' : 5}]} {'id' : 0,'score' : 2,'reason:'type':'list', 'items' :[{")
    assert reason_problem("TypeError: string indices explain the failure") is None
