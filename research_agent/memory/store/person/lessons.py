"""The person's lesson file on disk, and whether a person trusted it as it stands.

:func:`read_lessons_file` reads ``<meta>/lessons.yaml`` (see :mod:`.file`) and
compares the sha256 of what it read with the hash recorded in the user state folder
(:mod:`research_agent.files.trust`). Only a trusted file's lessons are usable: a file that
is new, changed or planted gives none until a person trusts it again, and a run says so in
one warning. Reading never raises: every problem, the trust included, is named.

:func:`add_lesson` (``memory add-lesson``, ``memory approve``) writes an entry atomically
and records the new hash; :func:`trust_lessons_file` (``memory trust-lessons``) records the
hash of the file as it stands. Both refuse to launder a file nobody trusted: adding to an
untrusted file that already holds entries is refused until a person has read and trusted it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ....errors import InputError, ResearchError
from ....files.atomic import atomic_write_text
from ....files.safefile import UnsafeFile, check_folder_inside
from ....files.safeyaml import UnsafeYaml, read_capped
from ....files.state_records import locked
from ....files.trust import content_digest, trust_content, trusted_digest
from .file import (
    LESSONS_FILE,
    MAX_LESSONS_FILE_BYTES,
    ParsedLessons,
    PersonLesson,
    lessons_file_text,
    parse_lessons_file,
)

__all__ = [
    "LessonsFile", "read_lessons_file", "add_lesson", "add_lesson_locked", "lessons_lock", "trust_lessons_file",
    "TRUST_HINT",
]

TRUST_HINT = "read it, then run `research-agent memory trust-lessons`"
_LOCK = "lessons-file"


@dataclass(frozen=True)
class LessonsFile:
    """``lessons.yaml`` as read now: its entries, its problems, and whether it is trusted.

    ``trust``: ``trusted``, ``untrusted`` (never trusted), ``changed`` (differs from what was
    trusted), ``unknown`` (the state folder could not be read: ``trust_problem`` says why),
    or ``missing`` (no file).
    """

    path: Path
    trust: str = "missing"
    parsed: ParsedLessons = field(default_factory=ParsedLessons)
    digest: str | None = None
    trust_problem: str | None = None

    @property
    def exists(self) -> bool:
        return self.trust != "missing"

    @property
    def trusted(self) -> bool:
        return self.trust == "trusted"

    @property
    def lessons(self) -> tuple[PersonLesson, ...]:
        """The valid entries, trusted or not (for showing to the person; never for a prompt)."""
        return self.parsed.lessons

    @property
    def usable(self) -> tuple[PersonLesson, ...]:
        """The entries a run may give: the valid ones of a trusted file; none otherwise."""
        return self.parsed.lessons if self.trusted else ()

    def find(self, key: str) -> PersonLesson | None:
        """The trusted entry of ``key``; None when the file is not trusted or has no such entry."""
        return next((lesson for lesson in self.usable if lesson.key == key), None)

    def trust_note(self) -> str | None:
        """Why the file's lessons are not used, in words; None when trusted or missing."""
        if self.trust == "untrusted":
            return f"not trusted: nobody has trusted this file yet; {TRUST_HINT}"
        if self.trust == "changed":
            return f"changed since it was trusted, so it is ignored; {TRUST_HINT}"
        if self.trust == "unknown":
            return f"not used: cannot tell whether it was trusted ({self.trust_problem})"
        return None

    def problems(self) -> list[str]:
        """Everything ``memory validate`` names about the file: its trust, then each problem."""
        note = self.trust_note()
        return ([note] if note else []) + list(self.parsed.problems)

    def warning(self) -> str | None:
        """The one warning a run gives when the file's lessons were skipped (None: nothing skipped)."""
        if not self.exists or self.trusted or not (self.lessons or self.parsed.problems):
            return None
        count = len(self.lessons)
        return f"{self.path}: {count} untrusted lesson(s) skipped ({self.trust_note()})"


