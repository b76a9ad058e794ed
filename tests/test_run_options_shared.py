"""run_options.with_options: a block of shared options added to a command's signature reaches it."""

from __future__ import annotations

from typing import Any

import typer
from typer.testing import CliRunner

from research_agent.cli import run_options as opt


def _app(seen: dict[str, Any]) -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.command()
    @opt.with_options(opt.SERVER_SETTINGS)
    def serve(ctx: typer.Context, port: int = 1, **run_settings: Any) -> None:
        seen.update(port=port, given=run_settings, params=dict(ctx.params))

    return app


def test_the_shared_options_reach_the_command_and_its_settings() -> None:
    seen: dict[str, Any] = {}
    result = CliRunner().invoke(_app(seen), ["--port", "7", "--model", "m1", "--no-cache", "--timeout", "30"])
    assert result.exit_code == 0, result.output
    assert seen["port"] == 7
    assert seen["given"]["model"] == "m1" and seen["given"]["no_cache"] is True and seen["given"]["timeout"] == 30.0
    assert set(seen["given"]) == {name for name, _, _ in opt.SERVER_SETTINGS}
    overrides = opt.settings_overrides(seen["params"])
    assert (overrides["model"], overrides["use_cache"], overrides["run_timeout"]) == ("m1", False, 30.0)
    assert overrides["fast_model"] is None and overrides["lessons"] is None  # not given: the setting stays


def test_an_option_not_in_the_block_is_refused() -> None:
    result = CliRunner().invoke(_app({}), ["--deep"])
    assert result.exit_code == 2
