"""The installed CLI, run in a subprocess with an isolated environment (the ``corpus`` and
``server`` fixtures it runs against are in conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CLI = Path(sys.executable).parent / "research-agent"


def cli(tmp_path: Path, *args: str, base_url: str | None = None, env: dict | None = None, cwd: Path | None = None):
    return subprocess.run(
        [str(CLI), *args], capture_output=True, text=True, env=cli_env(tmp_path, base_url, env), cwd=cwd or tmp_path,
        timeout=120,
    )


def cli_env(tmp_path: Path, base_url: str | None = None, env: dict | None = None) -> dict[str, str]:
    """The isolated environment the CLI runs in: no config file, caches and home under ``tmp_path``."""
    environ = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "RESEARCH_AGENT_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "NO_COLOR": "1",
    }
    if base_url:
        environ["OPENAI_BASE_URL"] = base_url
    environ.update(env or {})
    return environ
