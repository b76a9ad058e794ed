"""The claim check inside a run (issue 22): a scripted skeptic marks one claim unsupported.

The claim rides in the skeptic's call; revise gets it as a critical finding; after the
last revision no sentence like it, still citing its source, stands unmarked; the report's
Limitations, the run record and the critique facts say what was checked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from research_agent.claims import DISPUTED
from research_agent.errors import LLMTimeout
from research_agent.memory.critique.facts import compute_facts
from research_agent.memory.critique.measured import measure_run
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.record import read_run_record
from research_agent.review.report_file import review_markdown
from tests.conftest import INVALID
from tests.support.claims import asked_claims
from tests.support.pipeline import CLAIM, QUERY, DocsProvider, queue, record_of, settings_for
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel
from tests.support.streams import JumpingLoop

UNSUPPORTED = "Plain VACUUM marks the space as reusable within the table file without returning it to the operating system"
REWORDED = "Plain VACUUM marks that space as reusable inside the table file without returning it to the operating system"
ALL = 100_000  # a claim budget that takes every cited sentence: the sample is then the whole list


def verdict_for(sentence: str) -> str:
    return "unsupported" if CLAIM in sentence else "supported"


def body(report: str) -> str:
    """The report's sections above the Adversarial Analysis: what the writer claims."""
    return report.split("---\n", 2)[2].split("## Adversarial Analysis", 1)[0]


def limitations(report: str) -> str:
    return report.split("## Limitations & Gaps\n", 1)[1].split("\n## ", 1)[0]


class Writer(ResearchResponder):
    """The research responder, whose revision applies ``edit`` to the draft's text."""

    def __init__(self, edit=lambda text: text, **kwargs: Any) -> None:
        super().__init__(claim_verdict=verdict_for, **kwargs)
        self.edit = edit

    def _revise(self, system: str, user: str) -> Any:
        answer = super()._revise(system, user)
        if isinstance(answer, str):  # a markdown writer
            return self.edit(answer)
        return json.loads(self.edit(json.dumps(answer, ensure_ascii=False)))


async def run(tmp_path, model, mode: str = "standard", *, lean: bool = False, **changes: Any):
    settings = settings_for(tmp_path, mode, **{"claim_tokens": ALL, **changes})
    if lean:  # the list's budget is claim_tokens alone (it also takes the skeptic's cited_tokens: issue 46)
        settings = settings.replace(mode=dataclasses.replace(settings.mode, cited_tokens=0))
    return await research(
        QUERY, settings=settings, model=model, providers=[DocsProvider(tmp_path)],
        lessons=lambda domain: LessonSelection.none(domain),
    )  # fmt: skip


def vacuum_number(report: str) -> int:
    """The final report's number of the source the unsupported claim cites."""
    return int(re.search(r"^(\d+)\. VACUUM in PostgreSQL", report, re.M).group(1))


async def test_the_revise_prompt_receives_the_unsupported_claim_as_a_critical_finding(tmp_path):
    model = ResponderModel(Writer())
    await run(tmp_path, model)
    (skeptic,) = model.calls("skeptic")
    asked = {c.sentence for c in asked_claims(skeptic.user)}
    assert f"{UNSUPPORTED}." in asked and not model.calls("claims")  # in the skeptic's own call
    feedback = model.calls("revise")[0].user.split("<<<DATA review feedback>>>", 1)[1].split("<<<END DATA>>>")[0]
    assert "X Skeptic: evidence (1 issue):" in feedback
    line = next(line for line in feedback.splitlines() if UNSUPPORTED in line)
    assert re.search(r'Line \d+: "' + re.escape(UNSUPPORTED) + r'" - The cited passage of \[\d\] does not state', line)
    assert "Critical issues: 1" in feedback


