"""Files a run writes: never a special file replaced, modes kept, a report and its record both or neither."""

from __future__ import annotations

import errno
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from research_agent.errors import DiskFull, InputError, StorageError
from research_agent.files.atomic import TEMP_SUFFIX, atomic_write_all, atomic_write_text
from research_agent.ids import make_run_id
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import QUERY, DocsProvider, script, settings_for, write_docs
from tests.support.reliability import mounted
from tests.support.research_responder import ResearchResponder

NOW = datetime(2026, 5, 4, 3, 2, 1, 123456, tzinfo=UTC)


def temps(folder: Path) -> list[Path]:
    return sorted(folder.rglob(f"*{TEMP_SUFFIX}"))


def make_device(path: Path) -> Path:
    """A character device node like /dev/null, made in ``path`` (root only; the test skips otherwise)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    return path


# --------------------------------------------------------------------------- fsutil


def test_a_write_never_replaces_a_directory_fifo_or_device(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target, kind in ((folder, "a directory"), (fifo, "a FIFO")):
        with pytest.raises(StorageError, match=f"it is {kind}, not a regular file"):
            atomic_write_text(target, "report")
    assert folder.is_dir() and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    device = make_device(tmp_path / "null")
    with pytest.raises(StorageError, match="it is a character device"):
        atomic_write_text(device, "report")
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert temps(tmp_path) == []


def test_an_existing_file_keeps_its_mode_and_a_new_one_gets_the_default(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("old", encoding="utf-8")
    os.chmod(secret, 0o600)
    atomic_write_text(secret, "new")
    assert secret.read_text(encoding="utf-8") == "new"
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600
    os.chmod(secret, 0o640)
    atomic_write_all([(secret, b"newer")])
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o640
    umask = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "fresh.md", "x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "fresh.md").st_mode) == 0o644


def test_write_all_leaves_no_file_when_a_later_rename_fails(tmp_path: Path) -> None:
    report, record, copy = tmp_path / "r.md", tmp_path / "meta" / "run-r.yaml", tmp_path / "copy.md"
    renamed: list[str] = []

    def rename(src: Path, dst: Path) -> None:
        if dst == copy:
            raise OSError(errno.EIO, "Input/output error")
        os.replace(src, dst)
        renamed.append(dst.name)

    with pytest.raises(StorageError, match="Input/output error"):
        atomic_write_all([(report, b"report"), (record, b"record"), (copy, b"report")], rename=rename)
    assert renamed == ["r.md", "run-r.yaml"]  # both were in place before the failure...
    assert not report.exists() and not record.exists() and not copy.exists()  # ...and were taken back
    assert temps(tmp_path) == []


def test_write_all_keeps_an_older_file_it_had_not_reached(tmp_path: Path) -> None:
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    second.write_text("older", encoding="utf-8")
    second_dir = tmp_path / "c"
    second_dir.mkdir()
    with pytest.raises(StorageError, match="a directory"):
        atomic_write_all([(first, b"new"), (second, b"new"), (second_dir, b"new")])
    assert not first.exists() and second.read_text(encoding="utf-8") == "older"
    assert temps(tmp_path) == []


def test_write_all_on_a_full_disk_writes_neither_file(tmp_path: Path) -> None:
    with mounted("-t", "tmpfs", "-o", "size=64k", "tmpfs", target=tmp_path / "small") as small:
        report, record = small / "r.md", small / "meta" / "run-r.yaml"
        with pytest.raises(DiskFull, match="disk full while writing"):
            atomic_write_all([(report, b"r" * 4096), (record, b"y" * 256 * 1024)])
        assert not report.exists() and not record.exists()
        assert temps(small) == []


# --------------------------------------------------------------------------- the pipeline


async def test_a_run_whose_record_cannot_be_written_leaves_no_report(tmp_path: Path, scripted_model) -> None:
    settings = settings_for(tmp_path)
    run_id = make_run_id(QUERY, NOW)
    blocker = settings.meta_dir / f"run-{run_id}.yaml"
    blocker.mkdir(parents=True)  # the record's place is taken: its write must fail
    script(scripted_model, ResearchResponder())
    with pytest.raises(StorageError, match="it is a directory"):
        await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                       lessons=LessonSelection.none, now=NOW)
    assert list(settings.reports_dir.glob("*.md")) == []  # no report without its record
    assert temps(settings.reports_dir) == []


@pytest.mark.parametrize("kind", ["directory", "fifo"])
async def test_an_unusable_output_fails_before_any_model_call(tmp_path: Path, scripted_model, kind: str) -> None:
    output = tmp_path / "out.md"
    if kind == "directory":
        output.mkdir()
    else:
        os.mkfifo(output)
    settings = settings_for(tmp_path, output=output)
    with pytest.raises(InputError, match=r"output file: .*not a regular file"):
        await research(QUERY, settings=settings, model=scripted_model, providers=[DocsProvider(tmp_path)],
                       lessons=LessonSelection.none, now=NOW)
    assert scripted_model.requests == []
    assert not settings.reports_dir.exists() or list(settings.reports_dir.glob("*.md")) == []


async def test_output_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path, scripted_model) -> None:
    output = tmp_path / "private.md"
    output.write_text("old answer", encoding="utf-8")
    os.chmod(output, 0o600)
    script(scripted_model, ResearchResponder())
    result = await research(QUERY, settings=settings_for(tmp_path, output=output), model=scripted_model,
                            providers=[DocsProvider(tmp_path)], lessons=LessonSelection.none, now=NOW)
    assert output.read_text(encoding="utf-8") == result.report_markdown
    assert stat.S_IMODE(os.stat(output).st_mode) == 0o600


# --------------------------------------------------------------------------- the CLI


@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_cli_output_to_a_special_file_is_one_line_exit_2_and_costs_nothing(tmp_path: Path, kind: str) -> None:
    corpus = write_docs(tmp_path / "corpus")
    output = tmp_path / "out"
    if kind == "directory":
        output.mkdir()
    elif kind == "fifo":
        os.mkfifo(output)
    else:
        make_device(output)
    before = os.lstat(output).st_mode
    with FakeOpenAIServer(ResearchResponder()) as server:
        proc = cli(tmp_path, "run", QUERY, "--corpus", str(corpus), "--reports-dir", str(tmp_path / "reports"),
                   "--no-critique", "--output", str(output), base_url=server.base_url)
        requests = list(server.requests)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("… ")]
    assert len(lines) == 1 and lines[0].startswith("error: output file: refusing to replace "), proc.stderr
    assert requests == []
    assert os.lstat(output).st_mode == before  # still the same kind of file, same mode
    assert not (tmp_path / "reports").exists() or list((tmp_path / "reports").glob("*.md")) == []
