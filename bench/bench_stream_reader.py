"""CPU per MB of reading one server-sent line that never ends, sent in 256-byte writes (issue 45).

A broken or hostile endpoint can answer a streamed request with ``data: xxxx...`` and never end the
line, a few hundred bytes at a time, until the answer cap ends it (4 MB by default). Under ``serve``
or MCP the reading runs on the event loop, so its CPU is everyone's wait. Three readers get the same
trickle, each in a fresh process, each chunk delivered as its own read (an ``httpx.MockTransport``
whose body yields 256-byte pieces, so no socket coalesces them):

* ``parser``: the project's SSE parser alone (``SseLines.feed``);
* ``reader``: the model client's whole stream reader, the product path: ``OpenAIChatModel.stream``
  (the request through the openai SDK where the checkout uses it, the body through the bounded
  reader and the parser; the stream ends with no event, so the client asks once more, whole);
* ``sdk``: the openai SDK's own parser under the same trickle, through its public path
  (``AsyncOpenAI(...).chat.completions.create(stream=True)``, iterated to the end).

CPU is the measuring thread's (``time.thread_time``), in seconds per MB of line, at each size: a
linear reader's cost per MB stays flat as the line grows; a quadratic one's grows with it.
``--code DIR`` measures another checkout's ``research_agent`` (e.g. ``git archive main | tar -x -C
/tmp/before``): the ``sdk`` row does not depend on it.

    python -m bench.bench_stream_reader [--sizes 1,2,4] [--readers parser,reader,sdk] [--code DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

WRITE = 256
MB = 1024 * 1024
HEAD = b"data: "


def _pieces(size: int):
    """``size`` bytes of one line that never ends, in :data:`WRITE`-byte pieces."""
    piece = b"x" * WRITE
    yield HEAD + piece[len(HEAD) :]
    for _ in range(size // WRITE - 1):
        yield piece


def run_parser(size: int) -> float:
    from research_agent.llm.client.answers import SseLines

    lines = SseLines()
    start = time.thread_time()
    for piece in _pieces(size):
        lines.feed(piece)
    return time.thread_time() - start


def _handler(size: int):
    import httpx

    answer = {"choices": [{"message": {"content": "whole"}, "finish_reason": "stop"}]}

    async def trickle():
        for piece in _pieces(size):
            yield piece

    def handle(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content).get("stream"):
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=trickle())
        return httpx.Response(200, json=answer)

    return handle


def _model_client(size: int):
    """The HTTP client the checkout's model client would build for itself, over the trickle."""
    import httpx

    transport = httpx.MockTransport(_handler(size))
    try:
        from research_agent.llm.client.transport import model_http_client
    except ImportError:  # a checkout before the SDK came back: a plain client
        return httpx.AsyncClient(transport=transport)
    return model_http_client(60.0, max_bytes=2 * size, transport=transport)


async def run_reader(size: int) -> float:
    from research_agent.llm import ChatRequest, OpenAIChatModel

    model = OpenAIChatModel("m", base_url="http://llm.test/v1", http_client=_model_client(size), timeout=600,
                            max_answer_bytes=2 * size)  # fmt: skip
    request = ChatRequest(stage="draft", system="s", user="u")
    await model.complete(ChatRequest(stage="draft", system="s", user="warm-up"))  # the client's first-call work
    start = time.thread_time()
    await model.stream(request)
    took = time.thread_time() - start
    await model.aclose()
    return took


async def run_sdk(size: int) -> float:
    import httpx
    import openai

    http = httpx.AsyncClient(transport=httpx.MockTransport(_handler(size)))
    client = openai.AsyncOpenAI(api_key="k", base_url="http://llm.test/v1", max_retries=0, http_client=http)
    messages = [{"role": "user", "content": "u"}]
    start = time.thread_time()
    events = 0
    async for _chunk in await client.chat.completions.create(model="m", messages=messages, stream=True):
        events += 1
    took = time.thread_time() - start
    await client.close()
    assert events == 0, "a line that never ends is no event"
    return took


def one(reader: str, size: int) -> float:
    if reader == "parser":
        return run_parser(size)
    return asyncio.run(run_reader(size) if reader == "reader" else run_sdk(size))


def measure(reader: str, size: int, code: Path | None) -> float:
    """CPU seconds of ``reader`` over a ``size``-byte line, in a fresh process."""
    env = dict(os.environ)
    root = Path(__file__).resolve().parents[1]
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (code, root) if p is not None)
    done = subprocess.run([sys.executable, __file__, "--one", reader, str(size)], env=env, capture_output=True,
                          text=True, timeout=1800, check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{reader} at {size} bytes failed:\n{done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,2,4", help="MB of line, comma-separated")
    parser.add_argument("--readers", default="parser,reader,sdk")
    parser.add_argument("--code", type=Path, help="measure this checkout's research_agent")
    parser.add_argument("--one", nargs=2, metavar=("READER", "BYTES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(one(args.one[0], int(args.one[1])))
        return
    import openai

    sizes = [float(s) for s in args.sizes.split(",")]
    print(f"one never-ending SSE line in {WRITE}-byte writes; {args.code or 'this checkout'}; "
          f"openai {openai.__version__}; load {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"{'CPU s per MB':<10}" + "".join(f"{s:>10g} MB" for s in sizes))
    for reader in args.readers.split(","):
        cells = [measure(reader, int(s * MB), args.code.resolve() if args.code else None) / s for s in sizes]
        print(f"{reader:<10}" + "".join(f"{c:>13.3f}" for c in cells))


if __name__ == "__main__":
    main()
