"""The detached critique: ``python -m research_agent.memory.critique.worker RECORD --reports-dir DIR``.

:func:`research_agent.memory.critique.spawn.spawn_critique` starts this in a new session with no
terminal, after the user already has the report. It prints nothing: the outcome goes to
``critique.log`` next to the record (written by :func:`~research_agent.memory.critique.schedule.critique_now`,
opened without blocking), and the exit code is the error's (0 on success). Settings come
from the environment the parent prepared (:func:`~research_agent.memory.critique.spawn.settings_env`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ...config import load_settings
from ...errors import ResearchError
from .schedule import critique_now

__all__ = ["main"]


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m research_agent.memory.critique.worker", add_help=False)
    parser.add_argument("record", type=Path)
    parser.add_argument("--reports-dir", type=Path, default=None)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Critique one run record; return the exit code (the ResearchError's, 1 for anything else)."""
    args = _arguments(argv)
    overrides = {"reports_dir": args.reports_dir} if args.reports_dir is not None else {}
    try:
        critique_now(args.record, lambda: load_settings(overrides))
    except ResearchError as exc:
        return exc.exit_code
    except Exception:  # critique_run has logged it to critique.log; there is no one else to tell
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
