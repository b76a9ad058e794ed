"""One ``research-agent run`` in a subprocess against the fake OpenAI-compatible server.

The server runs in this process (a thread); the CLI is started as a user would start it
(``python -m research_agent run ...``), so its wall time includes interpreter start-up,
imports, the corpus index check and writing the report. The server's responder records
every chat call's messages, so prompt tokens are counted as the issue defines them:
``len(json.dumps(messages)) // 4`` per call.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.fake_openai_server import FakeOpenAIServer, RequestRecord, sequential_rounds
from tests.support.research_responder import ResearchResponder

__all__ = ["CliRun", "Recorder", "cli_env", "run_cli", "startup_seconds"]

REPO = Path(__file__).resolve().parents[1]


def message_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """Prompt tokens of one chat call, as issue 13 counts them."""
    return len(json.dumps(messages)) // 4


def writer_source_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """Tokens of the numbered sources in a draft call (everything after its "Sources:" line)."""
    user = "\n".join(m["content"] for m in messages if m.get("role") == "user")
    _, sep, sources = user.partition("\nSources:\n")
    return len(json.dumps(sources)) // 4 if sep else 0


def _shared(a: str, b: str) -> int:
    """Characters ``a`` and ``b`` share from their start."""
    return len(os.path.commonprefix([a, b]))


@dataclass
class Recorder:
    """A responder that answers like ``responder`` and counts each stage's calls and tokens."""

    responder: ResearchResponder
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    tokens: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    writer_sources: list[int] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)  # each call's messages, serialized, in arrival order
    reusable: int = 0  # prompt tokens that start as an earlier call's did (what a prompt cache can reuse)

    def __call__(self, body: dict[str, Any], stage: str) -> str:
        messages = body.get("messages", [])
        self.calls[stage] += 1
        self.tokens[stage] += message_tokens(messages)
        text = json.dumps(messages)
        self.reusable += max((_shared(text, earlier) for earlier in self.prompts), default=0) // 4
        self.prompts.append(text)
        if stage == "draft":
            self.writer_sources.append(writer_source_tokens(messages))
        return self.responder(body, stage)


@dataclass(frozen=True)
class CliRun:
    """What one CLI run cost: wall seconds, sequential rounds, calls and tokens per stage."""

    latency: float
    wall: float
    rounds: int
    calls: dict[str, int]
    tokens: dict[str, int]
    writer_sources: tuple[int, ...]
    before_first: float = 0.0  # seconds from spawning the CLI to its first chat call
    between: float = 0.0  # seconds between rounds, in all (each round ends with its last answer)
    after_last: float = 0.0  # seconds from the last answer to the CLI's exit
    writer_rates: tuple[str, ...] = ()  # the writer's "N tokens, R tok/s" as the progress line printed them
    reusable_tokens: int = 0  # prompt tokens that start as an earlier call's prompt did

    @property
    def overhead(self) -> float:
        return self.wall - self.rounds * self.latency

    @property
    def prompt_tokens(self) -> int:
        return sum(self.tokens.values())

    @property
    def call_count(self) -> int:
        return sum(self.calls.values())


def cli_env(home: Path, cache_dir: Path, base_url: str | None) -> dict[str, str]:
    """An isolated environment: no user config, the bench's index cache, the fake endpoint."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "RESEARCH_AGENT_CACHE_DIR": str(cache_dir),
        "XDG_CONFIG_HOME": str(home / "xdg"),
        "RESEARCH_AGENT_MODEL": "gpt-4o-mini",
        "OPENAI_API_KEY": "bench",
        "NO_COLOR": "1",
    }
    if base_url:
        env["OPENAI_BASE_URL"] = base_url
    return env


_RATE = re.compile(r"^… (?:draft|revise)\b.*?: (\d+ tokens, [\d.]+ tok/s)$", re.M)


def run_cli(
    query: str, corpus: Path, cache_dir: Path, responder: ResearchResponder, *, latency: float, mode: str,
    token_delay: float = 0.0, concurrency: int | None = None, src: Path | None = None,
    extra: dict[str, str] | None = None, sources: Sequence[str] | None = None,
) -> CliRun:
    """Run ``python -m research_agent run`` once against a fresh server answering after ``latency``
    (plus ``token_delay`` per completion token), with ``concurrency`` calls at once if given, from
    the checkout ``src`` (default: this one; another one measures an earlier version); ``extra``:
    more settings for the CLI (e.g. ``RESEARCH_AGENT_CHECK_CLAIMS``); ``sources``: the options that say where
    to search, instead of ``--corpus corpus`` (e.g. a SearXNG on 127.0.0.1)."""
    recorder = Recorder(responder)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(recorder, delay=latency, token_delay=token_delay) as server:
        home = Path(tmp)
        command = [
            sys.executable, "-m", "research_agent", "run", query, f"--{mode}",
            *(sources if sources is not None else ("--corpus", str(corpus))),
            "--reports-dir", str(home / "reports"), "--context", "none", "--no-critique",
        ]  # fmt: skip
        env = cli_env(home, cache_dir, server.base_url)
        if concurrency is not None:
            env["RESEARCH_AGENT_LLM_CONCURRENCY"] = str(concurrency)
        if src is not None:
            env["PYTHONPATH"] = str(src)
        env.update(extra or {})
        start, clock = time.perf_counter(), time.monotonic()  # the server stamps requests with monotonic()
        done = subprocess.run(
            command, cwd=src or REPO, env=env, capture_output=True, text=True, timeout=1800,
        )  # fmt: skip
        wall = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"the CLI run failed (exit {done.returncode}):\n{done.stderr.strip()}")
        requests = server.requests
    spans = _round_spans(requests)
    return CliRun(
        latency, wall, len(spans), dict(recorder.calls), dict(recorder.tokens), tuple(recorder.writer_sources),
        before_first=spans[0][0] - clock if spans else wall,
        between=sum(later[0] - earlier[1] for earlier, later in zip(spans, spans[1:], strict=False)),
        after_last=clock + wall - spans[-1][1] if spans else 0.0,
        writer_rates=tuple(_RATE.findall(done.stderr)), reusable_tokens=recorder.reusable,
    )  # fmt: skip


def _round_spans(requests: Sequence[RequestRecord]) -> list[tuple[float, float]]:
    """(start, end) of each round of overlapping calls, in time order (see sequential_rounds)."""
    spans: list[tuple[float, float]] = []
    for record in sorted(requests, key=lambda r: r.start):
        if spans and record.start < spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], record.end))
        else:
            spans.append((record.start, record.end))
    assert len(spans) == sequential_rounds(requests)
    return spans


def startup_seconds(cache_dir: Path, times: int = 5) -> list[float]:
    """Wall seconds of ``python -m research_agent --version``: interpreter start-up and the CLI's imports."""
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        env = cli_env(Path(tmp), cache_dir, None)
        for _ in range(times):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "research_agent", "--version"], cwd=REPO, env=env,
                           capture_output=True, check=True, timeout=120)  # fmt: skip
            walls.append(time.perf_counter() - start)
    return walls
