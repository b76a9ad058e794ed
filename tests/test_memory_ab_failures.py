"""``memory ab`` when a critique fails or stalls, and when it is stopped (issues 23.6 and 26.12-13).

A critique that fails or runs out of the pair's time keeps its pair, marked incomplete with the
reason, and the A/B goes on; ``complete`` still means "did not stop early"; ``failed_count``
and the summary line say what failed. SIGTERM saves the finished pairs as Ctrl-C does (143).
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import yaml

from research_agent.errors import InvalidModelOutput
from research_agent.interrupts import sigterm_as_ctrl_c
from research_agent.llm import ChatRequest, ChatResponse
from research_agent.memory.effects.ab import AbLedger, ab_result, run_ab
from research_agent.pipeline import research
from tests.support.ab import QUESTIONS, ab_deps, run_ab_command, saved_ab, ticking
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel, on_call
from tests.support.streams import JumpingLoop


def fail_critique(number: int):
    def fail() -> None:
        raise InvalidModelOutput("the critique answer had no scores", stage="critique")

    return on_call("critique", number, fail)


def test_a_failed_critique_keeps_its_pair_incomplete_and_the_ab_goes_on(tmp_path, corpus):
    model = ResponderModel(ResearchResponder(), before=fail_critique(2))  # question 1's second critique
    result = run_ab_command(tmp_path, corpus, model)
    assert result.exit_code == 0, result.output
    _, data = saved_ab(tmp_path / "reports")
    assert data["complete"] is True, "complete still means the A/B did not stop early"
    assert (data["complete_pairs"], data["failed_count"], data["failed"]) == (1, 1, [])
    first, second = data["pairs"]
    assert first["complete"] is False and second["complete"] is True and "incomplete" not in second
    assert first["incomplete"] == "the adaptive critique failed: the critique answer had no scores"
    assert first["adaptive"]["scores"] is None and first["adaptive"]["critique_error"]
    assert first["baseline"]["scores"] is not None, "the arm whose critique worked is kept"
    assert all(m["n"] == 1 for m in data["dimensions"].values()), "only the complete pair is measured"
    assert "1 of 2 pairs complete; 1 failed" in result.stdout
    assert "question 1/2 incomplete: the adaptive critique failed" in result.stderr
    assert "question 2/2 done" in result.stderr


def test_no_signed_zero_is_printed(tmp_path, corpus):
    result = run_ab_command(tmp_path, corpus, ResponderModel(ResearchResponder()))
    assert result.exit_code == 0, result.output
    assert "-0.00" not in result.stdout and "+0.00" not in result.stdout
    assert "│ 0.00 " in result.stdout and "[0.00, 0.00]" not in result.stdout  # no interval of zero width
    assert "2 of 2 pairs complete" in result.stdout


class StallingModel(ResponderModel):
    """Answers the first critique, then lets the clock jump to just before the pair's end;
    the second critique never answers."""

    def __init__(self, clock: list[float], jump: float) -> None:
        super().__init__(ResearchResponder())
        self.clock, self.jump, self.critiques = clock, jump, 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if request.stage == "critique":
            self.critiques += 1
            if self.critiques == 2:
                await asyncio.Event().wait()  # stalled: only the deadline ends it
        answer = await super().complete(request)
        if request.stage == "critique" and self.critiques == 1:
            self.clock[0] += self.jump
        return answer


async def test_a_stalled_critique_ends_at_the_pairs_deadline_and_the_ab_goes_on(tmp_path, corpus):
    settings = ab_deps(tmp_path, None).load_settings({"corpus_dirs": (corpus,), "run_timeout": 100.0})
    clock = [0.0]
    model = StallingModel(clock, jump=99.98)  # 0.02 s of the pair's 100 s are left for the second critique
    ledger = AbLedger(len(QUESTIONS))
    await run_ab(QUESTIONS, settings, model=model, research=research, ledger=ledger, clock=ticking(),
                 monotonic=lambda: clock[0])  # fmt: skip
    first, second = ledger.pairs
    assert not first.complete and "the critique did not finish within the 0.02s left" in first.incomplete
    assert second.complete and ledger.failed == []
    result = ab_result(ledger, ab_id="ab-x", started=ticking()(), questions_file="q.txt", settings=settings,
                       complete=True)  # fmt: skip
    assert (result.complete_pairs, result.failed_count) == (1, 1)
    log = (settings.meta_dir / "critique.log").read_text(encoding="utf-8")
    assert "FAIL" in log and "did not finish within" in log


def test_sigterm_after_a_finished_pair_saves_it_and_exits_143(tmp_path, corpus):
    # The third first-plan (decompose) call starts question 2's first run: SIGTERM arrives right there.
    model = ResponderModel(ResearchResponder(), before=on_call("decompose", 3, lambda: signal.raise_signal(signal.SIGTERM)))
    before = signal.getsignal(signal.SIGTERM)
    with sigterm_as_ctrl_c():  # as research_agent.cli.main installs it for the whole process
        result = run_ab_command(tmp_path, corpus, model, "--json")
    assert result.exit_code == 143, result.output
    assert "terminated: kept 1 finished pair(s); saved to" in result.stderr and "Traceback" not in result.output
    path, data = saved_ab(tmp_path / "reports")
    assert data["complete"] is False and [p["question"] for p in data["pairs"]] == [QUESTIONS[0]]
    assert json.loads(result.stdout)["pairs"] == data["pairs"]
    assert signal.getsignal(signal.SIGTERM) == before, "the handler the A/B found is put back"
    assert isinstance(path, Path)


class FirstDraftCaught(ResponderModel):
    """The first draft streams a complete paragraph; then the clock jumps ``jump`` seconds (past
    the first run's deadline) and that writer never goes on. Every other call answers at once."""

    def __init__(self, loop: JumpingLoop, jump: float) -> None:
        super().__init__(ResearchResponder())
        self.loop, self.jump, self.drafts = loop, jump, 0

    async def stream(self, request: ChatRequest, on_tokens=None) -> ChatResponse:
        if request.stage == "draft":
            self.drafts += 1
            if self.drafts == 1:
                on_tokens(1, "## Summary\n\nVacuum marks the space of dead tuples as reusable [1].\n\n## Key")
                self.loop.offset += self.jump
                await asyncio.Event().wait()
        return await self.complete(request)


def test_a_deadline_during_the_first_runs_draft_publishes_it_and_the_other_arm_still_runs(tmp_path, corpus):
    # issue 32: the first run took the whole pair's time, so the question failed where `run` publishes
    settings = ab_deps(tmp_path, None).load_settings({"corpus_dirs": (corpus,), "run_timeout": 100.0})
    loop = JumpingLoop()
    ledger = AbLedger(1)
    try:
        loop.run_until_complete(run_ab(QUESTIONS[:1], settings, model=FirstDraftCaught(loop, 60.0), research=research,
                                       ledger=ledger, clock=ticking(), monotonic=loop.time))  # fmt: skip
    finally:
        loop.close()
    assert ledger.failed == [] and len(ledger.pairs) == 1
    (pair,) = ledger.pairs
    records = {arm: yaml.safe_load((settings.meta_dir / f"run-{getattr(pair, arm).run_id}.yaml").read_text())
               for arm in ("baseline", "adaptive")}  # fmt: skip
    first, second = (pair.first, "adaptive") if pair.first == "baseline" else (pair.first, "baseline")
    assert records[first]["stop_reason"] == "deadline" and records[first]["draft_cut"] == "deadline"
    assert records[second]["stop_reason"] != "deadline"
    assert pair.complete, "40 s were left of the pair for the second run and both critiques"


def test_a_run_the_deadline_catches_before_any_draft_fails_its_question_naming_its_share(tmp_path, corpus):
    settings = ab_deps(tmp_path, None).load_settings({"corpus_dirs": (corpus,), "run_timeout": 100.0})
    loop = JumpingLoop()

    class HangingPlanner(ResponderModel):
        async def complete(self, request: ChatRequest) -> ChatResponse:
            if request.stage == "decompose" and not self.calls("decompose"):
                self.requests.append(request)
                loop.offset += 60.0
                await asyncio.Event().wait()
            return await super().complete(request)

    ledger = AbLedger(1)
    try:
        loop.run_until_complete(run_ab(QUESTIONS[:1], settings, model=HangingPlanner(ResearchResponder()),
                                       research=research, ledger=ledger, clock=ticking(), monotonic=loop.time))  # fmt: skip
    finally:
        loop.close()
    assert ledger.pairs == [] and [f.error for f in ledger.failed] == [
        "the baseline run passed its 50s share of the pair's 100s deadline during the decompose stage "
        "(raise it with --timeout)"
    ]
