"""What ``memory validate`` says about ``reports/meta/lessons.yaml``: its trust and each problem.

Kept apart from the command modules so that ``validate`` (a critiques command) need not
import the person's lesson commands.
"""

from __future__ import annotations

from ...config import Settings
from ...service.memory import Memory
from ..terminal import echo

__all__ = ["validate_lessons_file"]


def validate_lessons_file(settings: Settings) -> int:
    """Print the lesson file's state and every problem; return how many problems there are
    (0 for a trusted, valid file or no file)."""
    found = Memory(settings).lessons_file()
    if not found.exists:
        return 0
    problems = found.problems()
    if not problems:
        echo(f"ok       {found.path.name}: {len(found.lessons)} lesson(s), trusted")
        return 0
    for problem in problems:
        echo(f"invalid  {found.path.name}: {problem}")
    return len(problems)
