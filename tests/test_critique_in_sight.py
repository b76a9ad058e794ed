"""Issue 43.3: the background critique in sight. A run that starts one says where it will be written
and how to see it; ``run`` and ``memory show`` say when a critique failed since the last command, with
the ``memory retry`` that completes it, each failure once."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from research_agent.cli.critique import TOLD_RECORD, print_scheduled, tell_failed_critiques
from research_agent.config import Settings
from research_agent.memory.critique.schedule import Scheduled
from research_agent.memory.store.failures import failure_path, record_failure
from research_agent.memory.store.files import critique_path
from research_agent.run_refs import Runs
from tests.support.cli import CLI, cli
from tests.support.extractors import wait_until
from tests.support.fake_openai_server import FakeOpenAIServer, Faults
from tests.support.memory import make_critique, put
from tests.support.memory_cli import deps_for, root_app
from tests.support.pipeline import QUERY
from tests.support.research_responder import ResearchResponder


def _line(stderr: str, start: str) -> str:
    (line,) = [line for line in stderr.splitlines() if line.startswith(start)]
    return line


def _hint(line: str, before: str, after: str) -> list[str]:
    """The command a line tells the user to type, as argv for the installed CLI."""
    command = line.split(before, 1)[1].split(after, 1)[0]
    argv = shlex.split(command)
    assert argv[0] == "research-agent"
    return [str(CLI), *argv[1:]]


def test_a_failed_background_critique_is_told_by_the_next_run_once_and_the_hints_work(tmp_path, corpus):
    reports = tmp_path / "reports"
    args = ["run", QUERY, "--corpus", str(corpus), "--reports-dir", str(reports)]
    with FakeOpenAIServer(ResearchResponder(), faults=Faults(always={"critique": "html"})) as broken:
        first = cli(tmp_path, *args, base_url=broken.base_url)
        assert first.returncode == 0, first.stderr
        run_id = Path(first.stdout.strip()).stem
        short = Runs.scan(reports).short(run_id)
        started = _line(first.stderr, "critique: running in the background")
        assert f"written to {critique_path(reports / 'meta', run_id)};" in started
        assert started.endswith(f"see it with: research-agent memory show {short} --reports-dir {reports}")
        assert wait_until(failure_path(reports / "meta", run_id).exists)  # the detached critique failed
        second = cli(tmp_path, *args, "--quick", base_url=broken.base_url)
    assert second.returncode == 0, second.stderr
    told = _line(second.stderr, "! ")
    assert told.startswith(f"! the background critique of {short} failed: ") and "unreadable answer" in told
    assert "critique: running" not in second.stderr  # a quick run starts none
    with FakeOpenAIServer(ResearchResponder()) as server:
        third = cli(tmp_path, *args, "--quick", base_url=server.base_url)
        assert third.returncode == 0 and "! " not in third.stderr, third.stderr  # told once
        retry = _hint(told, "; ", " completes it")
        assert retry[1:4] == ["memory", "retry", short]
        done = cli(tmp_path, *retry[1:], base_url=server.base_url)
        assert done.returncode == 0, done.stderr
        assert not failure_path(reports / "meta", run_id).exists()
        shown = cli(tmp_path, *_hint(started, "see it with: ", "\0")[1:], base_url=server.base_url)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"# {critique_path(reports / 'meta', run_id)} (short id {short})")


def test_memory_show_tells_the_failures_since_the_last_command_on_stderr(tmp_path):
    reports = tmp_path / "reports"
    meta = reports / "meta"
    shown = make_critique(0)
    put(meta, shown)
    record_failure(meta, "failed-run_20260502T000000000000Z", "cannot reach the endpoint\nat all",
                   now=datetime(2026, 5, 2, tzinfo=UTC))  # fmt: skip
    runner = CliRunner()
    deps = deps_for(reports)

    def show() -> tuple[str, str]:
        done = runner.invoke(root_app(), ["memory", "show", "latest"], obj=deps)
        assert done.exit_code == 0, done.output
        return done.stdout, done.stderr

    out, err = show()
    assert out.startswith(f"# {critique_path(meta, shown.id)}") and "failed" not in out
    short = Runs.scan(reports).short("failed-run_20260502T000000000000Z")
    assert err.strip() == (f"! the background critique of {short} failed: cannot reach the endpoint at all; "
                           f"research-agent memory retry {short} --reports-dir {reports} completes it")  # fmt: skip
    assert show() == (out, "")
    for n in (3, 4):
        record_failure(meta, f"later-run-{n}_2026050{n}T000000000000Z", f"reason {n}", now=datetime(2026, 5, n, tzinfo=UTC))
    _, err = show()
    newest = Runs.scan(reports).short("later-run-4_20260504T000000000000Z")
    assert err.strip() == (f"! 2 background critiques failed since the last command (the newest, {newest}: reason 4); "
                           f"research-agent memory retry --all --reports-dir {reports} completes them "
                           f"(memory list --reports-dir {reports} shows them)")  # fmt: skip


def test_a_run_s_own_failed_critique_is_told_once_and_nothing_stops_the_notice(tmp_path):
    settings = Settings(reports_dir=tmp_path / "reports", state_dir=tmp_path / "state")
    run_id = "own-run_20260501T000000000000Z"
    record_failure(settings.meta_dir, run_id, "the critique timed out", now=datetime.now(UTC) - timedelta(seconds=1))
    console = Console(record=True, width=300)
    tell_failed_critiques(settings, console, told={run_id})  # this command said it already
    tell_failed_critiques(settings, console)
    assert console.export_text() == ""
    (tmp_path / "state" / TOLD_RECORD).unlink()
    (tmp_path / "state" / TOLD_RECORD).mkdir()  # what was told cannot be kept: told again, never an error
    record_failure(settings.meta_dir, "next-run_20260502T000000000000Z", "down", now=datetime.now(UTC))
    tell_failed_critiques(settings, console)
    tell_failed_critiques(settings, console)
    lines = console.export_text().splitlines()
    assert len(lines) == 2 and all(line.startswith("! 2 background critiques failed") for line in lines)


def test_a_background_critique_says_where_it_will_be_and_the_default_folder_needs_no_flag(tmp_path):
    settings = Settings(reports_dir=Path("reports"))
    record = Path("reports/meta/run-a-question_20260501T000000000000Z.yaml")
    console = Console(record=True, width=300)
    print_scheduled(Scheduled("started", pid=4242), console, record=record, settings=settings)
    assert console.export_text().strip() == (
        "critique: running in the background on the model endpoint, written to "
        "reports/meta/critique-a-question_20260501T000000000000Z.yaml; see it with: research-agent memory show "
        f"{Runs.scan(tmp_path).short('a-question_20260501T000000000000Z')}"
    )
