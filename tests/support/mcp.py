"""The MCP server in a subprocess, driven by the SDK's own client over stdio, and a responder
that holds a stage's model calls until the test releases them (no sleeps)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

HANG_GUARD = 60.0  # seconds; only against a hang, never a timing assumption


class HoldingResponder:
    """Answers like ``inner``, but each call of ``stage`` waits until :attr:`release` is set.

    :meth:`wait_arrivals` blocks until that many held calls have arrived (run it in a
    worker thread from async tests).
    """

    def __init__(self, inner: Any, stage: str) -> None:
        self.inner = inner
        self.stage = stage
        self.release = threading.Event()
        self._arrived = threading.Semaphore(0)

    def __call__(self, body: dict, stage: str) -> str:
        if stage == self.stage:
            self._arrived.release()
            self.release.wait(HANG_GUARD)
        return self.inner(body, stage)

    def wait_arrivals(self, count: int) -> None:
        for n in range(count):
            if not self._arrived.acquire(timeout=HANG_GUARD):
                raise AssertionError(f"only {n} of {count} {self.stage} calls arrived")


def server_env(tmp_path: Path, base_url: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """An isolated environment for the server process (as tests/support/cli.py gives the CLI)."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "RESEARCH_AGENT_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "RESEARCH_AGENT_MODEL": "fake-model",  # no price known: cost_usd is null
        "NO_COLOR": "1",
    }
    if base_url:
        env["OPENAI_BASE_URL"] = base_url
    env.update(extra or {})
    return env


@asynccontextmanager
async def mcp_client(
    tmp_path: Path, *args: str, base_url: str | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """A client connected over stdio to ``python -m research_agent mcp ARGS`` run in ``tmp_path``.

    The server's stderr goes to ``tmp_path/server-stderr.log``.
    """
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "research_agent", "mcp", *args],
        env=server_env(tmp_path, base_url, env),
        cwd=str(tmp_path),
    )
    with open(tmp_path / "server-stderr.log", "w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=HANG_GUARD * 2) as client:
            yield client


def text_of(result: Any) -> str:
    """The text of a tool result's first content block."""
    return result.content[0].text
