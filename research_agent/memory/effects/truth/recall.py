"""Each lesson's effect on fact recall, and how far the critic tracks it: ``memory effects``' ground truth.

An eval records each graded run's grade in the run's row of the trial ledger
(:mod:`research_agent.eval.ledger`). :func:`with_ground_truth` reads them beside the lessons'
effects:

* ``recall``: a lesson's effect on fact recall over **the same trial arms** its effect on the
  critic's score is measured on (:func:`..decisions.look_at`: the runs given it against the runs
  that withheld it by its own draw), kept to the runs an eval graded on a question with facts:
  estimated as the score is (paired by question, per trial probability, adjusted for the other
  lessons), with its own always-valid interval, the variance never below that of values moving in
  steps of one fact of the largest question. Runs not critiqued (``eval run --no-critique``) are in
  no arm, as they are in none for the score.
* ``critic``: in each domain, Spearman's rank correlation between the critic's mean score (what
  every lesson is judged on) and fact recall over the graded, critiqued runs of the ledger
  (:func:`.tracking.critic_tracking`). Where it tells nothing, a lesson's mean-score effect says
  nothing about whether reports got more right, and ``memory effects`` says so.

Nothing here decides: ground truth is shown beside the decision, which stays on the scores.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from ...store.trials import TrialLedger
from ..decisions import covariates_of, look_at
from ..estimate import Arms
from ..lesson_effects import LessonEffect, Measured, measure_cells
from ..sequential import ALPHA
from .tracking import critic_tracking

__all__ = ["with_ground_truth", "recall_effects", "critic_by_domain", "RECALL"]

RECALL = "fact_recall"


def _recalls(ledger: TrialLedger, domain: str | None) -> tuple[dict[str, float], float]:
    """``run id -> fact recall`` of every graded run with facts, and the step fact recall moves in."""
    found, most = {}, 1
    for row in ledger.ordered(domain):
        if row.grade is not None and row.grade.fact_recall is not None:
            found[row.run] = row.grade.fact_recall
            most = max(most, row.grade.checkpoints)
    return found, 1 / most


def recall_effects(
    ledger: TrialLedger, *, now: datetime, domain: str | None = None, person: Mapping[str, tuple[str, str]] | None = None,
    alpha: float = ALPHA,
) -> dict[tuple[str, str], Measured]:  # fmt: skip
    """``(domain, key) -> the lesson's effect on fact recall`` (see the module docstring), for every
    lesson with a graded run in either arm."""
    recalls, step = _recalls(ledger, domain)
    if not recalls:
        return {}
    look = look_at(ledger, now, domain, person or {})
    given_by_run = {run: {k for k, arm in arms.items() if arm == "applied"} for run, arms in look.arms_by_run.items()}
    rows_by_key = defaultdict(list)
    for row in look.rows:
        if row[2] in recalls:
            rows_by_key[(row[0], row[1])].append(row)
    out = {}
    for (where, key), rows in rows_by_key.items():
        arms = Arms(covariates_of(key, {row[2] for row in rows}, given_by_run))
        for _, _, run, arm, question, _, score, _, p, _ in rows:
            arms.add(arm, question, recalls[run], score=score, p=p, others=given_by_run.get(run, ()))
        out[(where, key)] = measure_cells(arms.target, RECALL, alpha, step=step)
    return out


def critic_by_domain(ledger: TrialLedger, domain: str | None = None) -> dict[str, dict[str, object]]:
    """``domain -> how the critic's mean score tracks fact recall there`` (``Tracking.as_dict``), for
    every domain with a graded, critiqued run."""
    pairs: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row in ledger.ordered(domain):
        grade = row.grade
        if grade is not None and grade.fact_recall is not None and row.measured and row.mean is not None:
            pairs[row.domain].append((row.mean, grade.fact_recall))
    return {where: critic_tracking("mean_score", RECALL, found).as_dict() for where, found in pairs.items()}


def with_ground_truth(
    ledger: TrialLedger, effects: Sequence[LessonEffect], *, now: datetime, domain: str | None = None,
    person: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[LessonEffect, ...]:  # fmt: skip
    """``effects`` with their effect on fact recall and their domain's critic tracking, where the
    ledger holds eval grades (unchanged where it holds none)."""
    recall = recall_effects(ledger, now=now, domain=domain, person=person)
    critic = critic_by_domain(ledger, domain)
    if not recall and not critic:
        return tuple(effects)
    return tuple(replace(e, recall=recall.get((e.domain, e.key)), critic=critic.get(e.domain)) for e in effects)
