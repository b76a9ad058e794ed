"""``memory effects``: each lesson's measured effect, as short lines a person can read, or JSON.

The numbers come from :func:`research_agent.memory.lessons.effects_view.lesson_effects` (the
same function the MCP server calls); this module only draws them: per domain, per lesson, its
status, its target in words, the means with and without it, the delta with its interval and
how it was estimated, its mean-score check, its effect on fact recall and the critic's
tracking of ground truth where evals graded its runs, the runs its decision took, the keys it cannot be
told apart from, its current text; then a legend.
Lines, not a table: they stay readable at any terminal width. With ``--json`` stdout carries
nothing but the JSON list.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import typer

from ...domains import DOMAINS, parse_domain
from ...memory.effects.lesson_effects import MIN_RUNS, NO_EFFECT_RUNS, LessonEffect, Measured, decision_words
from ...memory.effects.sequential import ALPHA
from ...memory.lessons.trials import HELPFUL_SHARE
from ...memory.store.targets import TARGETS
from ...service.memory import Memory
from ..boundary import guarded
from ..terminal import dumps_json, echo
from .group import ReportsDirOption, app, memory_deps, memory_settings

__all__ = ["effects_command", "show_effects", "critic_lines"]

_STATUS_WORDS = {
    "helpful": "helpful (proven to help; still withheld now and then, to keep watching)",
    "active": "active (not decided yet)",
    "measuring": "measuring (too few runs to decide)",
    "no-effect": "no effect (too small to see; ranked last)",
    "retired": "retired (not given)",
}
LEGEND = (
    "with it / without it: the mean of the lesson's target over the runs given it, and over the runs that "
    "withheld it by its own random trial draw (control runs and suspended domains count in neither).",
    "delta: with minus without, turned so that + always means better; always-valid interval: however "
    f"often it is looked at, a lesson that does nothing leaves it (on either measure) in at most "
    f"{ALPHA:.0%} of histories.",
    "estimate: paired by question where both arms share questions, else unpaired; runs drawn at "
    "different trial probabilities are never compared with each other.",
    "mean score: every lesson is also measured on the critique's mean score; harm there retires it "
    "whatever its target.",
    f"measuring: fewer than {MIN_RUNS} runs in an arm; active: not decided yet; helpful: an interval wholly "
    f"above zero (then withheld {HELPFUL_SHARE:.0%} as often); retired: an interval wholly below zero (never "
    f"given again unless you `memory reinstate` it); no effect: still undecided {NO_EFFECT_RUNS} runs of its "
    "domain after its trial began. \"run N\": the Nth run of the lesson's domain (`memory ledger` lists them).",
    "a decision, once reached, is recorded in the trial ledger and stays made; the numbers go on being shown. "
    "more runs: about how many more runs of the domain a decision needs if the estimate and spread stay as they are.",
    "fact recall: where evals graded some of the lesson's runs (`research-agent eval`), the share of each "
    "question's facts the reports found, over the same arms, with its own always-valid interval; shown, never "
    "decided on. the critic against ground truth: the rank correlation of the critic's mean score with fact recall.",
    "never apart from: keys given and withheld together in every one of this lesson's runs, so their "
    "effects cannot be told apart (trials separate them over time).",
)


def _number(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def _interval(interval: tuple[float, float] | None) -> str:
    if interval is None:
        return "-"
    lo, hi = interval
    return f"[{lo:+.2f}, {hi:+.2f}]"


def _estimate(effect: LessonEffect) -> str:
    if effect.method == "paired":
        return f"paired over {effect.paired_questions} questions"
    return "unpaired"


def _score_line(score: Measured) -> str:
    return (
        f"    mean score {_number(score.mean_with)} with, {_number(score.mean_without)} without: delta "
        f"{_number(score.delta, signed=True)}, interval {_interval(score.interval)}"
    )


def _recall_line(recall: Measured) -> str:
    return (
        f"    fact recall (ground truth, eval runs) {_number(recall.mean_with)} with over {recall.n_with} run(s), "
        f"{_number(recall.mean_without)} without over {recall.n_without}: delta {_number(recall.delta, signed=True)}, "
        f"interval {_interval(recall.interval)}"
    )


def critic_lines(critic: Mapping[str, Any] | None) -> list[str]:
    """How far the critic tracks ground truth in a domain, and what that means for its lessons."""
    if critic is None:
        return []
    lines = [f"  the critic against ground truth: {critic['words']}"]
    if critic["rho"] is not None and critic["verdict"] != "tracks":
        lines.append("  a lesson judged by a critic that tracks nothing is judged by noise: here its mean-score "
                     "effect says nothing about whether reports got more right (see its fact recall)")  # fmt: skip
    return lines


_STAGE_WORDS = {"decompose": "planning", "relevance": "judging"}
_ORIGIN_WORDS = {"user": " of yours (lessons.yaml)", "approved": " you approved (lessons.yaml)"}


def _progress(effect: LessonEffect) -> str:
    """How far an undecided lesson's trial has come, and what a decision still needs."""
    since = f", reinstated {effect.reinstated[:10]}" if effect.reinstated else ""
    words = f"{effect.trial_runs} run(s) of the domain since its trial began{since}"
    if effect.more_runs is not None:
        return f"{words}; about {effect.more_runs} more run(s) to decide at the current estimate and spread"
    if effect.status in ("active", "measuring") and effect.trial_runs < NO_EFFECT_RUNS:
        return f"{words}; called no effect in {NO_EFFECT_RUNS - effect.trial_runs} more run(s) if still undecided"
    return words