async def test_a_claim_revise_rewords_slightly_and_keeps_cited_is_marked_disputed(tmp_path):
    model = ResponderModel(Writer(lambda text: text.replace(UNSUPPORTED, REWORDED)))
    result = await run(tmp_path, model)
    report = result.report_path.read_text(encoding="utf-8")
    assert UNSUPPORTED not in body(report) and body(report).count(REWORDED) == 1
    assert f"{DISPUTED} {REWORDED} [{vacuum_number(report)}]." in body(report)
    checked = len(asked_claims(model.calls("skeptic")[0].user))
    assert limitations(report).rstrip().endswith(
        f"- Claims checked against their sources: {checked} of {checked} cited sentences; {checked - 1} supported, "
        "0 partly, 1 marked disputed, 0 removed in revision."
    )
    assert len(model.calls("revise")) == 1  # the reworded claim closes the finding; the program marks it
    lint = review_markdown(report).issues  # the line's counts are the tool's own, not claims to cite
    assert not [i for i in lint if "against their sources" in i.matched]
    adversarial = report.split("## Adversarial Analysis\n", 1)[1].split("\n## ", 1)[0]
    assert f"\u201c{UNSUPPORTED}\u201d. The cited passage of [{vacuum_number(report)}] does not state" in adversarial
    assert "Response: marked disputed in the report" in adversarial


async def test_the_record_keeps_each_verdict_and_the_critique_facts_count_them(tmp_path):
    model = ResponderModel(Writer(lambda text: text.replace(UNSUPPORTED, REWORDED)))
    result = await run(tmp_path, model)
    report = result.report_path.read_text(encoding="utf-8")
    block = record_of(result)["claim_check"]
    checked = len(asked_claims(model.calls("skeptic")[0].user))
    assert block["cited"] == block["checked"] == checked and block["skipped"] == ""
    (bad,) = [v for v in block["verdicts"] if v["verdict"] == "unsupported"]
    assert bad["sentence"] == f"{UNSUPPORTED}." and bad["source"] == vacuum_number(report)
    assert bad["location"].endswith("vacuum.md") and bad["quote"] == "" and bad["outcome"] == "disputed"
    good = [v for v in block["verdicts"] if v["verdict"] == "supported"]
    assert len(good) == checked - 1 and all(v["quote"] and v["location"] for v in good)
    record = read_run_record(result.run_record_path)
    assert record.claim_check is not None and record.claim_check.checked == checked
    facts = measure_run(record, report, now=datetime.now(UTC)).claims
    assert (facts.checked, facts.supported, facts.partial, facts.unsupported) == (checked, checked - 1, 0, 1)
    assert facts.unsupported_share == round(1 / checked, 2)
    told = compute_facts(record, report).as_text()  # what the critic reads
    assert f"claim check (cited sentences against their passages, by the model): {checked} checked; " in told
    assert f"{checked - 1} supported, 0 partly, 1 unsupported" in told


async def test_a_claim_removed_in_revision_is_counted_as_removed(tmp_path):
    def remove(text: str) -> str:
        return re.sub(re.escape(UNSUPPORTED) + r" \[\d+\]\. ?", "", text)

    result = await run(tmp_path, ResponderModel(Writer(remove)))
    report = result.report_path.read_text(encoding="utf-8")
    assert UNSUPPORTED not in body(report) and DISPUTED not in body(report)
    assert "0 marked disputed, 1 removed in revision." in limitations(report)
    (bad,) = [v for v in record_of(result)["claim_check"]["verdicts"] if v["verdict"] == "unsupported"]
    assert bad["outcome"] == "removed"


async def test_without_a_revision_the_program_marks_the_claim_and_the_report_is_approved(tmp_path):
    model = ResponderModel(Writer())
    result = await run(tmp_path, model, max_revisions=0)
    report = result.report_path.read_text(encoding="utf-8")
    assert not model.calls("revise")
    assert f"{DISPUTED} {UNSUPPORTED} [{vacuum_number(report)}]." in body(report)
    assert "1 marked disputed, 0 removed in revision." in limitations(report)
    last = record_of(result)["iterations"][-1]
    assert last["decision"] == "proceed" and last["critical_count"] == 0 and last["reason"] == "approved"
    assert "Unresolved after review" not in report  # a marked claim is no open critical issue