def read_lessons_file(meta_dir: Path, state_dir: Path) -> LessonsFile:
    """``<meta_dir>/lessons.yaml``, parsed, with its trust (see the module docstring). Never raises."""
    path = Path(meta_dir) / LESSONS_FILE
    if not (path.exists() or path.is_symlink()):
        return LessonsFile(path)
    try:  # a meta folder leading out of its reports folder is refused, as `memory validate` refuses it
        check_folder_inside(Path(meta_dir), Path(meta_dir).parent)
    except UnsafeFile as exc:
        return LessonsFile(path, "untrusted", ParsedLessons(problems=(str(exc),)))
    try:
        text = read_capped(path, max_bytes=MAX_LESSONS_FILE_BYTES, within=Path(meta_dir))
    except UnsafeYaml as exc:
        return LessonsFile(path, "untrusted", ParsedLessons(problems=(str(exc),)))
    digest = content_digest(text)
    parsed = parse_lessons_file(text)
    try:
        recorded = trusted_digest(state_dir, path)
    except ResearchError as exc:
        return LessonsFile(path, "unknown", parsed, digest, str(exc))
    trust = "trusted" if recorded == digest else ("untrusted" if recorded is None else "changed")
    return LessonsFile(path, trust, parsed, digest)


def _check_writable(current: LessonsFile) -> None:
    """Refuse to add to a file nobody trusted that holds anything, or to a file with problems."""
    if current.exists and not current.trusted and (current.lessons or current.parsed.problems):
        raise InputError(f"{current.path}: {current.trust_note()}; then add the lesson again")
    if current.parsed.problems:
        raise InputError(
            f"{current.path} has problems (`research-agent memory validate` names them); fix them first: "
            f"{current.parsed.problems[0]}"
        )


@contextlib.contextmanager
def lessons_lock(state_dir: Path) -> Iterator[None]:
    """The one lock every change of a lessons file and of the decisions about it is made under
    (adding, approving, rejecting, trusting): a check and the write it allows never interleave."""
    with locked(state_dir, _LOCK):
        yield


def add_lesson(meta_dir: Path, state_dir: Path, lesson: PersonLesson | Callable[[LessonsFile], PersonLesson]) -> LessonsFile:
    """Add ``lesson`` to ``<meta_dir>/lessons.yaml`` (created when missing), write it atomically
    and trust the result; return the file as written. ``lesson`` may be a function of the file as
    it stands under the lock (to choose a key not taken). InputError when the entry is invalid,
    its key is taken, or the file as it stands is not trusted or has problems."""
    with lessons_lock(state_dir):
        add_lesson_locked(meta_dir, state_dir, lesson)
    return read_lessons_file(meta_dir, state_dir)


def add_lesson_locked(
    meta_dir: Path, state_dir: Path, lesson: PersonLesson | Callable[[LessonsFile], PersonLesson]
) -> PersonLesson:
    """:func:`add_lesson`'s work, for a caller already holding :func:`lessons_lock`; the lesson added."""
    current = read_lessons_file(meta_dir, state_dir)
    _check_writable(current)
    if callable(lesson):
        lesson = lesson(current)
    if any(existing.key == lesson.key for existing in current.lessons):
        raise InputError(f"{current.path} already has a lesson {lesson.key}")
    text = lessons_file_text([*current.lessons, lesson])
    parsed = parse_lessons_file(text)
    if parsed.problems:
        raise InputError(f"the lesson cannot be added: {parsed.problems[0].split('.', 1)[-1]}")
    Path(meta_dir).mkdir(parents=True, exist_ok=True)
    atomic_write_text(current.path, text)
    trust_content(state_dir, current.path, content_digest(text))
    return lesson


def trust_lessons_file(meta_dir: Path, state_dir: Path, *, expected_digest: str | None = None) -> LessonsFile:
    """Trust ``<meta_dir>/lessons.yaml`` as it stands; return it as trusted. ``expected_digest``:
    the content the person was shown, which must still be the content now. InputError when
    there is no readable file."""
    with lessons_lock(state_dir):
        current = read_lessons_file(meta_dir, state_dir)
        if not current.exists:
            raise InputError(f"no lessons file at {current.path}")
        if current.digest is None:
            raise InputError(f"{current.path}: {current.parsed.problems[0]}")
        if expected_digest is not None and current.digest != expected_digest:
            raise InputError(f"{current.path} changed while it was shown; run the command again")
        trust_content(state_dir, current.path, current.digest)
    return read_lessons_file(meta_dir, state_dir)
