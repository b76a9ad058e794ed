"""A built lesson's text as a run was first given it, kept in the trial ledger beside the rows.

A lesson is built from the critiques that retention keeps; a small ``max_critiques`` can remove
them while the lesson's trial is still undecided (a lesson that lowers the scores makes failing
critiques, which build nothing), and the trial would then stall for want of the lesson. So the
ledger keeps, once per trial, the text a run was first given the lesson with (:class:`LessonText`,
made from the run's critique by :func:`texts_to_record`), and selection can keep offering the
lesson while its trial is undecided (:mod:`research_agent.memory.lessons.build.kept`). A line is
written only where the ledger holds no text of the key in its domain since the key's current
trial began, so the ledger grows by a line per lesson per trial, not per run.

Only built lessons are kept (a person's lessons live in ``lessons.yaml``); whoever reads a text
back checks that it is what the key's template writes, so even a line signed with the user's key
holds nothing a critique file could have planted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ....ids import is_run_id
from ..critique_types import Critique
from ..schema import LESSON_KEY, MAX_LESSON_TEXT, PERSON_KINDS, key_kind
from .rows import text_field

__all__ = ["LessonText", "text_from_json", "texts_to_record"]


@dataclass(frozen=True)
class LessonText:
    """The ``text`` of built lesson ``key`` in ``domain`` as run ``run`` (started at ``stamp``) was
    first given it in the key's current trial."""

    domain: str
    key: str
    text: str
    run: str

    @property
    def stamp(self) -> str:
        """The run's start time as a sortable stamp (the end of its id)."""
        return self.run.rsplit("_", 1)[-1]

    def as_json(self) -> dict[str, Any]:
        return {"domain": self.domain, "key": self.key, "text": self.text, "run": self.run}


def text_from_json(data: Any) -> LessonText:
    """The text :meth:`LessonText.as_json` wrote; ValueError for anything else."""
    if not isinstance(data, Mapping) or set(data) != {"domain", "key", "text", "run"}:
        raise ValueError("lesson text: not a lesson text")
    key, run = data["key"], data["run"]
    if not isinstance(key, str) or not LESSON_KEY.match(key) or key_kind(key) in PERSON_KINDS or not is_run_id(run):
        raise ValueError("lesson text: bad key or run")
    return LessonText(
        text_field(data["domain"], "domain", limit=40), key, text_field(data["text"], "text", limit=MAX_LESSON_TEXT), run
    )


def texts_to_record(held: Mapping[tuple[str, str], LessonText], since: Mapping[tuple[str, str], str],
                    critique: Critique) -> list[LessonText]:  # fmt: skip
    """The texts of the built lessons ``critique``'s run was given that the ledger should add:
    those whose ``(domain, key)`` it ``held`` no text of since their trial began (``since``: the
    stamp a reinstatement started the current trial at; absent: from the start)."""
    out: list[LessonText] = []
    for use in critique.lessons_applied:
        key = use.key or ""
        if not LESSON_KEY.match(key) or key_kind(key) in PERSON_KINDS or not use.text or len(use.text) > MAX_LESSON_TEXT:
            continue
        where = (critique.query_domain, key)
        old = held.get(where)
        if old is None or old.stamp < since.get(where, ""):
            out.append(LessonText(critique.query_domain, key, use.text, critique.id))
    return out
