"""Work a run does while it waits for the model: what the next step needs and the answer does not change.

A run spends most of its time waiting for the model, its process idle; work that waits for the
answer lands between two rounds instead, where the user waits for it. Two pieces are made during
the wait, in a worker thread, once the request is on its way (before, their CPU would delay the
request: the threads share one interpreter lock):

* :func:`read_ahead`: while the writer writes, the sources it reads are read as the claim check
  reads them (:func:`research_agent.claims.select.read_sources`), so that the check between the
  draft and the skeptic reads only the draft;
* :func:`lint_meanwhile`: while the skeptic reads the draft, the draft is linted (:func:`lint`;
  a run with custom rules runs them in the review, as before), and its review adds the skeptic's
  findings to that lint (:func:`research_agent.review.review.review_linted`).

Nothing depends on the timing: a source not read ahead is read when the check needs it, and a
lint is the same whenever it is made.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from ..claims.select import read_sources
from ..review.review import Linted, lint_draft
from ..review.rules import Rule
from ..sources import Source
from ..stages.writing.draft_text import CUT_NOTES
from ..stages.writing.synthesize import ReportDraft, writer_text
from .assembly import Run

__all__ = ["read_ahead", "lint_meanwhile", "lint"]

log = logging.getLogger(__name__)


def read_ahead(run: Run, sources: Sequence[Source]) -> Callable[[], None]:
    """What starts reading ``sources`` for the claim check in a thread, at its first call (the
    writer's first callback: its request is out); it does nothing when the run checks no claim."""
    settings = run.settings
    mode = settings.mode
    wanted = mode.claim_check != "none" and mode.skeptic and settings.check_claims
    started = not wanted

    def start() -> None:
        nonlocal started
        if not started:
            started = True
            texts = [writer_text(s, token_budget=mode.source_tokens) for s in sources]
            reading = asyncio.get_running_loop().run_in_executor(None, read_sources, texts)
            reading.add_done_callback(_dropped)

    return start


def lint(run: Run, markdown: str, draft: ReportDraft, *, rules: Sequence[Rule] | None = None) -> Linted:
    """The run's lint of ``markdown`` (the review's reading of ``draft``); ``rules``: the custom
    rules it runs (by default the run's active ones, within time limits read from the event loop).
    A draft cut short is short for a reason the report states."""
    rules = run.ledger.active_rules(run.rules) if rules is None else rules
    return lint_draft(
        markdown, target_words=run.settings.mode.target_words, rules=rules,
        rule_limits=run.rule_limits() if rules else None, short_reason=CUT_NOTES.get(draft.cut, draft.cut),
    )  # fmt: skip


def lint_meanwhile(run: Run, markdown: str, draft: ReportDraft) -> asyncio.Task[Linted | None]:
    """:func:`lint` in a thread, started once the calls scheduled before its task's first step have
    taken theirs (the skeptic's: its request goes out first); None when the run has custom rules:
    they run in the review, in its stage and under its deadline, as a slow rule is reported. A lint
    the run does not wait for (it failed first) is dropped."""

    async def linted() -> Linted | None:
        if run.ledger.active_rules(run.rules):
            return None
        await asyncio.sleep(0)  # one turn of the loop: the skeptic's call is sent meanwhile
        return await asyncio.to_thread(lint, run, markdown, draft, rules=())

    task = asyncio.ensure_future(linted())
    task.add_done_callback(_dropped)
    return task


def _dropped(done: asyncio.Future[Any]) -> None:
    """Retrieve what a piece of work ended with, so that none is reported as never retrieved; a
    failure is logged (its owner, if it waits for it, raises it)."""
    if not done.cancelled() and done.exception() is not None:
        log.debug("work made while waiting for the model failed", exc_info=done.exception())
