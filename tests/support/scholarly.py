"""The five scholarly APIs as recorded replies served on 127.0.0.1, with the open full texts they name.

:class:`ScholarlyApis` installs routes on a :class:`~tests.support.http_server.LocalServer`:

  /openalex/works              OpenAlex works search        (tests/data/scholarly/openalex_*.json)
  /arxiv/query                 arXiv's Atom API             (arxiv_*.xml)
  /pubmed/esearch.fcgi         E-utilities esearch (JSON)   (pubmed_esearch*.json)
  /pubmed/efetch.fcgi          E-utilities efetch (XML)     (pubmed_efetch*.xml)
  /s2/paper/search             Semantic Scholar search      (s2_*.json)
  /wikipedia/w/api.php         MediaWiki API                (wikipedia_*.json)
  /fulltext/*.pdf /pmc/* /wiki/*   the full texts those replies point at (``{server}`` in a fixture
                               is this server's address); /private/* is disallowed by robots.txt

``mode[route]`` picks the reply: ``ok`` (the recorded results), ``empty``, ``malformed``, ``error``
(arXiv, Wikipedia), ``429`` (a 429 with ``Retry-After: <retry_after>`` first, then ``ok``), ``huge``
(the recorded reply padded to ``huge_bytes``) and ``slow`` (nothing is sent until the test sets
``release``).

For the tests that drive the providers against it: :data:`PROVIDERS`, :data:`QUERY`, a
:class:`FakeTime` to pace them without waiting, the ``client`` fixture and :func:`provider`.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from research_agent.config import Settings
from research_agent.search.base import SearchProvider
from research_agent.search.scholarly.build import scholarly_provider
from tests.support.http_server import LocalServer, article_html

DATA = Path(__file__).resolve().parent.parent / "data" / "scholarly"

ROUTES = {
    "openalex": ("/openalex/works", "openalex_{}.json", "openalex_works.json"),
    "arxiv": ("/arxiv/query", "arxiv_{}.xml", "arxiv_feed.xml"),
    "esearch": ("/pubmed/esearch.fcgi", "pubmed_esearch_{}.json", "pubmed_esearch.json"),
    "efetch": ("/pubmed/efetch.fcgi", "pubmed_efetch_{}.xml", "pubmed_efetch.xml"),
    "s2": ("/s2/paper/search", "s2_{}.json", "s2_search.json"),
    "wikipedia": ("/wikipedia/w/api.php", "wikipedia_{}.json", "wikipedia_search.json"),
}
PROVIDER_ROUTE = {"openalex": "openalex", "arxiv": "arxiv", "pubmed": "esearch", "semanticscholar": "s2", "wikipedia": "wikipedia"}

FULL_TEXTS = {
    "/fulltext/vacuum-scheduling.pdf": (
        "Vacuum scheduling in multiversion databases",
        "Section 4 reports that count-triggered VACUUM reclaimed dead tuples within minutes on the "
        "update-heavy orders table, where time-triggered runs left dead tuples for hours.",
    ),
    "/fulltext/arxiv-2403.01234v2.pdf": (
        "Autovacuum thresholds",
        "With autovacuum_vacuum_scale_factor at 0.2 a table of one hundred million rows waits for twenty "
        "million dead tuples before VACUUM reclaims any of them.",
    ),
}


def tiny_pdf(title: str, text: str) -> bytes:
    """A one-page PDF whose text a PDF reader extracts (Helvetica, one line per sentence)."""
    lines = [title, *[s.strip() + "." for s in text.split(". ") if s.strip()]]
    ops = ["BT", "/F1 11 Tf", "14 TL", "40 800 Td"]
    for line in lines:
        escaped = line.rstrip(".").replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + "."
        ops += [f"({escaped}) Tj", "T*"]
    ops.append("ET")
    stream = zlib.compress("\n".join(ops).encode("latin-1"))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@dataclass
class ScholarlyApis:
    """The recorded APIs on ``server``; see the module docstring."""

    server: LocalServer
    mode: dict[str, str] = field(default_factory=lambda: dict.fromkeys(ROUTES, "ok"))
    retry_after: str = "2"
    huge_bytes: int = 64 * 1024
    release: threading.Event = field(default_factory=threading.Event)
    answered_429: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        for route, (path, _, _) in ROUTES.items():
            self.server.extra_routes[("GET", path)] = lambda h, r=route: self._api(h, r)
        for path, (title, text) in FULL_TEXTS.items():
            self.server.extra_routes[("GET", path)] = lambda h, t=title, x=text: h.send(200, tiny_pdf(t, x), "application/pdf")
        self.server.extra_routes[("GET", "/pmc/PMC10000001/")] = lambda h: h.send(200, article_html(
            "Keeping a clinical registry fast",
            "In the registry, index bloat from dead tuples doubled the time of the nightly report until "
            "autovacuum ran every ten minutes on the visits table.\n\nVACUUM FULL held an exclusive lock "
            "for three hours on the largest table, so the team moved to pg_repack.",
        ))  # fmt: skip
        for title in ("PostgreSQL", "Multiversion_concurrency_control"):
            self.server.extra_routes[("GET", f"/wiki/{title}")] = lambda h, t=title: h.send(200, article_html(
                t.replace("_", " "),
                "PostgreSQL implements MVCC by writing a new row version on every update; the old version "
                "becomes a dead tuple.\n\nThe VACUUM command reclaims the space of dead tuples, and the "
                "autovacuum daemon runs it automatically.",
            ))  # fmt: skip

    def base(self, provider: str) -> str:
        """The base URL setting of ``provider`` on this server."""
        paths = {"openalex": "/openalex", "arxiv": "/arxiv", "pubmed": "/pubmed", "pmc": "/pmc",
                 "semanticscholar": "/s2", "wikipedia": "/wikipedia/w/api.php"}  # fmt: skip
        return self.server.url(paths[provider])

    def settings(self, **changes: Any) -> Settings:
        """Settings with every scholarly provider pointed here, private fetching allowed (the full
        texts are on 127.0.0.1), and no page cache."""
        urls = {f"{name}_url": self.base(name) for name in ("openalex", "arxiv", "pubmed", "pmc", "semanticscholar", "wikipedia")}
        return Settings(**{"allow_private": True, "use_cache": False, **urls, **changes})  # type: ignore[arg-type]

    def env(self) -> dict[str, str]:
        """The environment that points the CLI's scholarly providers here."""
        names = ("openalex", "arxiv", "pubmed", "pmc", "semanticscholar", "wikipedia")
        return {f"RESEARCH_AGENT_{name.upper()}_URL": self.base(name) for name in names}

    def requests_to(self, route: str) -> int:
        path = ROUTES[route][0]
        return sum(1 for r in self.server.requests if r.path.split("?")[0] == path)

    def body(self, route: str, kind: str) -> bytes:
        _, pattern, ok = ROUTES[route]
        name = ok if kind in ("ok", "huge", "429", "slow") else pattern.format(kind)
        return (DATA / name).read_bytes().replace(b"{server}", self.server.url("").rstrip("/").encode())

    def _api(self, h: Any, route: str) -> None:
        kind = self.mode.get(route, "ok")
        content_type = "application/atom+xml" if route == "arxiv" else "text/xml" if route == "efetch" else "application/json"
        if kind == "429" and route not in self.answered_429:
            self.answered_429.add(route)
            h.send(429, b'{"message": "Too Many Requests"}', "application/json", Retry_After=self.retry_after)
            return
        if kind == "slow":
            self.release.wait(60)
        body = self.body(route, kind)
        if kind == "huge":
            body += b" " * (self.huge_bytes - len(body))
        h.send(200, body, content_type)


PROVIDERS = ("openalex", "arxiv", "pubmed", "semanticscholar", "wikipedia")
QUERY = "How does VACUUM reclaim dead tuples in PostgreSQL?"


class FakeTime:
    """A clock that moves only when the pace sleeps: how long a provider waited, without waiting."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(round(seconds, 3))
        self.now += seconds


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    """One HTTP client for a test's providers (a fixture: ``client = scholarly.client`` in a test module)."""
    async with httpx.AsyncClient() as c:
        yield c


def provider(apis: ScholarlyApis, client: httpx.AsyncClient, name: str, time: FakeTime | None = None, **changes: Any) -> SearchProvider:
    """The scholarly provider ``name`` pointed at ``apis`` (settings changed by ``changes``), paced by ``time``."""
    time = time or FakeTime()
    return scholarly_provider(name, apis.settings(**changes), client, clock=time, sleep=time.sleep)
