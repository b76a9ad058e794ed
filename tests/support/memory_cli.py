"""The memory and critique commands mounted on a Typer app, with their collaborators replaced."""

from __future__ import annotations

from pathlib import Path

import typer

from research_agent.cli.critique import critique_command
from research_agent.cli.memory import MemoryDeps, app
from research_agent.config import Settings
from tests.support.memory import NOW


def deps_for(reports: Path, **kw) -> MemoryDeps:
    return MemoryDeps(
        load_settings=lambda overrides: Settings(**{"reports_dir": reports, **overrides}),
        clock=lambda: NOW,
        **kw,
    )


def root_app() -> typer.Typer:
    root = typer.Typer()
    root.command("critique")(critique_command)
    root.add_typer(app, name="memory")
    return root
