"""The ``research-agent memory`` group: the Typer app every memory command registers on, and
the collaborators those commands share.

The commands, and the ``critique`` command (:mod:`research_agent.cli.critique`), take their
collaborators from a :class:`MemoryDeps` found as the Click context ``obj`` (tests pass fakes
that way); without one, settings come from :func:`research_agent.config.load_settings` and
the model from ``OpenAIChatModel.from_settings``. The reports folder may be given before the
subcommand (``memory --reports-dir DIR list``) or after it (``memory list --reports-dir DIR``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ...config import Settings, load_settings
from ...llm import ChatModel
from ..boundary import console as quiet_console
from ..terminal import dumps_json

__all__ = ["app", "MemoryDeps", "memory_deps", "memory_settings", "chosen_reports_dir", "echo_json", "console",
           "REPORTS_DIR_KEY", "ReportsDirOption", "ask_on_terminal"]  # fmt: skip

REPORTS_DIR_KEY = "research_agent.memory.reports_dir"  # where ``memory --reports-dir`` is kept

ReportsDirOption = Annotated[
    Path | None,
    typer.Option(
        "--reports-dir", metavar="DIR", help="Reports folder (default: RESEARCH_AGENT_REPORTS_DIR or ./reports)."
    ),
]


def _default_model(settings: Settings) -> ChatModel:
    from ...llm import OpenAIChatModel  # with httpx, only for the commands that ask the model

    return OpenAIChatModel.from_settings(settings)


def _default_classify(model: ChatModel, query: str) -> Any:
    from ...stages.classify import classify_domain  # the pipeline's classifier, imported lazily

    return classify_domain(model, query)


def ask_on_terminal(question: str) -> bool | None:
    """A yes/no question to the person at the terminal (no by default); None when there is no
    terminal to ask (a pipe, a script, cron)."""
    if not sys.stdin.isatty():
        return None
    return typer.confirm(question, default=False, err=True)


@dataclass(frozen=True)
class MemoryDeps:
    """Collaborators of the memory commands; pass one as ``obj`` to replace any of them."""

    load_settings: Callable[[Mapping[str, Any]], Settings] = load_settings
    make_model: Callable[[Settings], ChatModel] = _default_model
    classify: Callable[[ChatModel, str], Any] = _default_classify
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    pyplot: Any = None  # matplotlib.pyplot stand-in for tests; None imports the real one
    ask: Callable[[str], bool | None] = ask_on_terminal  # a question before deleting; None: nobody to ask


def memory_deps(ctx: typer.Context) -> MemoryDeps:
    """The MemoryDeps of this invocation: the context ``obj``, or the defaults."""
    obj = ctx.find_root().obj
    if isinstance(obj, MemoryDeps):
        return obj
    if isinstance(obj, Settings):
        base = obj
        return MemoryDeps(
            load_settings=lambda o: base.replace(**{k: v for k, v in o.items() if v is not None})
        )
    return MemoryDeps()


def chosen_reports_dir(ctx: typer.Context, reports_dir: Path | None) -> Path | None:
    """The command's own ``--reports-dir``, else ``memory --reports-dir``, else None (the default)."""
    return reports_dir if reports_dir is not None else ctx.meta.get(REPORTS_DIR_KEY)


def memory_settings(ctx: typer.Context, reports_dir: Path | None = None) -> Settings:
    """Settings for a memory command, in the reports folder :func:`chosen_reports_dir` names."""
    chosen = chosen_reports_dir(ctx, reports_dir)
    return memory_deps(ctx).load_settings({"reports_dir": chosen} if chosen is not None else {})


_PIPE_WIDTH = 200  # a table printed into a pipe or a file: rich would fold it to 80 columns


def console() -> Console:
    """The stdout console tables are printed on; not a terminal (a pipe, a file, a log), it is
    wide enough that a question keeps a readable column (a table is only as wide as it needs)."""
    out = quiet_console(highlight=False, soft_wrap=False)
    return out if out.is_terminal else quiet_console(highlight=False, soft_wrap=False, width=_PIPE_WIDTH)


def echo_json(data: Any) -> None:
    """``data`` as indented JSON on stdout."""
    typer.echo(dumps_json(data, indent=2, default=str))


app = typer.Typer(
    name="memory",
    help="Inspect and manage stored critiques and the lessons drawn from them.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def _memory(ctx: typer.Context, reports_dir: ReportsDirOption = None) -> None:
    """Inspect and manage stored critiques and the lessons drawn from them.

    `memory stats --plot FILE` draws the score history; `memory retry ID` completes a failed critique.
    """
    if reports_dir is not None:
        ctx.meta[REPORTS_DIR_KEY] = reports_dir
