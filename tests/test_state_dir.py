"""The user state folder: outside reports/, private, its secret key made once and never trusted loosely."""

from __future__ import annotations

import logging
import os
import stat
import threading
from pathlib import Path

import pytest

from research_agent.config import default_state_dir, load_settings
from research_agent.errors import StorageError
from research_agent.files.atomic import atomic_create_bytes
from research_agent.files.state import KEY_BYTES, KEY_FILE, secret_key, state_folder


def test_the_state_folder_follows_the_environment_and_xdg(tmp_path: Path) -> None:
    assert default_state_dir({"RESEARCH_AGENT_STATE_DIR": str(tmp_path / "s")}) == tmp_path / "s"
    assert default_state_dir({"XDG_STATE_HOME": str(tmp_path)}) == tmp_path / "research-agent"
    settings = load_settings(env={"RESEARCH_AGENT_STATE_DIR": str(tmp_path / "x")}, config_file=tmp_path / "none.toml")
    assert settings.state_dir == tmp_path / "x"


def test_the_key_is_made_once_private_and_kept(tmp_path: Path) -> None:
    key = secret_key(tmp_path / "state")
    assert len(key) == KEY_BYTES and secret_key(tmp_path / "state") == key
    assert stat.S_IMODE(os.stat(tmp_path / "state").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / "state" / KEY_FILE).st_mode) == 0o600
    assert secret_key(tmp_path / "other") != key


def test_a_loose_or_odd_key_file_is_refused_not_trusted(tmp_path: Path) -> None:
    folder = state_folder(tmp_path / "state")
    (folder / KEY_FILE).write_bytes(b"x" * KEY_BYTES)
    os.chmod(folder / KEY_FILE, 0o644)
    with pytest.raises(StorageError, match="may be read by others"):
        secret_key(folder)
    os.chmod(folder / KEY_FILE, 0o600)
    (folder / KEY_FILE).write_bytes(b"short")
    with pytest.raises(StorageError, match="regular file"):
        secret_key(folder)
    (folder / KEY_FILE).unlink()
    (folder / KEY_FILE).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(StorageError, match="regular file"):
        secret_key(folder)


def test_a_state_folder_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(StorageError, match="not a folder"):
        state_folder(tmp_path / "link")


def test_runs_racing_to_make_the_key_all_get_the_same_one(tmp_path: Path) -> None:
    """Every run that found no key writes one; the first written is kept and every run reads
    that one (a run that signed with a key another replaced would read the index as forged)."""
    folder = state_folder(tmp_path / "state")
    start = threading.Barrier(8, timeout=30)
    keys: list[bytes] = []

    def run() -> None:
        start.wait()
        keys.append(secret_key(folder))

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(keys) == 8 and set(keys) == {(folder / KEY_FILE).read_bytes()}
    assert os.listdir(folder) == [KEY_FILE]  # no temp file left behind


def test_atomic_create_keeps_what_is_there(tmp_path: Path) -> None:
    target = tmp_path / "made"
    assert atomic_create_bytes(target, b"first", mode=0o600)
    assert not atomic_create_bytes(target, b"second", mode=0o600)
    assert target.read_bytes() == b"first" and os.listdir(tmp_path) == ["made"]
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(StorageError, match="symlink"):
        atomic_create_bytes(tmp_path / "link", b"x")
    assert not (tmp_path / "elsewhere").exists()


def test_a_state_folder_others_may_write_gets_one_warning_per_process(tmp_path: Path, caplog) -> None:
    """Issue 31 point 9: 0.3.0 used a world-writable state folder without a word."""
    shared = tmp_path / "shared-state"
    shared.mkdir()
    shared.chmod(0o777)
    private = tmp_path / "private-state"
    with caplog.at_level(logging.WARNING, logger="research_agent"):
        for _ in range(3):
            assert state_folder(shared) == shared and state_folder(private) == private
            secret_key(shared)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"the state folder {shared} may be read, written and entered by others (mode 777); chmod 700 {shared}"
    ]
