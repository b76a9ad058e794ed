"""SIGTERM is Ctrl-C: the same cleanup, one line, exit 143; no traceback during start-up or pool start.

(SIGTERM to a run stalled in a stage, with its cleanup checked, is in test_reliability beside Ctrl-C.)"""

from __future__ import annotations

import multiprocessing
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from research_agent.fetch.processes.worker_process import worker_main
from tests.support.cli import CLI
from tests.support.reliability import (
    HANG_GUARD,
    cli_env,
    with_default_sigint,
)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals are POSIX")

HOLD = Path(__file__).parent / "support" / "startup_hold"


@pytest.mark.parametrize(("sent", "code", "word"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_a_signal_in_the_middle_of_start_up_is_one_line(tmp_path: Path, sent: int, code: int, word: str) -> None:
    arrived = tmp_path / "arrived"
    os.mkfifo(arrived)
    reader = os.open(arrived, os.O_RDONLY | os.O_NONBLOCK)  # open first: the CLI's write never blocks
    env = {**cli_env(tmp_path / "home", "http://127.0.0.1:9/v1"), "PYTHONPATH": str(HOLD),
           "HOLD_ARRIVED": str(arrived)}
    proc = subprocess.Popen(with_default_sigint([str(CLI), "--version"]), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        assert select.select([reader], [], [], HANG_GUARD)[0], "the CLI never reached its start-up hold"
        assert os.read(reader, 1) == b"1"  # it is now inside the import of its command line
        proc.send_signal(sent)
        out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        os.close(reader)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert (proc.returncode, err) == (code, f"{word}\n"), err
    assert out == ""


def _ready(x: int) -> int:
    return x


def test_a_worker_whose_parent_has_gone_ends_quietly(capfd: pytest.CaptureFixture[str]) -> None:
    ctx = multiprocessing.get_context("spawn")
    ours, theirs = ctx.Pipe(duplex=True)
    worker = ctx.Process(target=worker_main, args=(theirs, _ready, 200.0, ()), daemon=True)
    ours.close()  # the parent is gone (Ctrl-C or SIGTERM while the pool starts) before the worker is ready
    worker.start()
    theirs.close()
    worker.join(HANG_GUARD)
    err = capfd.readouterr().err
    assert worker.exitcode == 0, err
    assert "Traceback" not in err and "BrokenPipeError" not in err


# A run that a signal stops while it waits: its cleanup prints, then how it ended.
_STOPPED_WHILE_WAITING = """
import asyncio, os, signal
from research_agent import interrupts
{setup}
async def main():
    try:
        os.kill(os.getpid(), signal.{sent})
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        print("cleaned up", flush=True)
        raise
try:
    {runner}(main())
except KeyboardInterrupt:
    print("KeyboardInterrupt", interrupts.interrupt_exit_code(), flush=True)
"""


def _python(script: str, *args: str, default_sigint: bool = True) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", script, *args]
    return subprocess.run(with_default_sigint(argv) if default_sigint else argv, capture_output=True, text=True,
                          timeout=HANG_GUARD, cwd=Path(__file__).parent.parent)  # fmt: skip


def test_the_sigterm_handler_takes_the_path_ctrl_c_takes() -> None:
    """Inside asyncio.run the runner's Ctrl-C handler cancels the main task: its cleanup runs."""
    proc = _python(_STOPPED_WHILE_WAITING.format(setup="interrupts.install()", sent="SIGTERM", runner="asyncio.run"))
    assert proc.stdout.splitlines() == ["cleaned up", "KeyboardInterrupt 143"], proc.stderr


# The stop lands where a library is completing the very future it cancels: after the
# library looked (not done yet), before it set the result. Delivered from inside a Python
# signal handler, as asyncio.run does, the cancel makes that set_result fail
# (InvalidStateError, a traceback from anyio's data_received under the one line);
# run_interruptibly takes the signal through the event loop, so it lands between callbacks.
_RACE = """
import asyncio, os, signal, sys
from research_agent import interrupts
interrupts.install()
SENT = signal.Signals[sys.argv[1]]

class Waiter(asyncio.Future):
    def done(self):
        answer = super().done()
        if not getattr(self, "sent", False):
            self.sent = True
            os.kill(os.getpid(), SENT)
        return answer

async def main():
    loop = asyncio.get_running_loop()
    waiter = Waiter(loop=loop)
    def complete():
        if not waiter.done():
            waiter.set_result(True)
    loop.call_soon(complete)
    try:
        await waiter
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        print("cleaned up", flush=True)
        if len(sys.argv) > 2:  # a second signal during the cleanup: out at once
            os.kill(os.getpid(), SENT)
            await asyncio.sleep(60)
        raise
try:
    interrupts.run_interruptibly(main())
except KeyboardInterrupt:
    print("KeyboardInterrupt", interrupts.interrupt_exit_code(), flush=True)
"""


@pytest.mark.parametrize(("sent", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
@pytest.mark.parametrize("twice", [False, True])
def test_a_stop_mid_callback_is_taken_between_callbacks(sent: str, code: int, twice: bool) -> None:
    proc = _python(_RACE, sent, *(["twice"] if twice else []))
    assert proc.stdout.splitlines() == ["cleaned up", f"KeyboardInterrupt {code}"], proc.stderr
    assert proc.stderr == ""


def test_an_ignored_ctrl_c_stays_ignored() -> None:
    """A run started with Ctrl-C ignored (``nohup``, a background job) keeps it ignored."""
    script = (
        "import asyncio, os, signal\n"
        "from research_agent import interrupts\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "async def main():\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    await asyncio.sleep(0)\n"
        "    return 'ran to the end'\n"
        "print(interrupts.run_interruptibly(main()), signal.getsignal(signal.SIGINT) is signal.SIG_IGN)\n"
    )
    proc = _python(script, default_sigint=False)
    assert proc.stdout.splitlines() == ["ran to the end True"], proc.stderr


_NO_SIGNAL_SUPPORT = """
class NoSignals(asyncio.SelectorEventLoop):
    def add_signal_handler(self, *args):
        raise NotImplementedError
class Policy(asyncio.DefaultEventLoopPolicy):
    def new_event_loop(self):
        return NoSignals()
asyncio.set_event_loop_policy(Policy())
"""


def test_a_loop_without_signal_support_keeps_asyncio_runs_own_ctrl_c() -> None:
    """Where the loop cannot take signals (Windows), Ctrl-C still cancels the run and its cleanup runs."""
    script = _STOPPED_WHILE_WAITING.format(setup=_NO_SIGNAL_SUPPORT, sent="SIGINT", runner="interrupts.run_interruptibly")
    proc = _python(script)
    assert proc.stdout.splitlines() == ["cleaned up", "KeyboardInterrupt 130"], proc.stderr
