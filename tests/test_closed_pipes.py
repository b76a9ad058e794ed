"""Issue 43.9: a reader that closes the pipe early (``memory show latest | head``) ends the command
quietly: nothing on stderr, and the status of a Unix tool stopped by SIGPIPE (141), whatever printed
(typer's help, echo, a rich table, JSON)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from research_agent.cli.boundary import PIPE_CLOSED
from tests.support.cli import CLI, cli_env
from tests.support.memory import make_critique, put


@pytest.mark.parametrize(
    "args",
    [
        ["memory", "show", "latest"],
        ["memory", "show", "latest", "--json"],
        ["memory", "proposals"],
        ["memory", "list"],
        ["memory", "list", "--json"],
        ["memory", "effects"],
        ["memory", "stats"],
        ["--help"],
        ["run", "--help"],
    ],
)
def test_a_closed_pipe_ends_the_command_quietly(tmp_path, args):
    reports = tmp_path / "reports"
    for n in range(3):
        put(reports / "meta", make_critique(n))
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the command writes its first byte: every write fails
    try:
        done = subprocess.run(
            [str(CLI), *args], stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120, cwd=tmp_path,
            env=cli_env(tmp_path, env={"RESEARCH_AGENT_REPORTS_DIR": str(reports)}),
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (PIPE_CLOSED, "")


def test_a_broken_pipe_that_is_not_the_output_is_an_error_as_any_other():
    code = (
        "from research_agent.cli.boundary import guarded\n"
        "@guarded\n"
        "def command():\n"
        "    raise BrokenPipeError(32, 'Broken pipe')  # a helper process's pipe, say: stdout is fine\n"
        "try:\n    command()\nexcept Exception as exc:  # typer.Exit, outside a click context\n"
        "    raise SystemExit(exc.exit_code) from None\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "error: unexpected BrokenPipeError" in done.stderr, done.stderr
