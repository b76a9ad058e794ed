"""Benchmark fetching and extraction: pages/s with a cold and a warm page cache.

    python -m bench.bench_fetch [--docs DIR] [--pages N] [--concurrency 8]

Serves Debian's python3.11-doc HTML (a few hundred pages) from ``python -m
http.server`` in a child process on 127.0.0.1, so the server's CPU is not counted
as ours, then fetches and extracts every page with one Fetcher (8 concurrent
fetches), first with an empty cache and then again with the cache filled.

Also timed: downloading the same pages without extracting them. Printed per pass:
pages, wall time, pages/s, this process's CPU time and CPU/wall (close to 1.0 means
this process is busy - extracting - rather than waiting on the network), the CPU time
of the extraction workers (processes below this one, the page server excluded),
failures by reason; then the warm/cold speed ratio and peak memory: this process's
own (``ru_maxrss``) and the tree's (this process, the fork server and the workers,
the page server excluded; sampled from /proc, see bench/_procs.py). Numbers are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

from bench._procs import TreeSampler
from bench._util import peak_rss_mb
from research_agent.fetch.cache import PageCache
from research_agent.sources import Page

PYTHON_DOCS = Path("/usr/share/doc/python3.11-doc/html")


def html_files(root: Path, limit: int) -> list[Path]:
    found: list[Path] = []
    for folder, _dirs, files in os.walk(root, followlinks=True):
        for name in sorted(files):
            if name.endswith(".html"):
                found.append(Path(folder) / name)
    found.sort()
    return found[:limit]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(root: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1):
                return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the local HTTP server did not start")


async def one_pass(urls: list[str], cache: PageCache, concurrency: int, server_pid: int) -> dict[str, object]:
    # Imported here, not at the top: every extraction worker imports this script (what
    # multiprocessing does with a main module), and the fetcher (httpx) is no more part of
    # a worker here than under the command line, whose main module imports nothing heavy.
    from research_agent.fetch import Fetcher

    fetcher = Fetcher(
        concurrency=concurrency,
        per_host=concurrency,  # one local host serves everything
        allow_private=True,
        cache=cache,
        total_timeout=60.0,
    )
    cpu0, wall0 = time.process_time(), time.perf_counter()
    with TreeSampler(exclude=(server_pid,)) as tree:
        async with fetcher:
            results = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    pages = [r for r in results if isinstance(r, Page)]
    return {
        "pages": len(pages),
        "chars": sum(len(p.text) for p in pages),
        "wall": wall,
        "cpu": cpu,
        "stats": fetcher.stats,
        "tree": tree,
    }


async def download_only(urls: list[str], concurrency: int) -> tuple[float, int]:
    """Wall time to just download every page (no extraction), same concurrency."""
    import httpx

    slots = asyncio.Semaphore(concurrency)
    total = 0

    async def get(client: httpx.AsyncClient, url: str) -> None:
        nonlocal total
        async with slots:
            response = await client.get(url)
            total += len(response.content)

    wall0 = time.perf_counter()
    async with httpx.AsyncClient(trust_env=False) as client:
        await asyncio.gather(*(get(client, u) for u in urls))
    return time.perf_counter() - wall0, total


def report(label: str, r: dict[str, object]) -> None:
    wall, cpu, pages = float(r["wall"]), float(r["cpu"]), int(r["pages"])  # type: ignore[arg-type]
    stats = r["stats"]
    print(
        f"{label:5} pages={pages:4d}  wall={wall:7.2f}s  pages/s={pages / wall:8.1f}  "
        f"cpu={cpu:7.2f}s  cpu/wall={cpu / wall:4.2f}  workers cpu={r['tree'].children_cpu_s:6.2f}s  "  # type: ignore[attr-defined]
        f"text={int(r['chars']) / 1e6:.1f}M chars  "  # type: ignore[call-overload]
        f"fetched={stats.fetched} cached={stats.cached} failed={dict(stats.failed)}"  # type: ignore[attr-defined]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=PYTHON_DOCS)
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    if not args.docs.exists():
        raise SystemExit(f"{args.docs} not found: install python3.11-doc or pass --docs DIR")
    root = args.docs.resolve()
    files = html_files(root, args.pages)
    proc, port = start_server(root)
    try:
        urls = [f"http://127.0.0.1:{port}/{quote(str(f.resolve().relative_to(root)))}" for f in files]
        with tempfile.TemporaryDirectory(prefix="ra-bench-fetch-") as tmp:
            cache = PageCache(Path(tmp), ttl_seconds=3600)
            print(f"{len(urls)} pages from {root}, concurrency {args.concurrency}, CPUs {os.cpu_count()}")
            dl_wall, dl_bytes = asyncio.run(download_only(urls, args.concurrency))
            print(f"download only (no extraction): {dl_wall:.2f}s for {dl_bytes / 1e6:.1f} MB")
            cold = asyncio.run(one_pass(urls, cache, args.concurrency, proc.pid))
            report("cold", cold)
            warm = asyncio.run(one_pass(urls, cache, args.concurrency, proc.pid))
            report("warm", warm)
        ratio = float(cold["wall"]) / max(float(warm["wall"]), 1e-9)  # type: ignore[arg-type]
        print(f"warm cache is {ratio:.1f}x faster than cold (goal: >= 20x)")
        share = 1 - dl_wall / float(cold["wall"])  # type: ignore[arg-type]
        print(f"cold pass: {share:.0%} of its wall time is beyond what downloading alone takes (extraction)")
        print(f"peak RSS {peak_rss_mb():.0f} MB this process (ru_maxrss)")
        print(f"cold pass tree: {cold['tree'].summary()}")  # type: ignore[attr-defined]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
