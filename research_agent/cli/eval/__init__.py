"""``research-agent eval``: quality measured against ground truth, on worlds with known answers.

* :mod:`.run`      ``eval run [WORLD_DIR]``: every question researched, graded by program, scored
* :mod:`.view`     its progress on stderr: the batch's bar, and the scorecard so far
* ``compare``      ``eval compare A B``: two evals of one world, paired question by question (here)

The work is :mod:`research_agent.eval`'s; collaborators come from a
:class:`~research_agent.cli.batch.BatchDeps` found as the Click context ``obj`` (tests pass fakes).
"""

from __future__ import annotations

from typing import Annotated

import typer

from .. import run_options as opt
from ..boundary import guarded, json_failures
from ..terminal import dumps_json, echo
from .run import run_command

__all__ = ["app", "run_command", "compare_command"]

app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True)
app.command("run")(run_command)

EvalRef = Annotated[str, typer.Argument(metavar="EVAL", help="An eval id, or the path of its eval-<id>.json.")]


@app.command("compare")
@guarded
def compare_command(
    first: EvalRef,
    second: EvalRef,
    reports_dir: opt.ReportsDir = None,
    json_output: opt.JsonOutput = False,
) -> None:
    """Compare two evals of the same world question by question: the difference (B - A) in fact
    recall, citation precision and unsupported names and numbers, each with a paired 90% interval."""
    with json_failures(json_output):
        from pathlib import Path

        from ...config import load_settings
        from ...eval.compare import compare_evals, load_scorecard

        folder = Path(reports_dir) if reports_dir is not None else load_settings({}).reports_dir
        result = compare_evals(load_scorecard(first, folder), load_scorecard(second, folder))
    if json_output:
        typer.echo(dumps_json(result))
        return
    echo(f"A: {result['a']}\nB: {result['b']}\nworld {result['world']}: {result['questions']} question(s) graded in both")
    for measure in result["measures"]:
        echo(f"  {measure['words']}")
