"""What the critic is not to propose again: texts a person already decided, or already lessons.

Read when a critique is written, so that a rejected proposal does not come back (see
:mod:`..store.proposals`). A state folder or lesson file that cannot be read takes nothing
away from the critique: it only means no proposal is held back.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ...errors import ResearchError
from ..store.person.lessons import read_lessons_file
from ..store.person.proposals import decided_texts, text_hash

__all__ = ["not_to_propose"]

log = logging.getLogger(__name__)


def not_to_propose(meta_dir: Path, state_dir: Path) -> frozenset[str]:
    """Hashes of the texts a person approved or rejected, and of every lesson in ``lessons.yaml``."""
    hashes = {text_hash(lesson.text) for lesson in read_lessons_file(meta_dir, state_dir).lessons}
    try:
        hashes.update(decided_texts(state_dir))
    except ResearchError as exc:
        log.warning("the person's decisions on proposed lessons could not be read: %s", exc)
    return frozenset(hashes)
