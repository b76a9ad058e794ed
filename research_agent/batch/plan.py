"""From a questions file (or a stored batch) to the batch to run: each question's settings, its
entry, and what an earlier unfinished batch of the same questions already did.

Everything here happens before any model call, so a row no run could use (a provider that
needs a URL that is not set, a value out of range) stops the batch as the file's own
problems do: one line naming the line, exit 2.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..config import MODES, Settings
from ..errors import ConfigError, InputError
from ..ids import format_utc
from ..search.registry import check_providers, provider_names
from .questions import BatchQuestion
from .reach import sign_reach
from .state import BatchState, Entry, entry_key, make_batch_id

__all__ = ["Batch", "question_settings", "run_options", "plan_batch", "rows_of", "still_done", "plain_value",
           "KEPT_OVERRIDES"]

# The options a stored batch keeps for --resume ID: those that decide what its runs do. Never the
# ones that reach outside (--allow-private, --context, --rules, --searxng-url): a state file under
# reports/ may have been planted, so those are given again on the command line or not at all. Its
# folders (corpus_dirs, and each row's corpus) are kept but read only under the user's signature
# (.reach): a resume without its file refuses them otherwise.
KEPT_OVERRIDES = (
    "mode", "corpus_dirs", "corpus_exclude", "search_providers", "max_sources", "model", "fast_model",
    "run_timeout", "llm_timeout", "retry", "min_viability", "max_plans", "max_revisions", "critique", "lessons",
    "use_cache",
)  # fmt: skip


@dataclass
class Batch:
    """A batch ready to run: its state and each question's settings (by entry key)."""

    state: BatchState
    settings: dict[str, Settings]
    new: bool = True  # False: an earlier batch continued
    page: dict[str, Any] = field(default_factory=dict)  # what the batch page shows, once a session wrote it
    # entry key -> the eval whose measured half the question is (eval --holdout): its critique builds no lesson
    held_out: dict[str, str] = field(default_factory=dict)

    def todo(self) -> list[Entry]:
        """The questions not done yet, and those done whose critique a stop left unrun, in file order."""
        return [entry for entry in self.state.entries if entry.state != "done" or entry.critique_owed]


def question_settings(base: Settings, row: dict[str, Any]) -> Settings:
    """``base`` with what one row set; ConfigError when no run could use the result."""
    changes: dict[str, Any] = {}
    if "mode" in row:
        changes["mode"] = MODES[row["mode"]]
    if "corpus" in row:
        changes["corpus_dirs"] = tuple(Path(folder) for folder in row["corpus"])
    if "search" in row:
        changes["search_providers"] = tuple(row["search"])
    if "max_sources" in row:
        changes["max_sources"] = int(row["max_sources"])
    settings = base.replace(**changes).validate() if changes else base
    check_providers(settings, provider_names(settings))
    return settings


def run_options(settings: Settings) -> dict[str, Any]:
    """What decides a run of ``settings``, as plain data (part of a question's key)."""
    return {
        "mode": settings.mode.name,
        "corpus": [str(Path(folder).expanduser().resolve()) for folder in settings.corpus_dirs],
        "search": list(provider_names(settings)),
        "max_sources": settings.source_limit,
        "model": settings.model,
        "fast_model": settings.fast_model_name,
    }


def rows_of(state: BatchState) -> list[BatchQuestion]:
    """The questions of a stored batch, as its file gave them (for --resume ID without a file)."""
    rows = []
    for entry in state.entries:
        row = entry.row
        rows.append(BatchQuestion(
            entry.line, entry.question, row.get("mode"),
            tuple(row["corpus"]) if row.get("corpus") else None, tuple(row["search"]) if row.get("search") else None,
            row.get("max_sources"),
        ))  # fmt: skip
    return rows


def plan_batch(
    questions: Sequence[BatchQuestion],
    base: Settings,
    *,
    file: str,
    overrides: dict[str, Any],
    previous: BatchState | None,
    now: datetime | None = None,
) -> Batch:
    """The batch for ``questions`` run with ``base`` settings: ``previous`` continued when given
    (its questions done with the same options and still on disk are kept), else a new one."""
    now = now or datetime.now(UTC)
    kept = {entry.key: entry for entry in previous.entries if still_done(entry, base)} if previous else {}
    # The run a question not done had begun: resumed from its checkpoints, never researched again.
    begun = {entry.key: entry.run_id for entry in previous.entries if entry.run_id} if previous else {}
    settings: dict[str, Settings] = {}
    by_row: dict[str, Settings] = {}
    entries = []
    for question in questions:
        row = question.row()
        shape = json.dumps(row, sort_keys=True)
        try:
            chosen = by_row[shape] if shape in by_row else question_settings(base, row)
        except (ConfigError, InputError) as exc:
            raise InputError(f"questions file {file or 'of the batch'}: line {question.line}: {exc}") from None
        by_row[shape] = chosen
        options = run_options(chosen)
        key = entry_key(question.question, options)
        if key in settings:
            continue  # the same question with the same options twice (a stored batch merged with its file)
        settings[key] = chosen
        done = kept.get(key)
        entry = done if done is not None else Entry(question.line, question.question, key, row, options,
                                                    run_id=begun.get(key, ""))  # fmt: skip
        entry.line, entry.row = question.line, row
        entries.append(entry)
    state = previous or BatchState(make_batch_id(Path(file).stem if file else "batch", now), base.meta_dir,
                                   file=file, created=format_utc(now))  # fmt: skip
    state.file = file or state.file
    state.entries = entries
    state.status = "running"
    state.overrides = {key: plain_value(value) for key, value in overrides.items() if key in KEPT_OVERRIDES}
    sign_reach(state, base.state_dir)
    return Batch(state, settings, new=previous is None)


def still_done(entry: Entry, settings: Settings) -> bool:
    """A question a stored batch calls done, whose run record is still there."""
    return entry.state == "done" and bool(entry.run_id) and (settings.meta_dir / f"run-{entry.run_id}.yaml").is_file()


def plain_value(value: Any) -> Any:
    """A setting as YAML keeps it (folders as text, tuples as lists)."""
    if isinstance(value, tuple | list):
        return [plain_value(item) for item in value]
    return str(value) if isinstance(value, Path) else value
