"""A person's lessons as a run is given them: from ``lessons.yaml``, only while it is trusted.

:meth:`PersonLessons.read` takes the usable entries of the trusted file (see
:mod:`..store.person.lessons`) and the one warning a run gives when lessons were skipped
(an untrusted or changed file, or refused entries). :meth:`PersonLessons.for_domain` turns
the entries of a domain into lessons, those written for every domain first: they are
eligible from the first run in their domain and stage, and take the stage's slots before
the lessons research-agent built. Their text is the person's own, exactly as trusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..store.person.file import ANY_DOMAIN, PersonLesson
from ..store.person.lessons import read_lessons_file
from .types import Lesson

__all__ = ["PersonLessons", "as_lesson"]


def as_lesson(entry: PersonLesson) -> Lesson:
    """The lesson of one entry: its key, stage, target and text; no critiques behind it."""
    return Lesson(entry.key, entry.stage, entry.target, entry.text, ())


@dataclass(frozen=True)
class PersonLessons:
    """The entries a run may give, and what the run warns about the file."""

    entries: tuple[PersonLesson, ...] = ()
    warnings: tuple[str, ...] = ()

    @classmethod
    def read(cls, meta_dir: Path, state_dir: Path) -> PersonLessons:
        """The trusted ``<meta_dir>/lessons.yaml`` (never raises; see the module docstring)."""
        found = read_lessons_file(meta_dir, state_dir)
        warning = found.warning()
        if warning is None and found.trusted and found.parsed.problems:
            warning = (
                f"{found.path}: {len(found.parsed.problems)} problem(s), its refused entries skipped "
                "(run `research-agent memory validate`)"
            )
        return cls(found.usable, (warning,) if warning else ())

    def for_domain(self, domain: str) -> tuple[Lesson, ...]:
        """The lessons of ``domain``: those for every domain first, then the domain's own, in file order."""
        everywhere = [entry for entry in self.entries if entry.domain == ANY_DOMAIN]
        own = [entry for entry in self.entries if entry.domain == domain]
        return tuple(as_lesson(entry) for entry in (*everywhere, *own))

    def planning_domains(self) -> tuple[set[str], frozenset[str]]:
        """The domains with planning lessons of their own, and the keys of the planning lessons
        for every domain (what the first decompose prompt must offer)."""
        planning = [entry for entry in self.entries if entry.stage == "decompose"]
        domains = {entry.domain for entry in planning if entry.domain != ANY_DOMAIN}
        return domains, frozenset(entry.key for entry in planning if entry.domain == ANY_DOMAIN)

    def stages_and_targets(self) -> dict[str, tuple[str, str]]:
        """``key -> (stage, target)`` of every entry, for measuring their effects."""
        return {entry.key: (entry.stage, entry.target) for entry in self.entries}
