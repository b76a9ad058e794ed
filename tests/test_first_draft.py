"""Three rounds for a standard run (issue 46): the writer drafts while relevance scores the sources.

The draft stands where relevance agrees with it (renumbered to the kept sources' order); a draft
that cites a source relevance drops is written again from the kept ones; with one model slot
relevance goes first. The skeptic reads the claim list instead of the draft where the check covers
it. Concurrency is shown with events (relevance answers only once the draft was asked for), never
with timings.
"""

from __future__ import annotations

import asyncio

from research_agent.claims import CitedClaim
from research_agent.claims.select import pack
from research_agent.llm.budget import ContextBudget
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.run.first_draft import disagreement, pruned
from research_agent.sources import ScoredSource, Source
from research_agent.stages._skeptic_input import ELIDED, draft_view
from research_agent.stages.claim_check import claims_prompt
from research_agent.stages.gate import Gate
from research_agent.stages.relevance import score_sources
from research_agent.stages.writing.draft_text import ReportDraft
from tests.support.answers import relevance_blocks, scored_each
from tests.support.claims import asked_claims
from tests.support.pipeline import DOCS, QUERY, DocsProvider, record_of, settings_for
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel


class Ordered(ResponderModel):
    """Relevance answers only after the draft was asked for (the run waits for it: a deadlock if
    the two are not side by side); with ``relevance_first`` the draft asserts relevance is done."""

    def __init__(self, responder, *, relevance_first: bool = False) -> None:
        super().__init__(responder)
        self.relevance_first = relevance_first
        self.draft_asked = asyncio.Event()
        self.relevance_done = 0

    async def complete(self, request):
        if request.stage == "draft":
            assert not self.relevance_first or self.relevance_done, "the draft was asked for before relevance answered"
            self.draft_asked.set()
        if request.stage == "relevance" and not self.relevance_first:
            await asyncio.wait_for(self.draft_asked.wait(), 60)
        answer = await super().complete(request)
        self.relevance_done += request.stage == "relevance"
        return answer


FIVE = {**DOCS, "freeze.md": ("Freezing", "VACUUM FREEZE marks old PostgreSQL tuples frozen so that transaction ids "
                                "can wrap around safely, and VACUUM reclaims space from dead tuples as it goes.")}


async def _run(tmp_path, model, **settings):
    return await research(QUERY, settings=settings_for(tmp_path, **settings), model=model,
                          providers=[DocsProvider(tmp_path, FIVE)], lessons=lambda d: LessonSelection.none(d))  # fmt: skip


async def test_the_draft_is_written_while_relevance_scores_and_stands_when_relevance_agrees(tmp_path) -> None:
    model = Ordered(ResearchResponder(viability=80))
    result = await _run(tmp_path, model)
    assert [len(model.calls(s)) for s in ("decompose", "relevance", "draft", "skeptic")] == [1, 1, 1, 1]
    assert result.gate_decision == "full_report" and [i.decision for i in result.iterations] == ["proceed"]
    record = record_of(result)
    assert not any("set aside" in w for w in record.get("warnings", []))


async def test_with_one_slot_relevance_goes_first(tmp_path) -> None:
    model = Ordered(ResearchResponder(viability=80), relevance_first=True)
    await _run(tmp_path, model, llm_concurrency=1)
    assert len(model.calls("draft")) == 1


class DropsBloat(ResearchResponder):
    """Scores the bloat page 1 (off topic); every other page as the responder does."""

    def _relevance(self, system: str, user: str) -> dict:
        answer = super()._relevance(system, user)
        for n, block in relevance_blocks(user):
            if "Table bloat" in block:
                entry = next(e for e in answer["scores"] if e["id"] == n)
                entry.update(score=1, reason="about bloat, not the question")
        return answer


async def test_what_only_a_source_relevance_dropped_says_is_removed_from_the_draft(tmp_path) -> None:
    model = Ordered(DropsBloat(viability=80))
    result = await _run(tmp_path, model)
    (draft,) = model.calls("draft")
    assert "Table bloat" in draft.user  # the writer read it while relevance scored it
    report = result.report_path.read_text(encoding="utf-8")
    assert "bloat.md" not in report.split("## Sources", 1)[1] and "Table bloat bears directly" not in report
    assert "Regular VACUUM prevents bloat" not in report  # a sentence only the dropped page states
    warnings = record_of(result)["warnings"]
    assert any("citing only sources relevance did not keep were removed" in w for w in warnings), warnings


class DropsTheFirstThree(ResearchResponder):
    """Scores the first three sources of the batch 1: the draft's summary cites only them."""

    def _relevance(self, system: str, user: str) -> dict:
        answer = super()._relevance(system, user)
        for entry in answer["scores"]:
            if entry["id"] <= 3:
                entry.update(score=1, reason="off topic")
        return answer


