"""Drive GPT Researcher (optional, in its own interpreter) against the fake endpoint.

GPT Researcher is not a dependency of research-agent: it lives in a venv of its own and
is started as ``GPTR_PYTHON bench/_gptr_run.py QUESTION OUT``. Everything it is told
comes through its environment: the local folder (``REPORT_SOURCE=local``, ``DOC_PATH``),
the chat models and embeddings on the fake server (``OPENAI_BASE_URL``), and a custom
retriever on 127.0.0.1 that finds nothing, so no search engine is ever asked. tiktoken
reads its encodings from the copies litellm ships (``TIKTOKEN_CACHE_DIR``) instead of
downloading them; tracing, telemetry and model-price downloads are switched off.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench._gptr_responder import GptrResponder
from bench._procs import TreeSampler, descendants
from tests.support.fake_openai_server import FakeOpenAIServer, RequestRecord, sequential_rounds

__all__ = ["GptrInstall", "ToolRun", "find_gptr", "gptr_startup", "longest_chain", "network_isolated", "run_gptr"]

RUNNER = Path(__file__).resolve().with_name("_gptr_run.py")
MODEL = "gpt-4o-mini"  # a name GPT Researcher knows (temperature, token limits); the fake server takes any
# Asked of GPT Researcher's interpreter: its version, and where litellm keeps tiktoken's encodings.
_PROBE = """
import importlib.metadata, importlib.util, json, os
spec = importlib.util.find_spec("gpt_researcher")
lite = importlib.util.find_spec("litellm")
tokens = os.path.join(lite.submodule_search_locations[0], "litellm_core_utils", "tokenizers") if lite else ""
print(json.dumps({"version": importlib.metadata.version("gpt-researcher") if spec else None,
                  "tiktoken_cache": tokens if tokens and os.path.isdir(tokens) else None}))
"""


@dataclass(frozen=True)
class GptrInstall:
    """An interpreter that can import gpt_researcher."""

    python: Path
    version: str
    tiktoken_cache: str | None


@dataclass(frozen=True)
class ToolRun:
    """What one run of either tool cost against the fake endpoint."""

    tool: str
    latency: float
    wall: float
    rounds: int  # sequential rounds of chat calls
    chain: int  # calls on the longest chain of calls one after another, embedding calls too
    chat_calls: int
    embedding_calls: int
    embedding_tokens: int  # what the embedding calls sent, characters // 4
    prompt_tokens: int  # sum over chat calls of len(json.dumps(messages)) // 4
    peak_rss_mb: float  # the tool's process tree, as a sum of RSS
    tokens_by_call: tuple[tuple[str, int, int], ...] = ()  # (stage or call kind, calls, prompt tokens)
    phases: tuple[tuple[str, float], ...] = ()  # (what, seconds) where the wall time went

    @property
    def overhead(self) -> float:
        """Wall time not spent waiting for the endpoint: wall - longest chain x latency."""
        return self.wall - self.chain * self.latency


def longest_chain(requests: Sequence[RequestRecord]) -> int:
    """The most calls that ran one after another (each starting after the previous answer).

    Every call takes at least the server's delay, so wall >= chain x delay. Unlike
    :func:`sequential_rounds`, concurrent chains of calls (GPT Researcher embeds each
    sub-query's chunks batch after batch, the sub-queries side by side) are not merged.
    """
    ordered = sorted(requests, key=lambda r: r.end)
    depth: list[int] = []
    for i, record in enumerate(ordered):
        before = [depth[j] for j in range(i) if ordered[j].end <= record.start]
        depth.append(1 + max(before, default=0))
    return max(depth, default=0)


def _phases(requests: Sequence[RequestRecord], clock: float, wall: float) -> tuple[tuple[str, float], ...]:
    """Where GPT Researcher's wall time went, from the calls' times (``clock``: when it was started)."""
    chats = sorted((r for r in requests if r.route == "chat"), key=lambda r: r.start)
    embeds = [r for r in requests if r.route == "embeddings"]
    if len(chats) < 3:
        return ()
    phases = [("start-up to the first call", chats[0].start - clock),
              ("agent answer to the sub-queries call (reading the folder)", chats[1].start - chats[0].end)]  # fmt: skip
    if embeds:
        first, last = min(r.start for r in embeds), max(r.end for r in embeds)
        phases.append(("first to last embedding call (chunking, embedding, ranking)", last - first))
        phases.append(("last embedding answer to the report call", chats[-1].start - last))
    phases.append(("report answer to exit", clock + wall - chats[-1].end))
    return tuple(phases)


def find_gptr(python: Path) -> GptrInstall | None | str:
    """The install behind ``python``; None if it cannot import gpt_researcher; a reason if it cannot run."""
    if not python.exists():
        return None
    try:
        done = subprocess.run([str(python), "-c", _PROBE], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{python} did not answer: {exc}"
    if done.returncode != 0:
        return None
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if found["version"] is None:
        return None
    return GptrInstall(python, found["version"], found["tiktoken_cache"])


def gptr_startup(install: GptrInstall, times: int = 3) -> list[float]:
    """Wall seconds of ``python -c 'import gpt_researcher'``: interpreter start-up and its imports."""
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        for _ in range(times):
            start = time.perf_counter()
            subprocess.run([str(install.python), "-c", "import gpt_researcher"], env=env, cwd=tmp,
                           capture_output=True, check=True, timeout=600)  # fmt: skip
            walls.append(time.perf_counter() - start)
    return walls


def network_isolated() -> bool:
    """True when loopback is the only network interface (as inside ``unshare -n``)."""
    return all(name == "lo" for _, name in socket.if_nameindex())


class _NoResults(BaseHTTPRequestHandler):
    """GPT Researcher's custom retriever endpoint: every search finds nothing."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"[]")

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass


@contextmanager
def _no_results_retriever() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NoResults)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/search"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


