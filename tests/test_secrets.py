"""Issue 47.1: keys stay secret. No key shows in a repr of the settings, in ``doctor``'s table, in a
log line (``-v`` and ``-vv``), or in anything a run writes (report, run record, passages, critique,
critique.log, the page cache)."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import httpx
import pytest

from research_agent.config import ENV_VARS, SECRET_FIELDS, Settings, load_settings
from tests.support import http_server
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import QUERY
from tests.support.research_responder import ResearchResponder
from tests.support.scholarly import ScholarlyApis

local_server = http_server.local_server  # the fixture

KEYS = {
    "OPENAI_API_KEY": "sk-planted-openai-4f1c9e",
    "TAVILY_API_KEY": "tvly-planted-2b7d31",
    "OPENALEX_API_KEY": "planted-openalex-93ac0d",
    "NCBI_API_KEY": "planted-ncbi-5e8f2a",
    "SEMANTIC_SCHOLAR_API_KEY": "planted-s2-c41b77",
}


def test_every_key_field_is_secret_and_no_repr_shows_one(tmp_path: Path) -> None:
    names = {f.name for f in dataclasses.fields(Settings)}
    assert {n for n in names if n.endswith(("_key", "token", "secret", "password"))} == SECRET_FIELDS
    assert {ENV_VARS[var] for var in KEYS} == SECRET_FIELDS  # every key has its variable, planted here
    settings = load_settings(env={**KEYS, "XDG_CONFIG_HOME": str(tmp_path)})
    assert {getattr(settings, name) for name in SECRET_FIELDS} == set(KEYS.values())
    for shown in (repr(settings), str(settings), repr(settings.replace(model="m")), f"{settings!r}"):
        assert not any(key in shown for key in KEYS.values()), shown
    assert "api_key" not in repr(settings) and "model='gpt-4o-mini'" in repr(settings)


def test_a_debug_log_of_the_settings_shows_no_key(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings(api_key=KEYS["OPENAI_API_KEY"], tavily_api_key=KEYS["TAVILY_API_KEY"])
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("research_agent.test").debug("settings: %r", settings)
    assert "settings: Settings(" in caplog.text and KEYS["OPENAI_API_KEY"] not in caplog.text


def _leaks(text: str) -> list[str]:
    return [var for var, key in KEYS.items() if key in text]


@pytest.mark.parametrize("verbosity", ["-v", "-vv"])
def test_a_run_with_every_key_planted_shows_none_anywhere(tmp_path: Path, corpus: Path, local_server, verbosity):
    apis = ScholarlyApis(local_server)
    apis.mode["s2"] = "malformed"  # a provider's failure reaches the record and the report: never its key
    reports, cache = tmp_path / "reports", tmp_path / "cache"
    env = {**apis.env(), **KEYS, "RESEARCH_AGENT_CACHE_DIR": str(cache)}
    with FakeOpenAIServer(ResearchResponder()) as llm:
        proc = cli(tmp_path, verbosity, "run", QUERY, "--search", "academic", "--corpus", str(corpus),
                   "--allow-private", "--wait-critique", "--reports-dir", str(reports), "--format", "html",
                   base_url=llm.base_url, env=env)  # fmt: skip
        doctor = cli(tmp_path, verbosity, "doctor", "--reports-dir", str(reports), base_url=llm.base_url,
                     env={**env, "RESEARCH_AGENT_SEARCH": "openalex,pubmed,semanticscholar"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "DEBUG research_agent" in proc.stderr  # the debug lines were there to search
    written = sorted(p for p in [*reports.rglob("*"), *cache.rglob("*")] if p.is_file())
    names = {p.name.split("-", 1)[0] for p in written}
    assert {"run", "critique", "passages"} <= names and any(p.suffix == ".html" for p in written)
    found = {str(p): _leaks(p.read_bytes().decode("utf-8", "replace")) for p in written}
    assert {path: leaks for path, leaks in found.items() if leaks} == {}
    assert _leaks(proc.stdout + proc.stderr) == [] and _leaks(doctor.stdout + doctor.stderr) == []
    assert "search openalex" in doctor.stdout  # the providers were asked, with their keys
    assert any("planted-openalex" in r.path for r in apis.server.requests)


async def test_the_workbench_settings_page_and_its_checks_show_no_key(tmp_path: Path, local_server) -> None:
    """Issue 44 point 4: the settings page shows the setup and runs doctor's checks; neither shows a
    key, nor the password a base URL may carry."""
    from tests.support.web import in_process, options_for

    apis = ScholarlyApis(local_server)
    keys = {ENV_VARS[var]: key for var, key in KEYS.items()}
    scholarly = ("openalex", "pubmed", "semanticscholar")
    urls = {f"{name}_url": apis.base(name) for name in (*scholarly, "pmc")}
    password = "planted-pass-e3c9a1"
    with FakeOpenAIServer(ResearchResponder()) as llm:
        host = llm.base_url.removesuffix("/v1")
        base_url = llm.base_url.replace("http://", f"http://planted-user:{password}@")
        options = options_for(tmp_path, base_url=base_url, search_providers=",".join(scholarly), **keys, **urls)
        async with in_process(options) as web:
            page = await web.client.get("/settings")
            checked = await web.client.post("/settings/doctor", data={"csrf": await web.csrf()})
    assert page.status_code == 200 and checked.status_code == 200
    for shown in (page.text, checked.text):
        assert _leaks(shown) == [] and password not in shown and "planted-user" not in shown
        assert host in shown  # the endpoint, by its host
    assert "api_key: set" in page.text and "openalex, pubmed, semanticscholar" in page.text
    assert "model endpoint" in checked.text and "search openalex" in checked.text  # the checks ran
    assert any("planted-openalex" in r.path for r in apis.server.requests), "the providers were asked, with their keys"


async def test_a_scripted_run_in_process_logs_reprs_and_writes_no_key(
    tmp_path: Path, local_server, scripted_model, caplog: pytest.LogCaptureFixture
) -> None:
    """A library user's run (no CLI formatter between the records and their handler): every log record
    at DEBUG, the repr of the settings, the result and each provider the run built from the settings,
    and every file it wrote hold none of the planted keys, though the scholarly providers sent them."""
    from research_agent.config import MODES
    from research_agent.memory.lessons.select import LessonSelection
    from research_agent.pipeline import research
    from research_agent.search.registry import build_providers
    from tests.support.pipeline import DOCS, DocsProvider, use

    apis = ScholarlyApis(local_server)
    apis.mode["s2"] = "malformed"  # a failure's reason reaches the record: never the key in its request
    keys = {ENV_VARS[var]: key for var, key in KEYS.items()}
    settings = apis.settings(**keys, mode=MODES["standard"], reports_dir=tmp_path / "reports",
                             cache_dir=tmp_path / "cache", context_path=None,
                             search_providers=("openalex", "pubmed", "semanticscholar"))  # fmt: skip
    responder = ResearchResponder()
    for stage, times in {"decompose": 1, "relevance": 1, "draft": 1, "skeptic": 1}.items():
        scripted_model.enqueue(stage, use(responder), times=times)
    (tmp_path / "docs").mkdir()
    local = DocsProvider(tmp_path / "docs", DOCS)
    async with httpx.AsyncClient() as client:
        built = build_providers(settings, http_client=client)
        with caplog.at_level(logging.DEBUG), caplog.at_level(logging.DEBUG, logger="httpx"):  # whatever -v set before
            result = await research(QUERY, settings=settings, model=scripted_model, providers=[local, *built],
                                    lessons=lambda domain: LessonSelection.none(domain))  # fmt: skip
    assert any("planted-openalex" in r.path for r in apis.server.requests), "the keys were sent"
    assert any(r.name.startswith("httpx") for r in caplog.records), "the requests were logged"
    logged = "\n".join([caplog.text, *(r.getMessage() for r in caplog.records)])
    assert _leaks(logged) == []
    shown = [repr(settings), repr(result), *(repr(p) for p in built), repr(scripted_model.requests)]
    assert [text for text in shown if _leaks(text)] == []
    written = {p: p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*") if p.is_file()}
    assert result.run_record_path in written and result.report_path in written
    assert "semanticscholar" in written[result.run_record_path]  # the failure reached the record
    assert {str(p): _leaks(text) for p, text in written.items() if _leaks(text)} == {}