async def test_a_quote_that_is_not_in_the_passage_makes_the_verdict_partial(tmp_path):
    class Misquoting(ResearchResponder):
        def _skeptic(self, system: str, user: str) -> dict:
            answer = super()._skeptic(system, user)
            for item in answer["claims"]:
                item["quote"] = "VACUUM deletes the table file" if item["n"] == 1 else item["quote"]
            return answer

    model = ResponderModel(Misquoting())
    result = await run(tmp_path, model)
    verdicts = record_of(result)["claim_check"]["verdicts"]
    assert verdicts[0]["verdict"] == "partial" and verdicts[0]["note"] == "the quote is not in the passage"
    assert {v["verdict"] for v in verdicts[1:]} == {"supported"}
    report = result.report_path.read_text(encoding="utf-8")
    assert "; 0 supported" not in report and ", 1 partly, 0 marked disputed" in limitations(report)
    assert not model.calls("revise")  # a partial claim is a warning, not a critical issue
    assert record_of(result)["iterations"][-1]["warning_count"] >= 1


async def test_a_skeptic_whose_answers_cannot_be_used_leaves_claims_not_checked(tmp_path, scripted_model):
    responder = ResearchResponder()

    def use(request):
        return responder.answer(request.stage, request.system, request.user)

    scripted_model.enqueue("decompose", use).enqueue("relevance", use).enqueue("draft", use)  # 4 sources, one call
    scripted_model.enqueue("skeptic", INVALID, times=3)
    result = await run(tmp_path, scripted_model)
    report = result.report_path.read_text(encoding="utf-8")
    line = next(line for line in limitations(report).splitlines() if "Claims not checked" in line)
    assert line.startswith("- Claims not checked: the skeptic gave no usable answer (the skeptic stage got invalid")
    block = record_of(result)["claim_check"]
    assert block["checked"] == 0 and block["verdicts"] == [] and block["skipped"].startswith("the skeptic gave")
    record = read_run_record(result.run_record_path)
    facts = measure_run(record, report, now=datetime.now(UTC)).claims
    assert facts.checked == 0 and facts.unsupported_share is None


async def test_the_quick_mode_checks_citations_lexically_only(tmp_path):
    model = ResponderModel(Writer())
    result = await run(tmp_path, model, mode="quick")
    assert not model.calls("skeptic") and not model.calls("claims")
    report = result.report_path.read_text(encoding="utf-8")
    assert "- Claims not checked: the quick mode checks citations lexically only." in limitations(report)
    record = read_run_record(result.run_record_path)
    facts = measure_run(record, report, now=datetime.now(UTC)).claims
    assert facts.checked == 0 and facts.unsupported_share is None


class Overlap(ResponderModel):
    """The responder model, whose skeptic call answers only once a claims call has started and
    whose claims calls answer only once the skeptic's has: the calls can only end if they run
    side by side (in one round). A broken overlap fails after ``guard`` seconds, never passes."""

    def __init__(self, responder: ResearchResponder, guard: float = 60.0) -> None:
        super().__init__(responder)
        self.started = {"skeptic": asyncio.Event(), "claims": asyncio.Event()}
        self.guard = guard

    async def complete(self, request):
        if request.stage in self.started:
            self.started[request.stage].set()
            other = "claims" if request.stage == "skeptic" else "skeptic"
            async with asyncio.timeout(self.guard):
                await self.started[other].wait()
        return await super().complete(request)


async def test_a_list_over_the_budget_is_split_across_calls_in_the_skeptic_round(tmp_path):
    model = Overlap(Writer())
    result = await run(tmp_path, model, claim_tokens=300, llm_concurrency=4, lean=True)
    calls = model.calls("claims")
    assert len(model.calls("skeptic")) == 1 and 1 <= len(calls) <= 3  # at most one call per slot
    asked = [c.n for r in (*model.calls("skeptic"), *calls) for c in asked_claims(r.user)]
    assert len(asked) == len(set(asked))
    block = record_of(result)["claim_check"]
    assert sorted(v["number"] for v in block["verdicts"]) == sorted(asked)


async def test_at_concurrency_one_the_list_is_capped_to_the_skeptic_call(tmp_path):
    model = ResponderModel(Writer())
    result = await run(tmp_path, model, claim_tokens=300, llm_concurrency=1, lean=True)
    assert not model.calls("claims")
    asked = asked_claims(model.calls("skeptic")[0].user)
    block = record_of(result)["claim_check"]
    assert block["checked"] == len(asked) < block["cited"]
    assert re.search(r"did not fit in the skeptic's call \(one model slot\)", block["not_checked"])
    report = result.report_path.read_text(encoding="utf-8")
    assert f"Claims checked against their sources: {len(asked)} of {block['cited']} cited sentences" in report


