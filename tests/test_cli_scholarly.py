"""The scholarly providers from the command line: settings and their checks, a whole run with
``--search academic --corpus DIR`` against recorded replies on 127.0.0.1, and ``doctor``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from research_agent.config import load_settings
from research_agent.errors import ConfigError
from research_agent.search.registry import build_providers, provider_names
from tests.support import http_server
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import QUERY, source_entries
from tests.support.research_responder import ResearchResponder
from tests.support.scholarly import ScholarlyApis

local_server = http_server.local_server  # the fixture


def test_academic_names_the_four_paper_indexes_and_combines_with_others(tmp_path: Path) -> None:
    settings = load_settings({"search_providers": "academic,wikipedia,ddgs,openalex"}, env={}, config_file=tmp_path / "none")
    assert provider_names(settings) == ("openalex", "arxiv", "pubmed", "semanticscholar", "wikipedia", "ddgs")
    with_corpus = settings.replace(search_providers=("academic",), corpus_dirs=(tmp_path,))
    assert provider_names(with_corpus) == ("openalex", "arxiv", "pubmed", "semanticscholar", "local")


def test_each_base_url_and_key_comes_from_the_environment_or_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('arxiv_url = "https://arxiv-mirror.example/api"\nmailto = "me@example.org"\nncbi_api_key = "from-file"\n')
    env = {
        "RESEARCH_AGENT_OPENALEX_URL": "http://127.0.0.1:9/openalex", "RESEARCH_AGENT_PUBMED_URL": "http://127.0.0.1:9/eutils",
        "RESEARCH_AGENT_PMC_URL": "http://127.0.0.1:9/pmc", "RESEARCH_AGENT_SEMANTICSCHOLAR_URL": "http://127.0.0.1:9/s2",
        "RESEARCH_AGENT_WIKIPEDIA_URL": "http://127.0.0.1:9/w/api.php", "RESEARCH_AGENT_WIKIPEDIA_LANGUAGE": "de",
        "NCBI_API_KEY": "from-env", "SEMANTIC_SCHOLAR_API_KEY": "s2", "OPENALEX_API_KEY": "oa",
    }  # fmt: skip
    settings = load_settings({}, env=env, config_file=config)
    assert settings.openalex_url == "http://127.0.0.1:9/openalex" and settings.arxiv_url == "https://arxiv-mirror.example/api"
    assert settings.pmc_url == "http://127.0.0.1:9/pmc" and settings.wikipedia_language == "de"
    assert (settings.ncbi_api_key, settings.semanticscholar_api_key, settings.openalex_api_key) == ("from-env", "s2", "oa")
    assert settings.mailto == "me@example.org"


@pytest.mark.parametrize(("changes", "message"), [
    ({"openalex_url": "ftp://mirror"}, "openalex needs an http(s) base URL (openalex_url or RESEARCH_AGENT_OPENALEX_URL), got 'ftp://mirror'"),
    ({"wikipedia_language": "en/../x"}, "wikipedia_language 'en/../x' is not a Wikipedia language code"),
    ({"mailto": "not an address"}, "mailto 'not an address' is not an e-mail address"),
    ({"pmc_url": ""}, "pubmed needs an http(s) PubMed Central URL (pmc_url or RESEARCH_AGENT_PMC_URL), got ''"),
])  # fmt: skip
def test_a_bad_scholarly_setting_is_one_line_before_any_work(tmp_path: Path, changes: dict, message: str) -> None:
    settings = load_settings({"search_providers": "academic,wikipedia", **changes}, env={}, config_file=tmp_path / "none")
    with pytest.raises(ConfigError) as info:
        build_providers(settings, http_client=None)
    assert str(info.value).startswith(message)


def test_an_unknown_provider_lists_the_scholarly_ones(tmp_path: Path) -> None:
    settings = load_settings({"search_providers": "pubmd"}, env={}, config_file=tmp_path / "none")
    with pytest.raises(ConfigError, match="choose from ddgs, searxng, tavily, local, openalex, arxiv, pubmed, "
                                          "semanticscholar, wikipedia, academic"):  # fmt: skip
        build_providers(settings, http_client=None)


def test_a_cli_run_merges_academic_works_with_the_corpus(local_server, tmp_path: Path, corpus: Path) -> None:
    apis = ScholarlyApis(local_server)
    apis.mode["s2"] = "malformed"  # one provider failing does not sink the run; Limitations names it
    reports = tmp_path / "reports"
    with FakeOpenAIServer(ResearchResponder()) as llm:
        proc = cli(tmp_path, "run", QUERY, "--quick", "--search", "academic", "--corpus", str(corpus),
                   "--allow-private", "--no-critique", "--reports-dir", str(reports), "--format", "html", "--json",
                   base_url=llm.base_url, env=apis.env())  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "! search provider semanticscholar failed: answer's 'data' is not a list" in proc.stderr
    result = json.loads(proc.stdout)
    report = Path(result["report_path"]).read_text(encoding="utf-8")
    links = [line.rsplit(" \u2014 ", 1)[1] for line in source_entries(report).values()]
    assert "<https://doi.org/10.5555/vldb.2021.0042>" in links and "<https://arxiv.org/abs/2403.01234>" in links
    assert any(link.startswith(f"<file://{corpus}") for link in links), links  # the corpus's documents beside them
    assert "Search provider(s) failed during the run: semanticscholar." in report
    record = yaml.safe_load(next((reports / "meta").glob("run-*.yaml")).read_text(encoding="utf-8"))
    providers = {s["provider"] for s in record["sources"]}
    assert {"local", "openalex"} <= providers and "semanticscholar" not in providers
    html = Path(result["report_path"]).with_suffix(".html").read_text(encoding="utf-8")
    assert 'href="https://doi.org/10.5555/vldb.2021.0042"' in html and "Ana Lima et al. (2021)." in html


def test_doctor_asks_each_configured_scholarly_provider_one_small_query(local_server, tmp_path: Path) -> None:
    apis = ScholarlyApis(local_server)
    apis.mode["arxiv"] = "malformed"
    env = {**apis.env(), "RESEARCH_AGENT_SEARCH": "openalex,arxiv,wikipedia", "COLUMNS": "200", "RESEARCH_AGENT_MODEL": "fake-model"}
    with FakeOpenAIServer(ResearchResponder()) as llm:
        proc = cli(tmp_path, "doctor", base_url=llm.base_url, env=env)
        offline = cli(tmp_path, "doctor", "--offline", base_url=llm.base_url, env=env)
    assert proc.returncode == 1, proc.stdout  # arXiv's reply cannot be read
    assert offline.returncode == 0, offline.stdout
    rows = {line.split("│")[1].strip(): line for line in proc.stdout.splitlines() if line.count("│") >= 3}
    assert "ok" in rows["search openalex"] and "answers (1 result for 'climate')" in rows["search openalex"]
    assert "fail" in rows["search arxiv"] and "answered with invalid XML" in rows["search arxiv"]
    assert "ok" in rows["search wikipedia"]
    assert "search arxiv" not in offline.stdout and "not tried: --offline" in offline.stdout
    assert len(apis.server.requests) == 3  # one query each; --offline reached no provider
