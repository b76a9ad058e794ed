"""``research-agent eval run [WORLD_DIR]``: every question of a world researched, graded, scored.

The world is read and checked before any model call (no WORLD_DIR: the built-in world of
``--seed``, generated into the cache folder); an eval of the same world that did not finish is
continued (or the one ``--resume ID`` names), else a new one starts. The runs go through the
batch's machinery (:mod:`research_agent.eval.session`) with one bar and the scorecard so far on
stderr (:mod:`.view`); the scorecard is printed on stdout (or one JSON object) and written to
``reports/eval-<id>.md``, ``.html`` and ``.json``. Ctrl-C or SIGTERM stops the running questions
cleanly, keeps the finished ones, writes the state and the pages, and exits 130 or 143. The exit
code is 1 when a run failed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ...errors import InputError
from .. import run_options as opt
from ..batch import BatchDeps, Parallel, Retries, finish, resume_command, run_locked
from ..boundary import guarded, json_failures, stderr_console
from ..startup import importing
from ..terminal import dumps_json, echo

if TYPE_CHECKING:
    from ...batch.session import SessionOptions
    from ...config import Settings
    from ...eval.plan import EvalOptions, EvalPlan, EvalState

__all__ = ["run_command"]

WorldDir = Annotated[
    Path | None,
    typer.Argument(metavar="WORLD_DIR", help="A world: pages/ and questions.yaml (see docs/eval.md).",
                   show_default="the built-in fictional world of --seed"),
]  # fmt: skip
Mode = Annotated[str, typer.Option("--mode", metavar="quick|standard|deep", help="How much work each run does.")]
Limit = Annotated[int | None, typer.Option("--limit", min=1, metavar="N", help="Only the world's first N questions.")]
Seed = Annotated[
    int | None,
    typer.Option("--seed", min=0, max=2**31, metavar="N",
                 help="The built-in world to generate, and the holdout split.", show_default="42"),
]  # fmt: skip
Rounds = Annotated[
    int, typer.Option("--rounds", min=1, max=20, metavar="N", help="Run the world N times, critiques between rounds.")
]
Holdout = Annotated[
    bool, typer.Option("--holdout", help="Learn from half the questions; grade the other half, whose critiques "
                                         "build no lesson.")
]  # fmt: skip
Resume = Annotated[str | None, typer.Option("--resume", metavar="ID", help="Continue the eval ID (WORLD_DIR optional).")]


@guarded
def run_command(
    ctx: typer.Context,
    world_dir: WorldDir = None,
    mode: Mode = "standard",
    model: opt.Model = None,
    fast_model: opt.FastModel = None,
    parallel: Parallel = None,
    limit: Limit = None,
    seed: Seed = None,
    rounds: Rounds = 1,
    holdout: Holdout = False,
    resume: Resume = None,
    retries: Retries = 2,
    reports_dir: opt.ReportsDir = None,
    json_output: opt.JsonOutput = False,
    no_critique: opt.NoCritique = False,
    timeout: opt.Timeout = None,
    llm_timeout: opt.LlmTimeout = None,
) -> None:
    """Research every question of a world (default: the built-in fictional one), grade each report
    against the world's known answers, and write the scorecard reports/eval-<id>.md (.html, .json);
    the state in reports/meta/eval-<id>.yaml lets the same command (or --resume ID) continue."""
    with json_failures(json_output):
        from ...eval.plan import EvalOptions
        from ...modes import MODES

        if mode not in MODES:
            raise InputError(f"--mode {mode[:20]!r}: choose one of {', '.join(MODES)}")
        deps = ctx.find_root().obj if isinstance(ctx.find_root().obj, BatchDeps) else BatchDeps()
        params = {**ctx.params, "quick": mode == "quick", "deep": mode == "deep", "standard": mode == "standard"}
        given = {k: v for k, v in opt.settings_overrides(params).items() if v is not None}
        with importing():  # what an eval needs, loaded only when one runs
            from ...batch.session import SessionOptions, default_parallel

        wanted = EvalOptions(rounds, holdout, limit, 42 if seed is None else seed, world_dir is None)
        plan, base = _plan(world_dir, resume, given, wanted, deps)
        options = SessionOptions(parallel or default_parallel(base), retries)
        data, stopped = _run(plan, base, options, deps)
        _print(data, json_output, base.reports_dir)
    finish(plan.state, stopped, resume_command("research-agent eval run", plan.state.id, given))


def _world(world_dir: Path | None, options: EvalOptions, base: Settings) -> Path:
    """The world's folder; the built-in world is generated into the cache folder first (always there:
    never into a folder a stored state names)."""
    if world_dir is not None and not options.builtin:
        return world_dir
    from ...eval.world import write_world
    from ...eval.world.sample import builtin_world_dir
    from ...files.atomic import ensure_writable_dir

    folder = builtin_world_dir(base.cache_dir, options.seed)  # where run --sample writes it too
    ensure_writable_dir(folder)
    return write_world(folder, options.seed)


def _plan(
    world_dir: Path | None, resume: str | None, given: dict[str, Any], wanted: EvalOptions, deps: BatchDeps
) -> tuple[EvalPlan, Settings]:
    """The eval to run and its base settings; every problem refused here, before any model call."""
    from ...batch.state import find_unfinished
    from ...eval.plan import EvalOptions, EvalState, plan_eval
    from ...eval.world import load_world
    from ...files.atomic import ensure_writable_dir
    from ...files.safefile import check_folder_inside

    base = deps.load_settings(given)
    check_folder_inside(base.meta_dir, base.reports_dir)
    previous = EvalState.load(base.meta_dir, resume) if resume else None
    used, options = given, wanted
    if previous is not None:  # the options it was started with, then those given now
        options = EvalOptions.from_dict(previous.overrides.get("eval"))
        used = {**{k: v for k, v in previous.overrides.items() if k != "eval"}, **given}
        base = deps.load_settings(used)
        if world_dir is None and not options.builtin:
            world_dir = Path(_trusted_world(previous, base))
    world = load_world(_world(world_dir, options, base))
    if previous is None:
        ensure_writable_dir(base.meta_dir)
        found = find_unfinished(base.meta_dir, str(world.root), EvalState)
        previous = found if isinstance(found, EvalState) and _same(found, options) else None
    plan = plan_eval(world, base, options, overrides=used, previous=previous)
    ensure_writable_dir(base.meta_dir)
    return plan, base


def _trusted_world(state: EvalState, base: Settings) -> str:
    """The world folder a stored eval names, when this user's tool signed it (the state lies under
    reports/, where it may have been planted); else InputError saying to give WORLD_DIR."""
    from ...batch.reach import reach_problem

    problem = reach_problem(state, base.state_dir)
    if problem is not None:
        raise InputError(f"eval state {state.path}: {problem}; give the world's folder again (WORLD_DIR) to resume it")
    return str(state.file)


def _same(state: Any, options: EvalOptions) -> bool:
    from ...eval.plan import EvalOptions

    try:
        return EvalOptions.from_dict(state.overrides.get("eval")) == options
    except InputError:
        return False


def _run(plan: EvalPlan, base: Settings, options: SessionOptions, deps: BatchDeps) -> tuple[dict[str, Any], int | None]:
    from ...batch.session import default_model
    from ...eval.session import Grades, run_eval
    from ...pipeline import research
    from .view import EvalView

    state = plan.state
    grades = Grades(plan, base)
    view = EvalView(stderr_console(), len(state.entries), done=state.count("done"), parallel=options.parallel,
                    grades=grades)  # fmt: skip
    session = run_eval(plan, base, options=options, research=deps.research or research, grades=grades,
                       make_model=deps.make_model or default_model, watcher=view, sleep=deps.sleep)  # fmt: skip
    stopped = run_locked(session, state, view)
    return plan.page, stopped


def _print(data: dict[str, Any], json_output: bool, reports_dir: Path) -> None:
    if not data:
        return
    from ...eval.pages import page_paths, scorecard_lines

    paths = {kind: str(path) for kind, path in page_paths(reports_dir, data["id"]).items()}
    if json_output:
        typer.echo(dumps_json({**data, "pages": paths}))
        return
    echo(f"eval {data['id']}")
    for line in scorecard_lines(data):
        echo(f"  {line}")
    echo(f"scorecard: {paths['md']} (also .html, .json); state {data['state_path']}")
