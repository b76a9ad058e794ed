"""The questions file of a learning A/B: one question per line, read without trusting it.

:func:`read_questions` refuses, with a one-line :class:`~research_agent.errors.InputError`
and before any model is asked anything, a file that is missing, not a regular file,
larger than :data:`MAX_QUESTIONS_BYTES`, binary or not UTF-8, that holds no question
(blank lines and ``#`` comments are skipped), more than :data:`MAX_QUESTIONS`, or a
question longer than the run's query limit.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import InputError
from ...files.safefile import UnsafeFile, read_text_capped

__all__ = ["MAX_QUESTIONS_BYTES", "MAX_QUESTIONS", "read_questions", "questions_from_text", "looks_binary"]

MAX_QUESTIONS_BYTES = 1024 * 1024
MAX_QUESTIONS = 200

# C0 controls other than tab, newline, form feed and carriage return, and DEL.
_CONTROLS = frozenset(range(0x00, 0x09)) | frozenset(range(0x0E, 0x20)) | {0x0B, 0x7F}


def looks_binary(text: str) -> bool:
    """A NUL character, or more than 5% control characters: not a text file of questions."""
    if "\x00" in text:
        return True
    sample = text[:65536]
    controls = sum(1 for ch in sample if ord(ch) in _CONTROLS)
    return bool(sample) and controls / len(sample) > 0.05


def read_questions(path: Path, *, max_chars: int, max_questions: int = MAX_QUESTIONS) -> tuple[str, ...]:
    """The questions in the file at ``path``, in order (see the module docstring).

    ``max_chars`` is the longest question a run accepts. Raises InputError naming the file.
    """
    path = Path(path)
    try:
        text = read_text_capped(path, max_bytes=MAX_QUESTIONS_BYTES, follow_symlinks=True)
    except UnsafeFile as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        if "not UTF-8" in reason:
            reason = f"not a text file ({reason})"
        raise InputError(f"questions file {path}: {reason}") from None
    if looks_binary(text):
        raise InputError(f"questions file {path}: binary data, not a text file of questions")
    return questions_from_text(text, source=str(path), max_chars=max_chars, max_questions=max_questions)


def questions_from_text(
    text: str, *, source: str = "questions", max_chars: int, max_questions: int = MAX_QUESTIONS
) -> tuple[str, ...]:
    """The questions in ``text``: one per line, blank lines and ``#`` comments skipped."""
    questions: list[str] = []
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        question = line.strip()
        if not question or question.startswith("#"):
            continue
        if len(question) > max_chars:
            raise InputError(
                f"questions file {source}: line {number} is {len(question)} characters long; the limit is {max_chars}"
            )
        questions.append(question)
        if len(questions) > max_questions:
            raise InputError(
                f"questions file {source}: more than {max_questions} questions; the limit is {max_questions}"
            )
    if not questions:
        raise InputError(
            f"questions file {source}: no questions (write one per line; blank lines and # comments are skipped)"
        )
    return tuple(questions)
