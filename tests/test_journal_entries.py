"""The run journal's files: an entry whose lock nobody holds reads interrupted (no timer), entries
that are not entries are passed over, retention drops only done runs, settings come back as they
were (no secret kept), and a question asked twice is answered on resume as it was each time."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from research_agent.config import Settings, load_settings
from research_agent.errors import LLMError
from research_agent.files.locks import exclusive_lock, held
from research_agent.journal.checkpoints import Checkpoints, RememberingModel, checkpoint_dir
from research_agent.journal.entries import (
    JournalEntry,
    entry_path,
    list_entries,
    lock_path,
    read_entry,
    write_entry,
)
from research_agent.journal.prune import prune_journal
from research_agent.journal.run_journal import journaled
from research_agent.journal.settings_snapshot import restored, snapshot
from research_agent.llm import ChatModel
from research_agent.llm.protocol import ChatRequest, ChatResponse
from research_agent.modes import MODES

RUN = "what-is-vacuum_20260101T090000000000Z"
KEY = b"k" * 32  # the user's key that signs checkpoints


def _entry(run_id: str = RUN, status: str = "running") -> JournalEntry:
    return JournalEntry(run_id, "What is VACUUM?", "standard", "cli", "2026-01-01T09:00:00Z", status=status)


def test_a_running_entry_is_interrupted_once_nobody_holds_its_lock(tmp_path: Path) -> None:
    write_entry(tmp_path, _entry())
    with exclusive_lock(lock_path(tmp_path, RUN)):
        assert held(lock_path(tmp_path, RUN))
        assert read_entry(tmp_path, RUN).status == "running"  # type: ignore[union-attr]
    assert not held(lock_path(tmp_path, RUN))
    assert read_entry(tmp_path, RUN).status == "interrupted"  # type: ignore[union-attr]
    assert [e.id for e in list_entries(tmp_path, status="interrupted")] == [RUN]


def test_the_journal_says_how_a_run_ended_and_a_late_cancel_leaves_it_done(tmp_path: Path) -> None:
    settings = Settings(reports_dir=tmp_path, context_path=None)
    settings.meta_dir.mkdir()  # as a run's assembly makes it
    started = datetime(2026, 1, 1, 9, tzinfo=UTC)
    try:
        with journaled(settings, RUN, "What is VACUUM?", started, front_end="mcp", seed=7) as journal:
            assert read_entry(settings.meta_dir, RUN).status == "running"  # type: ignore[union-attr]
            journal.done(tmp_path / f"{RUN}.md")
            raise asyncio.CancelledError  # a cancel after the report was written
    except asyncio.CancelledError:
        pass
    entry = read_entry(settings.meta_dir, RUN)
    assert entry is not None and entry.status == "done" and entry.report.endswith(".md") and entry.seed == 7
    assert not lock_path(settings.meta_dir, RUN).exists()
    other = RUN.replace("what", "why")
    try:
        with journaled(settings, other, "Why VACUUM?", started, front_end="cli", seed=1):
            raise LLMError("the writer broke")
    except LLMError:
        pass
    failed = read_entry(settings.meta_dir, other)
    assert failed is not None and failed.status == "failed" and failed.error == "the writer broke"


def test_files_that_are_no_entries_are_passed_over(tmp_path: Path) -> None:
    write_entry(tmp_path, _entry(status="done"))
    (tmp_path / "journal-not-an-id.json").write_text("{}", encoding="utf-8")
    bad = "bad-one_20260101T100000000000Z"
    entry_path(tmp_path, bad).write_text(json.dumps({"id": bad, "status": "sleeping"}), encoding="utf-8")
    entry_path(tmp_path, "junk_20260101T110000000000Z").write_text("[1, 2", encoding="utf-8")
    assert [e.id for e in list_entries(tmp_path)] == [RUN]


def test_retention_drops_done_runs_beyond_the_newest_and_never_a_run_to_resume(tmp_path: Path) -> None:
    ids = [f"run-{n}_2026010{n}T090000000000Z" for n in range(1, 6)]
    for n, run_id in enumerate(ids, start=1):
        write_entry(tmp_path, _entry(run_id, status="failed" if n == 1 else "done"))
        checkpoint_dir(tmp_path, run_id).mkdir(parents=True)
    assert prune_journal(tmp_path, 2, dry_run=True) and len(list_entries(tmp_path)) == 5
    removed = prune_journal(tmp_path, 2)
    assert sorted(p.name for p in removed) == sorted([*(f"journal-{i}.json" for i in ids[1:3]), *ids[1:3]])
    assert [e.id for e in list_entries(tmp_path)] == [ids[4], ids[3], ids[0]], "the failed run stays"
    assert checkpoint_dir(tmp_path, ids[0]).is_dir() and not checkpoint_dir(tmp_path, ids[1]).exists()


def test_settings_come_back_as_the_run_had_them_without_its_keys(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    settings = load_settings({"mode": "quick", "corpus_dirs": (corpus,), "max_sources": 5, "api_key": "sk-secret",
                              "min_viability": 60}, env={})  # fmt: skip
    kept = json.loads(json.dumps(snapshot(settings)))
    assert "api_key" not in kept and "sk-secret" not in json.dumps(kept)
    back = restored(kept, reports_dir=tmp_path / "reports", load=lambda o: load_settings(o, env={"OPENAI_API_KEY": "k"}))
    assert back.mode == MODES["quick"] and back.corpus_dirs == (corpus,) and back.max_sources == 5
    assert back.min_viability == 60 and back.api_key == "k" and back.reports_dir == tmp_path / "reports"


class Counting(ChatModel):
    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        return ChatResponse({"n": self.calls}, f"answer {self.calls}", "m")


async def test_the_same_question_asked_twice_is_answered_on_resume_as_it_was_each_time(tmp_path: Path) -> None:
    first = Counting()
    asking = RememberingModel(first, Checkpoints(tmp_path, RUN, KEY))
    request = ChatRequest(stage="decompose", system="s", user="u")
    answers = [(await asking.complete(request)).text for _ in range(2)]
    again = Counting()
    resumed = RememberingModel(again, Checkpoints(tmp_path, RUN, KEY))
    replayed = [(await resumed.complete(request)).text for _ in range(3)]
    assert answers == ["answer 1", "answer 2"] and replayed == ["answer 1", "answer 2", "answer 1"]
    assert again.calls == 1 and resumed.checkpoints.reused == 2
    assert sorted(p.name.split("-")[0] for p in checkpoint_dir(tmp_path, RUN).iterdir()) == ["plan"] * 3


async def test_a_checkpoint_edited_or_kept_under_another_key_is_asked_again(tmp_path: Path) -> None:
    request = ChatRequest(stage="decompose", system="s", user="u")
    first = RememberingModel(Counting(), Checkpoints(tmp_path, RUN, KEY))
    assert (await first.complete(request)).text == "answer 1"
    (kept,) = checkpoint_dir(tmp_path, RUN).iterdir()
    signed = json.loads(kept.read_text(encoding="utf-8"))
    assert signed["data"]["text"] == "answer 1" and set(signed) == {"data", "mac"}
    elsewhere = Counting()  # the same file, read under another user's key
    assert (await RememberingModel(elsewhere, Checkpoints(tmp_path, RUN, b"x" * 32)).complete(request)).text == "answer 1"
    assert elsewhere.calls == 1
    signed["data"]["text"] = "words the model never said"  # a planted or edited answer
    kept.write_text(json.dumps(signed), encoding="utf-8")
    again = Counting()
    resumed = RememberingModel(again, Checkpoints(tmp_path, RUN, KEY))
    assert (await resumed.complete(request)).text == "answer 1" and again.calls == 1
    assert resumed.checkpoints.reused == 0
