"""Score each source 1-5 against the question, several sources to a call.

:func:`plan_batches` puts several sources in one call, within a budget of source tokens per
call (``relevance_batch_tokens``; the default gives a standard run's 12 sources one call), and
within what the model's context window leaves beside the answer, where the window is known.
Each call repeats the instructions and the question, so fewer calls send fewer tokens; on a
server with one slot every call is a round of its own. A run scores its sources while the
writer drafts from them (:mod:`research_agent.run.first_draft`), so a batch's longer answer
costs no round. ``slots`` asks for the sources spread over at least that many calls instead
(``bench/bench_pipeline.py`` shows the numbers of both).

Every source still gets its 1-5 score and reason, or an explicit unscored state. A score whose
reason says nothing (debris, :func:`research_agent.text.debris.says_nothing`, with identifiers
and ``error`` read as schema vocabulary: ``type:string``, ``error``, ``no_data``) is no answer: its source is left out of the
answer, as one the model did not score. A batch
answer that leaves sources out is asked again for just those, once, in one smaller batch; a
batch whose call failed (or whose answer scored none) is asked again in halves. Ids outside
the batch and repeated ids are ignored and counted in one warning; the sources left out
unscored in another, with how many were asked again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import prompts
from ..errors import LLMError, LLMUnavailable, ModelNotFound
from ..llm import ChatModel, ChatRequest
from ..sources import ScoredSource, Source
from ..text.controls import one_line
from ..text.debris import says_nothing
from ..text.passages import estimate_tokens, select_passages
from ..text.sanitize import sanitize, wrap_data
from ._fallback import Notify
from ._schema import array, integer, obj, scale, string
from ._sub_queries import schema_pair
from .gate import Gate, GateDecision, decide_gate

__all__ = [
    "score_sources",
    "plan_batches",
    "relevance_excerpt",
    "decide_gate",
    "Gate",
    "GateDecision",
    "SNIPPET_SCORE_CAP",
    "MAX_BATCH",
    "SCHEMA",
    "reason_problem",
]

# A bound on the answer: a grammar-constrained local server can otherwise generate whitespace
# until its context is full. Generous, so a reasoning model's thinking still fits.
MAX_ANSWER_TOKENS = 1500

log = logging.getLogger(__name__)

MAX_BATCH = 12  # sources in one call at most, whatever the budget
SCHEMA = obj(scores=array(obj(id=integer(), score=scale(1, 5), reason=string(300)), min_items=1, max_items=MAX_BATCH))
SNIPPET_SCORE_CAP = 3  # a source read only from its search snippet can never rank as a full read
NO_SCORE = "the model gave no score for it"


def relevance_excerpt(source: Source, query: str, *, token_budget: int) -> str:
    """The passages of ``source`` that best match the sub-queries that found it (and the
    question), within ``token_budget``: what relevance reads instead of the whole text."""
    queries = (*source.sub_queries, query)
    excerpt = select_passages(source.text, queries, token_budget=token_budget, target_words=40, max_words=80)
    return sanitize(excerpt, max_chars=token_budget * 4)


def plan_batches(sizes: Sequence[int], budget: int, slots: int) -> list[list[int]]:
    """The sources (indices into ``sizes``, their excerpt tokens) of each call, in order.

    Filled up to ``budget`` tokens a call (at least one source, at most :data:`MAX_BATCH`);
    then, while there are fewer calls than ``slots`` (calls that run side by side), the
    sources are spread over more calls, down to one each.
    """
    groups: list[list[int]] = []
    used = 0
    for index, size in enumerate(sizes):
        if not groups or (used + size > budget or len(groups[-1]) >= MAX_BATCH):
            groups.append([])
            used = 0
        groups[-1].append(index)
        used += size
    wanted = min(len(sizes), max(len(groups), slots))
    if wanted > len(groups):
        per, extra = divmod(len(sizes), wanted)
        bounds = [i * per + min(i, extra) for i in range(wanted + 1)]
        groups = [list(range(bounds[i], bounds[i + 1])) for i in range(wanted)]
    return groups


@dataclass
class _Tally:
    """What the batch answers did besides scoring: ids they should not have named (outside the
    batch, or repeated), and the sources they left without a score that were asked again."""

    outside: int = 0
    repeated: int = 0
    asked_again: int = 0
    empty: list[str] = field(default_factory=list)  # reasons that said nothing (their scores were not taken)

    def notes(self, scored: Sequence[ScoredSource]) -> list[str]:
        """The warnings to give: stray ids, and the sources left out unscored."""
        notes = []
        if self.outside or self.repeated:
            notes.append(self.note())
        if self.empty:
            notes.append(f"{len(self.empty)} relevance score(s) came with a reason that says nothing (the first "
                         f"{self.empty[0][:60]!r}); those scores were not taken: their sources count as not scored")
        unscored = [item for item in scored if item.score is None]
        if unscored:
            note = f"{len(unscored)} source(s) could not be scored and are left out ({unscored[0].reason})"
            if self.asked_again:
                note += (f"; {self.asked_again} source(s) left without a score had been asked again in smaller "
                         "batches first")  # fmt: skip
            notes.append(note)
        return notes

    def note(self) -> str:
        """The one line that tells the user, in plain words (a count of zero left out)."""
        parts = [f"{self.outside} score(s) for sources it was not asked about"] if self.outside else []
        parts += [f"{self.repeated} second score(s) for the same source"] if self.repeated else []
        return f"the model's relevance answers held {' and '.join(parts)}; those were ignored"


@dataclass(frozen=True)
class _Item:
    source: Source
    excerpt: str


def _entry(n: int, item: _Item, folder: str) -> str:
    note = " (search snippet only)" if item.source.snippet_only else ""
    title = sanitize(item.source.title, max_chars=200, single_line=True)
    return f"[{n}] {title}{note}\n" + wrap_data(f"source {n}: {item.source.location[len(folder):]}", item.excerpt)


def _folder(items: Sequence[_Item]) -> str:
    """The folder every source of a batch of files lies in ("" for a batch with a page from the
    web): their locations are shown under it, the part that tells one file from another."""
    if not items or not all(item.source.is_file for item in items):
        return ""
    common = os.path.commonpath([item.source.location for item in items]) if len(items) > 1 else ""
    return common.rstrip("/") + "/" if common.startswith("/") and len(common) > 1 else ""


async def _ask(model: ChatModel, query: str, items: Sequence[_Item], lessons: str, tally: _Tally) -> dict[int, tuple[int, str]]:
    """(score, reason) by 0-based position in ``items``, for the sources the answer scored."""
    folder = _folder(items)
    prompt = prompts.render(
        "relevance",
        query=query,
        lessons=f"\n{lessons}\n" if lessons else "",
        sources="\n\n".join(_entry(n, item, folder) for n, item in enumerate(items, start=1)),
    )
    request = ChatRequest(stage="relevance", system=prompt.system, user=prompt.user, schema=SCHEMA, temperature=0.0,
                          tier="fast", max_tokens=MAX_ANSWER_TOKENS)  # fmt: skip
    answered: dict[int, tuple[int, str]] = {}
    for entry in (await model.complete(request)).data["scores"]:
        position = int(entry["id"]) - 1
        if not 0 <= position < len(items):
            tally.outside += 1
        elif position in answered:
            tally.repeated += 1
        elif reason_problem(reason := one_line(entry["reason"])[:300]) is not None:
            tally.empty.append(reason)
        else:
            answered[position] = (int(entry["score"]), reason)
    return answered


# Besides schema vocabulary, what a scoring answer writes where it gives no reason: the key of a
# JSON error object, and identifiers ("no_data"), which name a value, not a reason.
_NO_REASON = frozenset({"error"})
_IDENTIFIER = re.compile(r"\b\w+_\w+\b")


def reason_problem(reason: str) -> str | None:
    """Why a relevance ``reason`` is no reason (debris by :func:`says_nothing`, identifiers and the
    word "error" read as schema vocabulary; or a schema's ``key:value``), or None."""
    pair = schema_pair(reason)
    if pair is not None:
        return f"is a schema fragment ({pair.strip()!r})"
    return says_nothing(_IDENTIFIER.sub(" ", reason), _NO_REASON)


def _scored(item: _Item, answer: tuple[int, str] | None, why_not: str) -> ScoredSource:
    if answer is None:
        return ScoredSource(item.source, None, why_not[:200])
    score, reason = answer
    if item.source.snippet_only and score > SNIPPET_SCORE_CAP:
        score, reason = SNIPPET_SCORE_CAP, f"{reason} (capped: snippet only)"
    return ScoredSource(item.source, score, reason)


def _again(items: list[_Item], missing: list[int], failed: LLMError | None) -> list[list[int]]:
    """The batches in which the sources an answer left out are asked again: all in one (fewer
    than the batch held), or, when none was scored, in halves; none after a call that failed
    on one source, or on an endpoint that cannot answer (another call would fail the same)."""
    if not missing or isinstance(failed, LLMUnavailable | ModelNotFound) or (failed is not None and len(items) == 1):
        return []
    size = len(missing) if len(missing) < len(items) else max(1, -(-len(items) // 2))
    return [missing[i : i + size] for i in range(0, len(missing), size)]


async def _score_batch(model: ChatModel, query: str, items: list[_Item], lessons: str, tally: _Tally) -> list[ScoredSource]:
    """Score one batch; the sources its answer left without a score (all of them when the call
    failed) are asked again, once, in smaller batches (:func:`_again`) before they are left out."""
    answered: dict[int, tuple[int, str]] = {}
    failed: LLMError | None = None
    try:
        answered = await _ask(model, query, items, lessons, tally)
    except LLMError as exc:
        # One unscorable batch must not sink the run: its sources are kept out, visibly.
        log.info("could not score %d source(s): %s", len(items), exc)  # score_sources tells the user once
        failed = exc
    why_not = {i: str(failed) if failed else NO_SCORE for i in range(len(items))}
    batches = _again(items, [i for i in range(len(items)) if i not in answered], failed)
    tally.asked_again += sum(len(batch) for batch in batches)

    async def again(batch: list[int]) -> None:
        try:
            scored = await _ask(model, query, [items[i] for i in batch], lessons, tally)
        except LLMError as exc:
            why_not.update(dict.fromkeys(batch, str(exc)))
        else:
            answered.update({batch[k]: answer for k, answer in scored.items()})

    await asyncio.gather(*(again(batch) for batch in batches))
    return [_scored(item, answered.get(i), why_not[i]) for i, item in enumerate(items)]


_ENTRY_TOKENS = 40  # an entry's own lines besides its excerpt: its number, title and data markers


async def _room(model: ChatModel, query: str, lessons: str) -> int:
    """Excerpt tokens a call has room for beside its instructions and answer, in the model's
    context window (a large number when the window is not known)."""
    budget = await model.context_budget()
    if budget is None:
        return 1 << 30
    prompt = prompts.render("relevance", query=query, lessons=lessons, sources="")
    fixed = estimate_tokens(prompt.system) + estimate_tokens(prompt.user)
    answer = MAX_ANSWER_TOKENS // 2  # a batch's scores and reasons take a few hundred tokens
    return max(1, budget.prompt_room(answer) - fixed - MAX_BATCH * _ENTRY_TOKENS)


async def score_sources(
    model: ChatModel,
    query: str,
    sources: Sequence[Source],
    *,
    token_budget: int,
    lessons_block: str = "",
    batch_tokens: int = 1800,
    slots: int = 1,
    notify: Notify | None = None,
) -> tuple[ScoredSource, ...]:
    """Score every source from its best-matching passages within ``token_budget`` (see
    :func:`relevance_excerpt`), in calls planned by :func:`plan_batches` (``batch_tokens``
    a call, ``slots`` calls side by side), run concurrently (the model bounds its own
    concurrency). Ids an answer should not have named are counted in one ``notify``; so are the
    sources left out unscored (and how many of the sources left without a score were asked again)."""
    items = [_Item(s, relevance_excerpt(s, query, token_budget=token_budget)) for s in sources]
    batch_tokens = min(batch_tokens, await _room(model, query, lessons_block))
    batches = plan_batches([estimate_tokens(item.excerpt) for item in items], batch_tokens, slots)
    tally = _Tally()
    scored = await asyncio.gather(
        *(_score_batch(model, query, [items[i] for i in batch], lessons_block, tally) for batch in batches)
    )
    result = tuple(item for batch in scored for item in batch)
    if notify is not None:
        for note in tally.notes(result):
            notify(note)
    return result
