"""Work that waits for the test, across processes: FIFOs in place of events.

A function run in a worker process cannot share a ``threading.Event`` with the test, and a
``multiprocessing`` one only passes to a process at its start. A named pipe can be opened by
path from anywhere: :func:`held_review` says it has arrived (with its PID) on one FIFO, then
waits until the test writes to another.
"""

from __future__ import annotations

import os
import select
from typing import Any

HANG_GUARD = 60.0  # seconds; only against a hang, never a timing assumption


def wait_for_byte(fd: int) -> bytes:
    """What a writer sends to the non-blocking read end ``fd`` (blocks until it does)."""
    readable, _, _ = select.select([fd], [], [], HANG_GUARD)
    if not readable:
        raise AssertionError("nothing arrived on the FIFO")
    return os.read(fd, 64)


def send(path: str, data: bytes) -> None:
    """Write ``data`` to the FIFO at ``path``, whose reader is already waiting."""
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def held_review(arrived: str, go: str, markdown: str, **kwargs: Any) -> Any:
    """The real review, once the test writes to ``go``; first sends this process's PID to ``arrived``."""
    from research_agent.review.report_file import review_markdown

    waiting = os.open(go, os.O_RDONLY | os.O_NONBLOCK)  # open before arriving: the test may write at once
    try:
        send(arrived, str(os.getpid()).encode())
        wait_for_byte(waiting)
    finally:
        os.close(waiting)
    return review_markdown(markdown, **kwargs)
