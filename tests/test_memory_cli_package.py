"""The memory command group registers all its own commands, ``ab`` included (issue 20, point 9)."""

from __future__ import annotations

import json
import subprocess
import sys

import typer

from research_agent.cli.memory import app

COMMANDS = [
    "ab", "add-lesson", "approve", "effects", "ledger", "lessons", "list", "proposals", "prune", "reinstate", "reject",
    "retry", "show", "stats", "trust-lessons", "validate",
]

_PROBE = """
import json, sys, typer
import research_agent.cli.memory as memory
commands = sorted(typer.main.get_group(memory.app).commands)
print(json.dumps({"commands": commands, "root_loaded": "research_agent.cli.root" in sys.modules}))
"""


def test_a_fresh_interpreter_importing_the_memory_group_finds_ab() -> None:
    """Nothing else imported first (not cli.root): the group alone carries every command."""
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {"commands": COMMANDS, "root_loaded": False}


def test_the_group_in_this_process_has_every_command() -> None:
    assert sorted(typer.main.get_group(app).commands) == COMMANDS
