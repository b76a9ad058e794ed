"""An eval ready to run: every question of every round as an entry of a batch, and the holdout split.

An eval is a batch of a kind of its own (:class:`EvalState`: ``reports/meta/eval-<id>.yaml``, its id
``<world name>-<UTC timestamp>``), so it runs on the batch's machinery: the entries of one round are
one batch (:meth:`EvalPlan.round_batch`), run and critiqued as ``research-agent batch`` runs them;
the next round starts when the last one ended, so it is given the lessons the earlier rounds' critiques
built. An entry's key holds the world's fingerprint, the question's id and the round, so an eval
that stopped continues with exactly the runs it lacks.

``--holdout`` splits the questions in two halves by a seeded hash (:func:`measured_half`): the
critiques of the measured half's runs are marked held out (the batch's ``held_out``) and build no
lesson; the learning half's build them, and the measured half's runs receive them and are graded.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

from ..batch.plan import KEPT_OVERRIDES, Batch, plain_value, run_options, still_done
from ..batch.reach import sign_reach
from ..batch.state import BatchState, Entry, entry_key, make_batch_id
from ..config import Settings
from ..errors import InputError
from ..ids import format_utc
from ..shapes import Plain
from .world import Question, World

__all__ = ["EvalState", "EvalOptions", "EvalPlan", "RoundBatch", "plan_eval", "measured_half", "eval_settings",
           "MAX_ROUNDS"]  # fmt: skip

MAX_ROUNDS = 20

_HEADER = """\
# research-agent eval {id}: every question of the eval in every round, and where it stands (pending,
# running, done with its run id and outcome, failed with its error and attempts). Written after every
# change; `research-agent eval run --resume {id}` (or the same world again) continues it, skipping
# the runs already done (key: a hash of the question, the world, the round and the run options).
"""


class EvalState(BatchState):
    """An eval's state file, ``reports/meta/eval-<id>.yaml`` (a batch's, in a file of its own)."""

    KIND: ClassVar[str] = "eval"
    HEADER: ClassVar[str] = _HEADER
    FILE_IS_FOLDER: ClassVar[bool] = True  # the world's folder: its pages are what every run reads


@dataclass(frozen=True)
class EvalOptions(Plain):
    """What an eval does beyond its runs' settings: rounds, the holdout, the first ``limit`` questions,
    the seed (of the built-in world, and of the holdout split), and whether the world is the built-in one."""

    rounds: int = 1
    holdout: bool = False
    limit: int | None = None
    seed: int = 0
    builtin: bool = False

    @classmethod
    def from_dict(cls, data: Any) -> EvalOptions:
        """The options a stored eval kept; InputError when they are not an eval's."""
        if not isinstance(data, dict):
            raise InputError("the eval's state keeps no eval options")
        rounds, limit, seed = data.get("rounds", 1), data.get("limit"), data.get("seed", 0)
        if not (isinstance(rounds, int) and 1 <= rounds <= MAX_ROUNDS and isinstance(seed, int) and seed >= 0
                and (limit is None or isinstance(limit, int) and limit >= 1)):  # fmt: skip
            raise InputError("the eval's state keeps eval options out of range")
        return cls(rounds, bool(data.get("holdout")), limit, seed, bool(data.get("builtin")))


@dataclass
class RoundBatch(Batch):
    """The entries of one round of an eval, as a batch runs them (the other rounds' are left alone)."""

    round: int = 1

    def todo(self) -> list[Entry]:
        return [e for e in self.state.entries if e.state != "done" and e.row.get("round") == self.round]


@dataclass
class EvalPlan:
    """An eval ready to run: its world, state, each entry's settings (by key), options and holdout."""

    world: World
    state: EvalState
    settings: dict[str, Settings]
    options: EvalOptions
    new: bool = True
    held_out: dict[str, str] = field(default_factory=dict)  # entry key -> this eval's id (measured half)
    page: dict[str, Any] = field(default_factory=dict)  # the scorecard, once a session wrote it

    def round_batch(self, number: int) -> RoundBatch:
        return RoundBatch(self.state, self.settings, self.new, held_out=self.held_out, round=number)

    @property
    def questions(self) -> tuple[Question, ...]:
        """The world's questions this eval asks (the first ``limit``)."""
        return self.world.questions[: self.options.limit]


def measured_half(questions: tuple[Question, ...], seed: int) -> frozenset[str]:
    """The ids of the measured half of ``questions`` (the smaller half when odd): those first in the
    order of a hash of the seed and the id, so the split is fixed for a seed and blind to the questions."""
    order = sorted(questions, key=lambda q: hashlib.sha256(f"{seed}:{q.id}".encode()).hexdigest())
    return frozenset(q.id for q in order[: len(order) // 2])


def eval_settings(base: Settings, world: World) -> Settings:
    """The settings of every run of an eval of ``world``: its pages as the only corpus, and no
    business context (the same prompts as any user's run, nothing of this checkout's own)."""
    return base.replace(corpus_dirs=(world.pages_dir,), search_providers=("local",), context_path=None).validate()


def _entries(plan: EvalPlan, settings: Settings, measured: frozenset[str], kept: dict[str, Entry]) -> list[Entry]:
    entries = []
    options = run_options(settings)
    for number in range(1, plan.options.rounds + 1):
        order = sorted(enumerate(plan.questions, start=1), key=lambda item: item[1].id in measured)
        for line, question in order:  # the learning half first in each round
            chosen = {**options, "world": plan.world.fingerprint, "question": question.id, "round": number}
            key = entry_key(question.question, chosen)
            half = ("measured" if question.id in measured else "learning") if measured else ""
            row = {"id": question.id, "round": number, "half": half}
            entry = kept.get(key) or Entry(line, question.question, key, row, chosen)
            entry.line, entry.row = line, row
            entries.append(entry)
            plan.settings[key] = settings
            if half == "measured":
                plan.held_out[key] = plan.state.id
    return entries


def plan_eval(
    world: World,
    base: Settings,
    options: EvalOptions,
    *,
    overrides: dict[str, Any],
    previous: EvalState | None = None,
    now: datetime | None = None,
) -> EvalPlan:
    """The eval of ``world`` with ``base`` settings and ``options``: ``previous`` continued when given
    (its runs done with the same options and still on disk are kept), else a new one."""
    now = now or datetime.now(UTC)
    settings = eval_settings(base, world)
    state = previous or EvalState(make_batch_id(world.name, now), base.meta_dir, file=str(world.root),
                                  created=format_utc(now))  # fmt: skip
    plan = EvalPlan(world, state, {}, options, new=previous is None)
    kept = {e.key: e for e in previous.entries if still_done(e, settings)} if previous else {}
    measured = measured_half(plan.questions, options.seed) if options.holdout else frozenset()
    state.entries = _entries(plan, settings, measured, kept)
    state.status = "running"
    kept_overrides = {key: plain_value(value) for key, value in overrides.items() if key in KEPT_OVERRIDES}
    state.overrides = {**kept_overrides, "eval": options.as_dict()}
    sign_reach(state, base.state_dir)
    return plan
