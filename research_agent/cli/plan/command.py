"""``research-agent plan QUESTION``: the decompose stage alone, the plan printed or written as JSON;
and what ``run --plan FILE`` / ``run --review-plan`` add to a run (:func:`person_inputs`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ...config import Settings, load_settings
from ...errors import InputError
from ...files.atomic import atomic_write_text
from ...files.output import check_output_path
from ...plans import ResearchPlan, read_plan_file
from ...plans.steering import PlanReview

if TYPE_CHECKING:
    from ...plans.making import MadePlan

from ..boundary import guarded, json_failures, run_async, stderr_console
from ..progress import RichProgress, cost_text
from ..run_options import (
    OUTPUT,
    RUN,
    Context,
    ContextTokens,
    Deep,
    JsonOutput,
    LlmPromptRate,
    LlmTimeout,
    Model,
    NoLessons,
    Quick,
    ReportsDir,
    Standard,
    Timeout,
    settings_overrides,
)  # fmt: skip
from ..startup import importing
from ..terminal import dumps_json, echo, markup
from .review import on_a_terminal, terminal_review

__all__ = ["plan_command", "PlanFile", "ReviewPlan", "person_inputs"]

PlanQuestion = Annotated[str, typer.Argument(help="The question to plan (at most 2,000 characters).", show_default=False)]
PlanOutput = Annotated[
    Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write the plan here as JSON, to edit and give "
                              "to run --plan FILE.", rich_help_panel=OUTPUT),
]  # fmt: skip
PlanFile = Annotated[
    Path | None, typer.Option("--plan", metavar="FILE", help="Search this plan (JSON, as `research-agent plan` "
                              "writes it) instead of asking the model for one; the run record says a person gave it, "
                              "and the run does not replan.", rich_help_panel=RUN),
]  # fmt: skip
ReviewPlan = Annotated[
    bool, typer.Option("--review-plan", help="Show the model's plan before any search: accept it, edit it in "
                       "$EDITOR, or stop. Needs a terminal.", rich_help_panel=RUN),
]  # fmt: skip


@guarded
def plan_command(
    ctx: typer.Context,
    question: PlanQuestion,
    quick: Quick = False,
    standard: Standard = False,
    deep: Deep = False,
    model: Model = None,
    context: Context = None,
    reports_dir: ReportsDir = None,
    timeout: Timeout = None,
    llm_timeout: LlmTimeout = None,
    llm_prompt_rate: LlmPromptRate = None,
    context_tokens: ContextTokens = None,
    no_lessons: NoLessons = False,
    json_output: JsonOutput = False,
    output: PlanOutput = None,
) -> None:
    """Plan QUESTION as a run would (the domain and the sub-queries, the planning lessons in the prompt),
    search nothing, and print the plan; --json prints it as JSON, --output FILE writes it there, for
    you to edit and give to `research-agent run --plan FILE`.

    The mode sets how many sub-queries are asked for (quick 3, standard 4, deep 6); the planning lessons
    come from the memory in --reports-dir.
    """
    with json_failures(json_output):
        overrides = settings_overrides({**ctx.params, "output": None})
        settings = load_settings(overrides)
        if output is not None:  # before the model is asked: never onto a file another run owns
            check_output_path(output, reports_dir=settings.reports_dir, cache_dir=settings.cache_dir)
        made = _made(question, settings)
        if output is not None:
            atomic_write_text(Path(output), json.dumps(made.plan.as_dict(), indent=2, ensure_ascii=False) + "\n")
    if json_output:
        typer.echo(dumps_json(made.plan.as_dict()))
    elif output is None:
        _print(made.plan)
    if output is not None and not json_output:
        echo(str(output))
    tokens = made.usage.prompt_tokens + made.usage.completion_tokens
    stderr_console().print(f"[green]planned[/green]: {len(made.plan.sub_queries)} sub-queries, {tokens:,} tokens, "
                           f"{cost_text(made.usage.cost_usd)}", markup=True, soft_wrap=True)  # fmt: skip


def _made(question: str, settings: Settings) -> MadePlan:
    with importing():
        from ...plans.making import make_plan

    progress = RichProgress(stderr_console())
    try:
        return run_async(make_plan(question, settings=settings, progress=progress), interrupted=progress.interrupted)
    finally:
        progress.stop()


def _print(plan: ResearchPlan) -> None:
    echo(f"domain: {plan.domain}")
    for query in plan.sub_queries:
        echo(f"- {query}")
    stderr_console().print(f"To edit it: {markup('research-agent plan QUESTION --output plan.json')}, change the "
                           "sub-queries, then research-agent run --plan plan.json", soft_wrap=True)  # fmt: skip


def person_inputs(
    query: str | None, plan_file: Path | None, review: bool
) -> tuple[str | None, ResearchPlan | None, bool]:
    """``run`` 's question, the plan ``--plan`` gives (checked against the question; the plan's own
    question when none was asked), and whether the plan is to be reviewed (refused without a terminal)."""
    if plan_file is not None and review:
        raise InputError("choose one of --plan FILE (your plan) and --review-plan (review the model's)")
    if review and not on_a_terminal():
        raise InputError("--review-plan needs a terminal to show the plan and read your answer; without one, "
                         "write the plan with `research-agent plan QUESTION --output FILE`, edit it, "
                         "and run with --plan FILE")  # fmt: skip
    if plan_file is None:
        return query, None, review
    plan = read_plan_file(plan_file, question=query)
    return plan.question, plan, False


def review_on_terminal(progress: RichProgress) -> PlanReview:
    """The review ``run --review-plan`` shows on this terminal (the spinner stopped first)."""
    return terminal_review(before=progress.stop)
