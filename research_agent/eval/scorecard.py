"""An eval's scorecard as data: what its pages show and ``--json`` prints.

* ``summary``: over every graded report, ``fact_recall`` (checkpoints found / all checkpoints),
  ``cited_precision`` (found and cited / found), ``stale`` (reports stating a superseded value as
  current), ``unsupported_per_report``, the unanswerable questions declined, words, tokens, cost,
  model calls and wall time;
* ``kinds``: fact recall per kind of question;
* ``rounds``: each round's fact recall over the measured questions (all of them without ``--holdout``),
  paired question by question against round 1 with its interval and in words, and the lessons given;
* ``critic``: how far the critic's scores track ground truth (:func:`.trust.critic_tracking`);
* ``questions``: one row per run, its grade and its report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from .graded import GradedRun
from .plan import EvalPlan
from .trust import change_words, critic_tracking, paired

__all__ = ["scorecard_data", "question_rows", "recall_of", "measure_step"]


def recall_of(runs: Sequence[GradedRun]) -> float | None:
    """Checkpoints found over all checkpoints of ``runs`` (None: none has a checkpoint)."""
    total = sum(len(r.grade.checkpoints) for r in runs)
    return round(sum(r.grade.found for r in runs) / total, 4) if total else None


def measure_step(runs: Sequence[GradedRun]) -> float:
    """The smallest step a question's fact recall moves in (1 over the most checkpoints a question has)."""
    return 1 / max([len(r.question.checkpoints) for r in runs] + [1])


def _summary(runs: list[GradedRun], plan: EvalPlan) -> dict[str, Any]:
    found = sum(r.grade.found for r in runs)
    unanswerable = [r for r in runs if not r.question.answerable]
    costs = [r.cost_usd for r in runs]
    state = plan.state
    return {
        "reports": len(runs), "checkpoints": sum(len(r.grade.checkpoints) for r in runs), "found": found,
        "cited": sum(r.grade.cited for r in runs), "fact_recall": recall_of(runs),
        "cited_precision": round(sum(r.grade.cited for r in runs) / found, 4) if found else None,
        "stale": sum(1 for r in runs if r.grade.stale),
        "unsupported": sum(r.unsupported for r in runs),
        "unsupported_per_report": round(sum(r.unsupported for r in runs) / len(runs), 3) if runs else None,
        "declined": sum(r.grade.declined for r in unanswerable), "unanswerable": len(unanswerable),
        "words": sum(r.grade.words for r in runs), "tokens": sum(r.tokens for r in runs),
        "cost_usd": None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 6),
        "calls": sum(r.calls for r in runs), "endpoint_calls": (state.limits or {}).get("calls"),
        "wall_seconds": round(state.wall_seconds, 1),
        "failed": state.count("failed"), "not_run": state.count("pending") + state.count("running"),
    }  # fmt: skip


def _kinds(runs: list[GradedRun]) -> dict[str, float | None]:
    kinds = sorted({r.question.kind or "question" for r in runs if r.question.answerable})
    return {kind: recall_of([r for r in runs if (r.question.kind or "question") == kind]) for kind in kinds}


def _rounds(runs: list[GradedRun], plan: EvalPlan) -> list[dict[str, Any]]:
    measured = [r for r in runs if r.half in ("", "measured") and r.question.answerable]
    first = {r.question.id: r for r in measured if r.round == 1}
    out = []
    for number in range(1, plan.options.rounds + 1):
        these = [r for r in measured if r.round == number]
        given = Counter(key for r in runs if r.round == number for key in r.lessons)
        row: dict[str, Any] = {"round": number, "fact_recall": recall_of(these), "reports": len(these),
                               "lessons": dict(sorted(given.items()))}  # fmt: skip
        if number > 1:
            pairs = [(r.grade.recall, first[r.question.id].grade.recall) for r in these if r.question.id in first]
            difference = paired(pairs, step=measure_step(measured))  # type: ignore[arg-type]  # answerable: a recall
            row["vs_round_1"] = {**difference.as_dict(),
                                 "words": change_words("fact recall", difference, f"round {number} vs round 1")}
        out.append(row)
    return out


def _critic(runs: list[GradedRun]) -> list[dict[str, Any]]:
    judged = [(r, r.critic) for r in runs if r.critic is not None]
    if not judged:
        return []
    coverage = [(c["coverage"], r.grade.recall) for r, c in judged
                if r.grade.recall is not None and c["coverage"] is not None]
    support = [(c["claim_support"], r.grade.cited_precision) for r, c in judged
               if r.grade.cited_precision is not None and c["claim_support"] is not None]
    made_up = [(c["claim_support"], float(r.unsupported)) for r, c in judged
               if c["claim_support"] is not None]
    return [
        critic_tracking("coverage", "fact_recall", coverage).as_dict(),
        critic_tracking("claim_support", "cited_precision", support).as_dict(),
        critic_tracking("claim_support", "unsupported_facts", made_up, sign=-1).as_dict(),
    ]


def question_rows(plan: EvalPlan, graded: dict[str, GradedRun]) -> list[dict[str, Any]]:
    """One row per run of the eval, in order: its question, round, status, report and grade."""
    rows = []
    for entry in plan.state.entries:
        question = next((q for q in plan.world.questions if q.id == entry.row.get("id")), None)
        run = graded.get(entry.key)
        row: dict[str, Any] = {
            "id": entry.row.get("id"), "question": entry.question, "kind": question.kind if question else "",
            "round": entry.row.get("round", 1), "half": entry.row.get("half", ""), "status": entry.state,
            "error": entry.error, "run_id": entry.run_id, "report": run.report if run else entry.outcome.get("report"),
            "graded": run is not None,
        }  # fmt: skip
        if run is not None:
            row.update(run.grade.as_dict(), recall=run.grade.recall, critic=run.critic, lessons=list(run.lessons))
        rows.append(row)
    return rows


def scorecard_data(plan: EvalPlan, graded: dict[str, GradedRun], *, lessons_changed: list[dict[str, str]]) -> dict[str, Any]:
    """Everything the eval's pages show (and ``--json`` prints): see the module docstring."""
    runs = [graded[e.key] for e in plan.state.entries if e.key in graded]
    world, state, options = plan.world, plan.state, plan.options
    chosen = next(iter(plan.settings.values()), None)
    settings = {"mode": chosen.mode.name, "model": chosen.model, "critique": chosen.critique} if chosen else {}
    return {
        "id": state.id, "status": state.status, "created": state.created, "state_path": str(state.path),
        "world": {"name": world.name, "path": str(world.root), "fingerprint": world.fingerprint, "seed": world.seed,
                  "questions": len(plan.questions), "pages": len(world.pages)},
        "options": {**options.as_dict(), **settings},
        "summary": _summary(runs, plan), "kinds": _kinds(runs), "rounds": _rounds(runs, plan),
        "critic": _critic(runs), "lessons_changed": lessons_changed, "questions": question_rows(plan, graded),
    }  # fmt: skip
