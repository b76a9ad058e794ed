"""Start a critique as a detached process, so the user never waits for it.

The child runs ``python -m research_agent.memory.critique.worker <record> --reports-dir <dir>``
(:mod:`research_agent.memory.critique.worker`, not the CLI) in a new session with no terminal
attached; it logs its own success or failure to ``<reports>/meta/critique.log``. The
parent returns as soon as the child exists. A ``critique.log`` that is not a regular
file (a FIFO would block the child forever) is refused here, while the user can still
be told.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ...config import Settings
from ...errors import StorageError
from ..store.files import check_log_file

__all__ = ["spawn_critique", "critique_argv", "settings_env"]


def critique_argv(run_record_path: Path, *, reports_dir: Path) -> list[str]:
    """The command line of a detached critique (absolute paths, this interpreter)."""
    return [
        sys.executable,
        "-m",
        "research_agent.memory.critique.worker",
        str(Path(run_record_path).absolute()),
        "--reports-dir",
        str(Path(reports_dir).absolute()),
    ]


def settings_env(settings: Settings) -> dict[str, str]:
    """Environment entries that give a child process this run's model and endpoint.

    Flags on the parent's command line (``--model``, ``--fast-model``...) would
    otherwise be lost: the child resolves its settings from the environment.
    """
    env = {"RESEARCH_AGENT_MODEL": settings.model, "RESEARCH_AGENT_LLM_TIMEOUT": str(settings.llm_timeout)}
    if settings.fast_model:
        env["RESEARCH_AGENT_FAST_MODEL"] = settings.fast_model
    if settings.base_url:
        env["OPENAI_BASE_URL"] = settings.base_url
    if settings.api_key:
        env["OPENAI_API_KEY"] = settings.api_key
    if settings.price_table is not None:
        env["RESEARCH_AGENT_PRICES"] = str(Path(settings.price_table).absolute())
    return env


def spawn_critique(
    run_record_path: Path,
    *,
    reports_dir: Path,
    settings: Settings | None = None,
    env_overrides: Mapping[str, str] | None = None,
    popen: Callable[..., Any] = subprocess.Popen,
) -> int:
    """Start the critique of a run in the background and return its pid at once.

    With ``settings``, the child gets this run's model and endpoint (see
    :func:`settings_env`); ``env_overrides`` are added last. ``popen`` is a seam for
    tests. Raises StorageError when the process cannot be started, or when the
    record's folder holds a ``critique.log`` that is not a regular file.
    """
    check_log_file(Path(run_record_path).parent)
    env = None
    if settings is not None:
        env_overrides = {**settings_env(settings), **(env_overrides or {})}
    if env_overrides:
        # Copying the environment for a child is not configuration: config.py still
        # decides what the child's settings are, from this environment.
        env = {**os.environ, **{str(k): str(v) for k, v in env_overrides.items()}}
    kwargs: dict[str, Any] = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "close_fds": True,
        "cwd": str(Path.cwd()),
        "env": env,
    }
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.DETACHED_PROCESS
    else:
        kwargs["start_new_session"] = True
    try:
        process = popen(critique_argv(run_record_path, reports_dir=reports_dir), **kwargs)
    except OSError as exc:
        raise StorageError(f"cannot start the background critique: {exc.strerror or exc}") from None
    return int(process.pid)
