"""``research-agent memory``: inspect and manage stored critiques and their lessons.

One module per command family, each registering its commands on the group's Typer ``app``
(:mod:`.group`, which also holds the collaborators they share, :class:`MemoryDeps`):

* :mod:`.critiques` ``list``, ``show``, ``retry``, ``validate``, ``prune``: the critique files (and failed ones)
* :mod:`.lessons`   ``lessons QUERY``: what a run would be given now
* :mod:`.effects`   ``effects``: each lesson's measured effect
* :mod:`.ledger`    ``ledger``, ``reinstate``: the trial ledger, and giving a retired lesson back
* :mod:`.stats`     ``stats``: score trends, adaptive against baseline
* :mod:`.ab`        ``ab QUESTIONS.txt``: a learning A/B on the user's endpoint
* :mod:`.person`    ``add-lesson``, ``trust-lessons``, ``proposals``, ``approve``, ``reject``: the
  lessons a person writes or approves (``lessons_file`` is what ``validate`` says of their file)

Importing this package registers every command, ``ab`` included, whatever was imported before.
"""

from __future__ import annotations

from . import ab, critiques, effects, ledger, lessons, person, stats
from .group import REPORTS_DIR_KEY, MemoryDeps, app, echo_json, memory_deps, memory_settings

__all__ = [
    "app",
    "MemoryDeps",
    "memory_deps",
    "memory_settings",
    "echo_json",
    "REPORTS_DIR_KEY",
    "ab",
    "critiques",
    "effects",
    "ledger",
    "lessons",
    "person",
    "stats",
]