async def test_a_draft_left_without_its_summary_is_written_again_from_the_kept_sources(tmp_path) -> None:
    model = Ordered(DropsTheFirstThree(viability=80))
    result = await _run(tmp_path, model)
    first, again = model.calls("draft")
    assert first.user.count("<<<DATA source ") == 5 and again.user.count("<<<DATA source ") == 2
    assert result.gate_decision == "short_report"
    assert any("set aside (nothing usable is left" in w for w in record_of(result)["warnings"])


def _source(name: str) -> Source:
    return Source(f"/d/{name}.md", name, f"/d/{name}.md", "/d", f"{name} text", "local")


def test_a_kept_draft_keeps_the_writers_order_and_loses_what_only_a_dropped_source_says() -> None:
    a, b, c = _source("a"), _source("b"), _source("c")
    written_from = Gate("full_report", tuple(ScoredSource(s, None, "") for s in (a, b, c)), (), (), 1, "")
    gate = Gate("full_report", (ScoredSource(c, 5, ""), ScoredSource(a, 4, "")), (ScoredSource(b, 1, ""),), (), 1, "")
    assert disagreement(written_from, gate) == ""
    draft = ReportDraft("A says so [1] and C too [3]. B alone [2].", ("C [3].", "Only B [2]."),
                        (("Body", "Both [1, 3]. B and A [2, 1]. B [2]."), ("Gone", "B only [2].")), ("None [1].",))
    kept = pruned(draft, written_from, gate)
    assert kept is not None and kept.removed == 4
    assert kept.draft.texts == ("A says so [1] and C too [2].", "C [2].", "Both [1, 2]. B and A [1].")
    assert kept.draft.limitations == ("None [1].",) and [h for h, _ in kept.draft.sections] == ["Body"]
    assert pruned(ReportDraft("B says so [2].", ("A [1] is enough to keep the draft going on.",), (), ()),
                  written_from, gate) is None  # no summary left
    unread = Gate("full_report", (*gate.kept, ScoredSource(_source("d"), 4, "")), (), (), 1, "")
    assert disagreement(written_from, unread) == "relevance kept a source the writer did not read"


def test_the_skeptic_reads_listed_sentences_by_number_and_the_stated_ones_as_one_mark() -> None:
    review = ("# Q\n\n## Executive Summary\n\nThe answer is X [1].\n\n## Key Findings\n\n- Finding one [2].\n\n"
              "## Body\n\nStated one [1]. Stated two [2]. Uncited words here. Listed [2].\n\nStated three [1].\n\n"
              "Stated four [2].\n\n## Limitations & Gaps\n\n- Few sources.\n")  # fmt: skip
    view = draft_view(review, listed={2, 5}, elided={1, 3, 4, 6, 7})
    assert "# Q" not in view and "The answer is X [1]." in view  # the summary whole, though "stated"
    assert "- (claim 2)" in view and f"{ELIDED} Uncited words here. (claim 5)\n\n{ELIDED}\n\n## Lim" in view
    assert view.count(ELIDED) == 2
    assert view.endswith("## Limitations & Gaps\n\n- Few sources.")


def test_a_passage_shown_under_one_claim_is_pointed_to_from_the_next_and_counted_once() -> None:
    shared = (1, " ".join(["words"] * 100))
    one = CitedClaim(1, "First claim.", (1,), (shared,))
    two = CitedClaim(2, "Second claim.", (1,), (shared,))
    prompt = claims_prompt([one, two])
    assert prompt.count("words words") < 60 and "(the same passage as under (1))" in prompt
    assert [c.passages for c in asked_claims(prompt)] == [(shared,), (shared,)]  # the fake reads it back
    calls, left_out = pack([one, two], budget=one.tokens + 40, slots=1)
    assert calls == [[one, two]] and left_out == 0


class Windowed(ResponderModel):
    async def context_budget(self):
        return ContextBudget(1600, "test")


async def test_relevance_batches_fit_the_context_window_and_show_file_paths_under_their_folder() -> None:
    model = Windowed(ResearchResponder())
    sources = [Source(f"/corpus/docs/{n}.md", f"Doc {n}", f"/corpus/docs/{n}.md", "/corpus", "vacuum " * 300, "local")
               for n in range(4)]  # fmt: skip
    await score_sources(model, "How does vacuum work?", sources, token_budget=150, batch_tokens=1800)
    calls = model.calls("relevance")
    assert len(calls) == 4  # a 1,600-token window leaves room for one excerpt beside the answer
    model = ResponderModel(ResearchResponder())
    await score_sources(model, "How does vacuum work?", sources, token_budget=150, batch_tokens=1800)
    (call,) = model.calls("relevance")
    assert "<<<DATA source 1: 0.md>>>" in call.user and "/corpus/docs" not in call.user
    assert scored_each  # (the helper the batch tests use reads these entries too)
