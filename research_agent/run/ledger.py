"""What a run accumulates as it goes, in one small object with named methods.

Every step of the story returns a frozen result; only these things grow across steps:
the sources scored so far (a later plan adds to them), the sub-queries asked and what
their searches found (and whether the user's source limit cut that), the iterations of the plan/write/review loop, the warnings, the search and fetch failures,
the custom lint rules skipped for overrunning their time budget, the latest draft (what a
run whose deadline passes publishes), the first draft while it streams (published in its
place when the deadline comes first), how many writer answers were cut short and the
replans not made (and why).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..progress import Progress
from ..record.parts import DroppedSubQuery, Iteration
from ..review.rules import Rule
from ..search.base import ProviderFailure
from ..sources import ScoredSource
from ..stages.decompose import Plan
from ..text.controls import one_line

if TYPE_CHECKING:
    from ..stages.gate import Gate
    from .writing import Written

__all__ = ["RunLedger", "KeptDraft", "DraftInProgress"]


@dataclass(frozen=True)
class KeptDraft:
    """The latest draft of the run, with the plan and gate it was written from."""

    plan: int
    gate: Gate
    written: Written


class DraftInProgress:
    """The text of the draft the writer is streaming, as it arrives (a TokenCallback)."""

    def __init__(self, plan: int, gate: Gate) -> None:
        self.plan = plan
        self.gate = gate
        self._pieces: list[str] = []
        self._tokens = 0

    def __call__(self, tokens: int, piece: str) -> None:
        if tokens < self._tokens:  # the writer was asked again: a new answer
            self._pieces.clear()
        self._tokens = tokens
        self._pieces.append(piece)

    @property
    def text(self) -> str:
        return "".join(self._pieces)


class RunLedger:
    """The growing part of one run; it never outlives the call to ``research()``."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._scored: dict[str, ScoredSource] = {}
        self._sub_queries: list[str] = []
        self._dropped: list[DroppedSubQuery] = []
        self._found: dict[str, set[str]] = {}  # sub-query -> keys of the sources its searches found
        self._capped_by_user = False
        self._iterations: list[Iteration] = []
        self._warnings: list[str] = []
        self._provider_failures: list[ProviderFailure] = []
        self._fetch_failures: list[tuple[str, str]] = []
        self._skipped_rules: set[str] = set()
        self._latest_draft: KeptDraft | None = None
        self._draft_in_progress: DraftInProgress | None = None
        self._cut_answers = 0
        self._not_replanned: list[str] = []

    # --- sources and sub-queries --------------------------------------------------------

    def add_scored(self, scored: Iterable[ScoredSource]) -> None:
        for item in scored:
            self._scored[item.source.key] = item

    @property
    def scored(self) -> tuple[ScoredSource, ...]:
        """Every source scored so far, in the order first scored."""
        return tuple(self._scored.values())

    @property
    def scored_keys(self) -> set[str]:
        return set(self._scored)

    def add_sub_queries(self, queries: Iterable[str]) -> None:
        self._sub_queries.extend(q for q in queries if q not in self._sub_queries)

    @property
    def sub_queries(self) -> tuple[str, ...]:
        return tuple(self._sub_queries)

    def add_dropped(self, plan: Plan) -> None:
        """Keep the sub-queries of ``plan`` that were no search queries, so not searched."""
        self._dropped.extend(DroppedSubQuery(plan.number, d.query, d.reason) for d in plan.dropped)

    @property
    def dropped_sub_queries(self) -> tuple[DroppedSubQuery, ...]:
        return tuple(self._dropped)

    def add_found(self, found: Mapping[str, Iterable[str]], *, capped_by_user: bool = False) -> None:
        """Keep the source keys each sub-query's searches found; ``capped_by_user``: the
        user's own source limit cut the list (it stays true for the rest of the run)."""
        for query, keys in found.items():
            self._found.setdefault(query, set()).update(keys)
        self._capped_by_user = self._capped_by_user or capped_by_user

    @property
    def found(self) -> dict[str, frozenset[str]]:
        """Sub-query -> keys of the distinct sources its searches found, over every plan."""
        return {query: frozenset(keys) for query, keys in self._found.items()}

    @property
    def capped_by_user(self) -> bool:
        return self._capped_by_user

    # --- the loop -----------------------------------------------------------------------

    def add_iteration(self, iteration: Iteration) -> None:
        self._iterations.append(iteration)

    @property
    def iterations(self) -> tuple[Iteration, ...]:
        return tuple(self._iterations)

    def keep_draft(self, plan: int, gate: Gate, written: Written) -> None:
        """The run's latest draft so far (with what is known of it: skeptic, review, revisions)."""
        self._latest_draft = KeptDraft(plan, gate, written)

    @property
    def latest_draft(self) -> KeptDraft | None:
        return self._latest_draft

    def drafting(self, plan: int, gate: Gate) -> DraftInProgress:
        """A first draft is being streamed: keep its text as it comes (until a draft is kept)."""
        self._draft_in_progress = DraftInProgress(plan, gate)
        return self._draft_in_progress

    def discard_draft_in_progress(self) -> None:
        """The draft being streamed was set aside (relevance disagreed with it): never publish it."""
        self._draft_in_progress = None

    @property
    def draft_in_progress(self) -> DraftInProgress | None:
        """The draft being streamed when no draft of the run is finished yet."""
        return self._draft_in_progress if self._latest_draft is None else None

    def count_cut(self) -> None:
        """A writer's answer (draft or revision) was cut short."""
        self._cut_answers += 1

    @property
    def cut_answers(self) -> int:
        return self._cut_answers

    def not_replanned(self, reason: str) -> None:
        """A replan the run did not make, and why (:mod:`.replan`): said once per reason, kept
        for the run record's warnings and the report's Limitations."""
        if reason not in self._not_replanned:
            self._not_replanned.append(reason)
            self.warn(f"not replanned: {reason}")

    @property
    def replans_skipped(self) -> tuple[str, ...]:
        return tuple(self._not_replanned)

    # --- what went wrong ----------------------------------------------------------------

    def warn(self, message: str) -> None:
        """Tell the user now, and keep it for the run record (a stage went on without the model's answer)."""
        self._progress.note(message)
        self._warnings.append(message)

    def record_warning(self, message: str) -> None:
        """Keep ``message`` for the run record only."""
        self._warnings.append(message)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(self._warnings)

    def provider_failed(self, failure: ProviderFailure) -> None:
        """Keep a failed search; tell the user once per provider."""
        if all(f.provider != failure.provider for f in self._provider_failures):
            reason = one_line(failure.reason)[:160]
            self._progress.note(f"search provider {failure.provider} failed: {reason}")
        self._provider_failures.append(failure)

    @property
    def provider_failures(self) -> tuple[ProviderFailure, ...]:
        return tuple(self._provider_failures)

    def fetches_failed(self, failures: Sequence[tuple[str, str]]) -> None:
        """Keep the (location, reason) of pages that could not be read."""
        self._fetch_failures.extend(failures)

    @property
    def fetch_failures(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._fetch_failures)

    # --- custom lint rules --------------------------------------------------------------

    def skip_slow_rules(self, names: Iterable[str]) -> None:
        """Skip, for the rest of the run, custom rules that ran past their budget; say so once each."""
        for name in sorted(set(names) - self._skipped_rules):
            self._skipped_rules.add(name)
            self.warn(f"custom rule {name!r} ran past its time budget and was stopped; it is skipped from now on")

    def active_rules(self, rules: Sequence[Rule]) -> tuple[Rule, ...]:
        """``rules`` without those skipped."""
        return tuple(r for r in rules if r.name not in self._skipped_rules)
