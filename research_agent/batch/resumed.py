"""A batch question's run across stops: the run it resumes, or the report it already wrote.

A question keeps its run's id from the run's start (:func:`question_journal` hears it). On the
question's next attempt, the journal (:mod:`research_agent.journal`) says where that run stands:

* ``done``: the report is written; the question only needs its critique (:func:`written_report`
  gives the run's result, read back from its report and record);
* ``interrupted``, ``failed`` or ``cancelled``: the run is resumed from its checkpoints, when its
  entry is signed with the user's key (:mod:`research_agent.journal.signing`; else it is asked afresh);
* anything else (no entry, another question's run): the question is researched afresh.
"""

from __future__ import annotations

from pathlib import Path

from ..config import Settings
from ..errors import ResearchError
from ..journal.entries import RESUMABLE, read_entry, signed_entry
from ..journal.run_journal import Journalling
from ..journal.signing import user_key
from ..record.io import read_run_record
from ..results import ResearchResult
from ..run_refs import run_file
from .plan import Batch
from .state import Entry

__all__ = ["question_journal", "written_report"]


def question_journal(batch: Batch, entry: Entry, settings: Settings) -> Journalling:
    """The journal's part of the question's run: its front end (``batch`` or ``eval``), the run to
    resume when the question has one that can be, and the id kept (and saved) as the run starts."""
    previous = read_entry(settings.meta_dir, entry.run_id) if entry.run_id else None
    resume = entry.run_id if previous is not None and previous.question == entry.question and \
        previous.status in RESUMABLE else None  # fmt: skip
    if resume is not None and not signed_entry(settings.meta_dir, resume, user_key(settings.state_dir)):
        resume = None  # not this user's run (planted, or written before entries were signed): asked afresh

    def started(run_id: str) -> None:
        entry.run_id = run_id
        batch.state.save(entry)  # before any model call: a kill from here on leaves the id to resume

    return Journalling(batch.state.KIND, resume=resume, on_started=started)


def written_report(entry: Entry, settings: Settings) -> ResearchResult | None:
    """The result of the question's run when its report is written (its journal says ``done`` and its
    report and record are there), else None."""
    previous = read_entry(settings.meta_dir, entry.run_id) if entry.run_id else None
    if previous is None or previous.status != "done" or previous.question != entry.question:
        return None
    report = run_file(settings.reports_dir, "report", entry.run_id)
    record_path = run_file(settings.reports_dir, "record", entry.run_id)
    try:
        record = read_run_record(record_path)
        markdown = Path(report).read_text(encoding="utf-8")
    except (OSError, ResearchError, ValueError):
        return None
    return ResearchResult(record, markdown, report, record_path, {})
