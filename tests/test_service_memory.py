"""service.memory.Memory: the memory the settings name, read with the settings' folders and rules."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from research_agent.config import Settings
from research_agent.service.memory import Memory
from research_agent.service.person import LessonPlace

NOW = datetime(2026, 1, 5, tzinfo=UTC)


def test_memory_carries_the_settings_folders_and_ttl(tmp_path: Path) -> None:
    settings = Settings(reports_dir=tmp_path / "reports", state_dir=tmp_path / "state", lesson_ttl_days=7.5)
    memory = Memory(settings)
    assert memory.meta_dir == tmp_path / "reports" / "meta"
    assert memory.state_dir == tmp_path / "state"
    assert memory.ttl_days == 7.5
    assert memory.place == LessonPlace(tmp_path / "reports" / "meta", tmp_path / "state")


def test_an_empty_memory_reads_as_empty(tmp_path: Path) -> None:
    memory = Memory(Settings(reports_dir=tmp_path / "reports", state_dir=tmp_path / "state"))
    assert memory.effects(now=NOW) == ()
    assert memory.critiques(now=NOW) == []
    assert not memory.lessons_file().exists
    selection, note = memory.preview("technology", now=NOW)
    assert selection.lessons == () and selection.domain == "technology" and note