@pytest.mark.parametrize("mode", ["standard", "deep"])
async def test_every_cited_sentence_in_deep_and_the_weak_ones_first_in_standard(tmp_path, mode):
    model = ResponderModel(Writer())
    result = await run(tmp_path, model, mode, claim_tokens=600)
    block = record_of(result)["claim_check"]
    asked = [c for r in (*model.calls("skeptic"), *model.calls("claims")) for c in asked_claims(r.user)]
    if mode == "deep":
        assert block["checked"] == block["cited"] == len(asked)
    else:
        assert block["checked"] == len(asked) < block["cited"]
        weak = [c for c in asked if "bears directly on the question" in c.sentence or "several angles" in c.sentence]
        assert len(weak) == 5  # the summary and every finding: the lexical check finds them weak


async def test_sentences_the_skeptic_gives_no_verdict_on_are_counted_as_not_checked(tmp_path):
    class Forgetful(ResearchResponder):
        def _skeptic(self, system: str, user: str) -> dict:
            answer = super()._skeptic(system, user)
            answer["claims"] = answer["claims"][:3]
            return answer

    model = ResponderModel(Forgetful())
    result = await run(tmp_path, model)
    block = record_of(result)["claim_check"]
    asked = len(asked_claims(model.calls("skeptic")[0].user))
    assert block["checked"] == 3 and block["not_checked"] == f"{asked - 3} left without a verdict by the model"
    report = result.report_path.read_text(encoding="utf-8")
    assert f"Some were not checked: {asked - 3} left without a verdict by the model." in limitations(report)


async def test_a_skeptic_that_times_out_leaves_claims_not_checked(tmp_path, scripted_model):
    responder = ResearchResponder()
    queue(scripted_model, responder, skeptic=[LLMTimeout("model call for stage skeptic timed out after 180s (2 attempts)")])
    result = await run(tmp_path, scripted_model)
    report = result.report_path.read_text(encoding="utf-8")
    assert ("- Claims not checked: the skeptic gave no usable answer (model call for stage skeptic timed out "
            "after 180s (2 attempts)).") in limitations(report)  # fmt: skip
    block = record_of(result)["claim_check"]
    assert block["checked"] == 0 and block["verdicts"] == []
    facts = measure_run(read_run_record(result.run_record_path), report, now=datetime.now(UTC)).claims
    assert facts.checked == 0 and facts.unsupported_share is None


class HangingAt(ResponderModel):
    """The responder model, whose first call of ``stage`` moves the loop's clock past the run's
    deadline and never answers: the deadline catches the run there."""

    def __init__(self, responder: ResearchResponder, stage: str, loop: JumpingLoop) -> None:
        super().__init__(responder)
        self.stage, self.loop = stage, loop

    async def complete(self, request):
        if request.stage == self.stage:
            self.loop.offset += 7200.0
            await asyncio.Event().wait()
        return await super().complete(request)


def run_to_the_deadline(tmp_path, stage: str):
    loop = JumpingLoop()
    try:
        return loop.run_until_complete(research(
            QUERY, settings=settings_for(tmp_path, claim_tokens=ALL, run_timeout=3600.0),
            model=HangingAt(Writer(), stage, loop), providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none,
        ))  # fmt: skip
    finally:
        loop.close()


def test_a_draft_the_deadline_catches_in_revision_goes_out_with_the_claim_marked(tmp_path):
    result = run_to_the_deadline(tmp_path, "revise")
    report = result.report_markdown
    assert record_of(result)["stop_reason"] == "deadline"
    assert f"{DISPUTED} {UNSUPPORTED} [{vacuum_number(report)}]." in body(report)
    assert "1 marked disputed, 0 removed in revision." in limitations(report)
    assert "Unresolved after review" not in report  # marked, the claim is no open critical issue


def test_a_draft_the_deadline_catches_before_the_skeptic_says_its_claims_were_not_checked(tmp_path):
    result = run_to_the_deadline(tmp_path, "skeptic")
    assert ("- Claims not checked: the run reached its deadline before the skeptic answered."
            in limitations(result.report_markdown))  # fmt: skip
    assert record_of(result)["claim_check"]["checked"] == 0
