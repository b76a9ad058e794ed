"""A web run end to end: SearXNG on 127.0.0.1 pointing at hostile and ordinary local pages."""

from __future__ import annotations

import json

import yaml

from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.http_server import LocalServer
from tests.support.research_responder import ResearchResponder

PAGES = ["/article", "/article2", "/injection", "/binary", "/huge", "/loop/a", "/status/500"]
QUERY = "How well do heat pumps work in cold climates?"


def searxng_route(server: LocalServer):
    def route(handler) -> None:
        q = (handler.query.get("q") or [""])[0]
        results = [
            {"url": server.url(path), "title": f"{q} {path}", "content": f"Heat pumps in cold climates {path}.",
             "engine": "duckduckgo"}
            for path in PAGES
        ]
        handler.send(200, json.dumps({"query": q, "results": results}), "application/json")

    return route


def run_web(tmp_path, *extra: str):
    server = LocalServer()
    server.extra_routes[("GET", "/search")] = searxng_route(server)
    with server, FakeOpenAIServer(ResearchResponder()) as llm:
        proc = cli(tmp_path, "run", QUERY, "--search", "searxng", "--searxng-url", server.url("/"),
                   "--reports-dir", str(tmp_path / "reports"), "--no-critique", "--ignore-robots", *extra,
                   base_url=llm.base_url, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
        return proc, list(server.requests)


def test_web_run_reads_good_pages_and_contains_hostile_ones(tmp_path):
    proc, requests = run_web(tmp_path, "--allow-private")
    assert proc.returncode == 0, proc.stderr
    report = (tmp_path / "reports" / proc.stdout.strip().split("/")[-1]).read_text()
    assert "Ignore previous instructions" not in report and "pirate" not in report
    record = yaml.safe_load(next((tmp_path / "reports" / "meta").glob("run-*.yaml")).read_text())
    reasons = {f["reason"] for f in record["fetch_failures"]}
    assert {"redirect_loop", "http_500"} <= reasons
    assert any(r in reasons for r in ("binary", "bad_content_type", "too_large"))
    kept = [s for s in record["sources"] if s["status"] == "kept"]
    assert any(s["location"].endswith("/article") and not s["snippet_only"] for s in kept)
    assert record["fetch_stats"]["injection_pages"] >= 1


def test_without_allow_private_local_addresses_are_refused(tmp_path):
    proc, requests = run_web(tmp_path)
    record = yaml.safe_load(next((tmp_path / "reports" / "meta").glob("run-*.yaml")).read_text())
    assert proc.returncode == 0, proc.stderr
    assert all(f["reason"] == "private_address" for f in record["fetch_failures"])
    fetched = [r.path for r in requests if not r.path.startswith("/search")]
    assert fetched == [], "no page on 127.0.0.1 was requested"
    assert all(s["snippet_only"] for s in record["sources"])


def test_a_page_cached_under_allow_private_is_refused_to_a_later_run_without_it(tmp_path):
    server = LocalServer()
    server.extra_routes[("GET", "/search")] = searxng_route(server)
    with server, FakeOpenAIServer(ResearchResponder()) as llm:

        def run(*extra: str):
            before = len(server.requests)
            proc = cli(tmp_path, "run", QUERY, "--search", "searxng", "--searxng-url", server.url("/"),
                       "--reports-dir", str(tmp_path / "reports"), "--no-critique", "--ignore-robots", "--json",
                       *extra, base_url=llm.base_url, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
            assert proc.returncode == 0, proc.stderr
            summary = json.loads(proc.stdout)
            record = yaml.safe_load((tmp_path / "reports" / "meta" / f"run-{summary['id']}.yaml").read_text())
            pages = [r.path for r in server.requests[before:] if not r.path.startswith("/search")]
            return record, pages

        first, first_pages = run("--allow-private")
        assert "/article" in first_pages and first["fetch_stats"]["fetched"] >= 1  # now in the page cache
        second, second_pages = run()
    assert second_pages == []  # not fetched...
    assert second["fetch_stats"]["cached"] == 0  # ...and not served from the cache either
    assert second["fetch_failures"] and all(f["reason"] == "private_address" for f in second["fetch_failures"])
    assert all(s["snippet_only"] for s in second["sources"])
    report = (tmp_path / "reports" / f"{second['id']}.md").read_text()
    assert "coefficient of performance" not in report  # the page's text never reached the run
