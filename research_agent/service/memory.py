"""The memory as the settings place it: one view that carries its folders and rules once.

Every front end (the CLI's ``memory`` commands, the MCP memory tools, the web workbench, the batch
summary) reads the same memory with the same arguments: ``<reports>/meta``, the user state folder
(where the index key and the trust of ``lessons.yaml`` are kept), the lessons' time to live and
the trial rules. :class:`Memory` is built from the settings and spells them out once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..config import Settings
from ..memory.effects.lesson_effects import LessonEffect
from ..memory.lessons.effects_view import lesson_effects, shown_lesson_texts
from ..memory.lessons.select import preview_lessons
from ..memory.lessons.setting import RunSetting
from ..memory.lessons.types import LessonSelection
from ..memory.store.critique_types import Critique
from ..memory.store.files import LoadedCritique
from ..memory.store.index.seal import IndexTrust
from ..memory.store.index.summary import CritiqueIndex, list_critiques, open_index
from ..memory.store.person.lessons import LessonsFile, read_lessons_file
from ..memory.store.trials.record import TrialEvent, reinstate_lesson
from .person import LessonPlace

__all__ = ["Memory"]


@dataclass(frozen=True)
class Memory:
    """The memory that ``settings`` name: its folders, the lessons' time to live and trial rules,
    and the reads every front end makes of it with those."""

    settings: Settings

    @property
    def meta_dir(self) -> Path:
        """``<reports>/meta``: the critiques, the index, the trial ledger, ``lessons.yaml``."""
        return self.settings.meta_dir

    @property
    def state_dir(self) -> Path:
        """The user state folder: the index key and seals, the trust of ``lessons.yaml``."""
        return self.settings.state_dir

    @property
    def ttl_days(self) -> float:
        """How long a lesson lives, in days."""
        return self.settings.lesson_ttl_days

    @property
    def place(self) -> LessonPlace:
        """Where a person's lesson files go."""
        return LessonPlace(self.meta_dir, self.state_dir)

    def effects(self, *, now: datetime, domain: str | None = None) -> tuple[LessonEffect, ...]:
        """Each lesson's measured effect (of ``domain``, or of every domain) at ``now``."""
        return lesson_effects(self.meta_dir, now=now, domain=domain, ttl_days=self.ttl_days, state_dir=self.state_dir)

    def critiques(self, *, now: datetime) -> list[LoadedCritique]:
        """The stored critiques (and the files that failed validation), from the index."""
        return list_critiques(self.meta_dir, state_dir=self.state_dir, now=now)

    def shown_texts(self, critique: Critique, *, now: datetime) -> Critique:
        """``critique`` with each applied lesson's text shown only where it is the lesson's text now."""
        return shown_lesson_texts(self.meta_dir, critique, now=now, ttl_days=self.ttl_days, state_dir=self.state_dir)

    def preview(
        self, domain: str, *, now: datetime, setting: RunSetting | None = None
    ) -> tuple[LessonSelection, str]:
        """The lessons a run in ``domain`` would get at ``now`` (in ``setting``), and a note."""
        return preview_lessons(
            self.meta_dir, domain, now=now, ttl_days=self.ttl_days, control_fraction=self.settings.control_fraction,
            trial_probability=self.settings.trial_probability, state_dir=self.state_dir, setting=setting,
        )  # fmt: skip

    def lessons_file(self) -> LessonsFile:
        """``lessons.yaml``, parsed, with its trust."""
        return read_lessons_file(self.meta_dir, self.state_dir)

    def reinstate(self, key: str, *, domain: str | None, now: datetime) -> TrialEvent:
        """Record that a person reinstated the retired lesson ``key`` (in ``domain``)."""
        return reinstate_lesson(self.meta_dir, self.state_dir, key, domain=domain, now=now)

    def index(self, *, rebuild: bool = False) -> CritiqueIndex:
        """The summary index, refreshed, trusted with the user's key (every row read again with
        ``rebuild``); use it in a ``with``."""
        return open_index(self.meta_dir, trust=IndexTrust(self.state_dir), rebuild=rebuild)