def _lesson_lines(effect: LessonEffect) -> list[str]:
    """One lesson as a few short lines: what it is, its numbers, its text, what it is tied to."""
    target = TARGETS[effect.target]
    better = "lower is better" if target.lower_is_better else "higher is better"
    stage = _STAGE_WORDS.get(effect.stage, effect.stage)
    origin = _ORIGIN_WORDS.get(effect.key.split(":", 1)[0], "")
    status = _STATUS_WORDS.get(effect.status, effect.status)
    decided = decision_words(effect)
    lines = [
        f"  {effect.key}: {status}",
        *([f"    {decided}"] if decided else []),
        *([f"    {_progress(effect)}"] if not decided else []),
        f"    {stage} lesson{origin}; target {target.label} ({better})",
        f"    with it {_number(effect.mean_with)} over {effect.applied_runs} run(s); without it "
        f"{_number(effect.mean_without)} over {effect.baseline_runs} run(s)",
        f"    delta {_number(effect.delta, signed=True)}, always-valid interval {_interval(effect.interval)}; "
        f"{_estimate(effect)}",
    ]
    if effect.score is not None:
        lines.append(_score_line(effect.score))
    if effect.recall is not None:
        lines.append(_recall_line(effect.recall))
    if effect.confounded_with:
        lines.append(f"    never apart from: {', '.join(effect.confounded_with)}")
    if effect.text:
        lines.append(f"    text now: {effect.text}")
    return lines


def show_effects(memory: Memory, *, now: datetime, domain: str | None, json_output: bool) -> None:
    """Print the effects of the lessons in ``memory`` (of ``domain``, or of every domain)."""
    chosen = parse_domain(domain) if domain is not None else None
    effects = memory.effects(now=now, domain=chosen)
    if json_output:
        typer.echo(dumps_json([e.as_dict() for e in effects], indent=2))
        return
    if not effects:
        where = f" in {chosen}" if chosen else ""
        echo(f"no lesson has been given or withheld yet{where} ({memory.meta_dir})")
        return
    for where in dict.fromkeys(e.domain for e in effects):
        echo(f"lesson effects in {where}")
        for line in critic_lines(next(e for e in effects if e.domain == where).critic):
            echo(line)
        for effect in (e for e in effects if e.domain == where):
            for line in _lesson_lines(effect):
                echo(line)
        echo("")
    for line in LEGEND:
        echo(line)


@app.command("effects")
@guarded
def effects_command(
    ctx: typer.Context,
    domain: str | None = typer.Option(None, "--domain", help=f"Only this domain: one of {', '.join(DOMAINS)}."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
    reports_dir: ReportsDirOption = None,
) -> None:
    """Each lesson's effect: its target and the mean score with and without it, the difference with
    an always-valid interval, its status (helpful, active, measuring, no-effect, retired) and the
    runs its decision took."""
    memory = Memory(memory_settings(ctx, reports_dir))
    show_effects(memory, now=memory_deps(ctx).clock(), domain=domain, json_output=json_output)