def gptr_env(install: GptrInstall, home: Path, corpus: Path, base_url: str, retriever: str) -> dict[str, str]:
    """GPT Researcher's whole configuration: local documents, the fake endpoint, nothing online."""
    env = {
        "PATH": "/usr/bin:/bin", "HOME": str(home), "OPENAI_API_KEY": "bench", "OPENAI_BASE_URL": base_url,
        "REPORT_SOURCE": "local", "DOC_PATH": str(corpus), "RETRIEVER": "custom", "RETRIEVER_ENDPOINT": retriever,
        "FAST_LLM": f"openai:{MODEL}", "SMART_LLM": f"openai:{MODEL}", "STRATEGIC_LLM": f"openai:{MODEL}",
        "EMBEDDING": "custom:fake-embedding",  # custom: strings go out as they are, no tiktoken round trip
        "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LANGCHAIN_TRACING_V2": "false", "LANGSMITH_TRACING": "false",
        "ANONYMIZED_TELEMETRY": "False", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "DO_NOT_TRACK": "1", "NLTK_DATA": str(home / "nltk_data"),
    }  # fmt: skip
    if install.tiktoken_cache:
        env["TIKTOKEN_CACHE_DIR"] = install.tiktoken_cache
    return env


def run_gptr(install: GptrInstall, question: str, corpus: Path, latency: float) -> ToolRun:
    """One GPT Researcher run against a fresh fake server answering every call after ``latency``.

    Raises RuntimeError with GPT Researcher's last error line if the run fails.
    """
    responder = GptrResponder()
    with tempfile.TemporaryDirectory() as tmp, _no_results_retriever() as retriever, \
            FakeOpenAIServer(responder, delay=latency) as server:  # fmt: skip
        home = Path(tmp)
        env = gptr_env(install, home, corpus, server.base_url, retriever)
        command = [str(install.python), str(RUNNER), question, str(home / "report.md")]
        with TreeSampler(exclude=descendants(os.getpid())) as tree:  # not the index build's forkserver
            start, clock = time.perf_counter(), time.monotonic()  # the server stamps requests with monotonic()
            done = subprocess.run(command, cwd=home, env=env, capture_output=True, text=True, timeout=3600)
            wall = time.perf_counter() - start
        requests = server.requests
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise RuntimeError(lines[-1] if lines else f"exit {done.returncode}")
    chats = [r for r in requests if r.route == "chat"]
    embeddings = [r for r in requests if r.route == "embeddings"]
    kinds = tuple((kind, responder.calls[kind], responder.tokens[kind]) for kind in responder.calls)
    return ToolRun(
        "GPT Researcher", latency, wall, sequential_rounds(chats), longest_chain(requests), len(chats),
        len(embeddings), sum(r.prompt_tokens for r in embeddings),
        sum(tokens for _, _, tokens in kinds), tree.peak_children_rss_mb, kinds, _phases(requests, clock, wall),
    )  # fmt: skip
