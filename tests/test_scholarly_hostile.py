"""Issue 45 point 8: every hostile reply tried against OpenAlex, sent by each of the five scholarly
stand-ins on 127.0.0.1, ends bounded, and nothing of it reaches a prompt or a page unescaped.

The replies (:mod:`tests.support.scholarly_hostile`): a gzip bomb (64 MB decoded), 50,000 results,
a 429 whose Retry-After is a billion seconds, full-text links to this machine, the cloud metadata
address and ``file:``, and metadata carrying markup, script links, controls, the prompts' data
delimiters and chat-template markers.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from research_agent.export import report_page
from research_agent.fetch import Fetcher
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.search.base import ProviderError
from research_agent.text.sanitize import DATA_CLOSE, DATA_OPEN
from tests.support import http_server, scholarly
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel
from tests.support.scholarly import PROVIDER_ROUTE, PROVIDERS, QUERY, FakeTime, provider
from tests.support.scholarly_hostile import METADATA_URL, HostileApis
from tests.support.web import in_process, options_for

local_server = http_server.local_server  # the fixtures
client = scholarly.client

CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def apis(local_server: http_server.LocalServer) -> HostileApis:
    return HostileApis(local_server)


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_gzip_bomb_stops_at_the_reply_cap(apis, client, name: str) -> None:
    apis.mode[PROVIDER_ROUTE[name]] = "bomb"
    with pytest.raises(ProviderError) as info:
        await provider(apis, client, name).search(QUERY, max_results=5)
    assert info.value.reason == "answered with more than 5,242,880 bytes (the reply cap)"


@pytest.mark.parametrize("name", PROVIDERS)
async def test_fifty_thousand_results_give_at_most_the_results_asked_for(apis, client, name: str) -> None:
    route = PROVIDER_ROUTE[name]
    apis.mode[route] = "many"
    if name == "pubmed":
        apis.mode["efetch"] = "many"
    try:
        hits = await provider(apis, client, name).search(QUERY, max_results=5)
    except ProviderError as exc:  # a format whose 50,000 smallest records pass the cap
        assert exc.reason == "answered with more than 5,242,880 bytes (the reply cap)"
    else:
        assert len(hits) <= 5
    if name == "pubmed":  # 50,000 ids found: only the five wanted are fetched
        fetched = next(r for r in apis.server.requests if r.path.startswith("/pubmed/efetch.fcgi"))
        assert len(parse_qs(urlsplit(fetched.path).query)["id"][0].split(",")) == 5


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_retry_after_of_a_billion_seconds_rests_the_provider_without_waiting(apis, client, name: str) -> None:
    """A Retry-After is read at most 60 s long; past the request's own limit it is not waited out."""
    apis.mode[PROVIDER_ROUTE[name]], apis.retry_after = "429", "1000000000"
    time = FakeTime()
    searcher = provider(apis, client, name, time)
    with pytest.raises(ProviderError, match=r"rate limited \(HTTP 429; it asks to wait 60s\)"):
        await searcher.search(QUERY, max_results=5)
    with pytest.raises(ProviderError, match="rate limited: resting"):
        await searcher.search(QUERY, max_results=5)
    assert time.waits == [] and apis.requests_to(PROVIDER_ROUTE[name]) == 1
    time.now += 61  # once the rest has passed, the API is asked again
    assert await searcher.search(QUERY, max_results=5)


@pytest.mark.parametrize("name", [n for n in PROVIDERS if n != "pubmed"])  # PubMed's full text is the pmc_url setting's
async def test_full_text_links_to_this_machine_or_the_metadata_address_are_never_fetched(
    apis, client, name: str
) -> None:
    apis.mode[PROVIDER_ROUTE[name]] = "hostile"
    hits = await provider(apis, client, name).search(QUERY, max_results=5)
    links = {hit.work.full_text_url for hit in hits if hit.work is not None and hit.work.full_text_url}
    assert links == {apis.server.url("/private/secret.pdf"), METADATA_URL}, "file: is no full text at all"
    async with Fetcher() as fetcher:  # private fetching off, as a run has it unless allowed
        read = [await fetcher.read_source(hit, queries=(QUERY,), token_budget=400) for hit in hits]
    assert {r.failure.reason for r in read if r.failure is not None} == {"private_address"}
    assert not any(r.path.startswith("/private/") for r in apis.server.requests), "nothing was fetched from here"


@pytest.mark.parametrize("name", PROVIDERS)
async def test_hostile_metadata_reaches_no_prompt_and_no_page_unescaped(apis, client, name: str, tmp_path: Path) -> None:
    apis.mode[PROVIDER_ROUTE[name]] = "hostile"
    if name == "pubmed":
        apis.mode["efetch"] = "hostile"
    model = ResponderModel(ResearchResponder())
    settings = apis.settings(reports_dir=tmp_path / "reports", cache_dir=tmp_path / "cache", context_path=None,
                             allow_private=False)  # fmt: skip
    async with Fetcher() as reader:
        result = await research(QUERY, settings=settings, model=model, providers=[provider(apis, client, name)],
                                reader=reader, lessons=lambda domain: LessonSelection.none(domain))  # fmt: skip
    prompts = [request.system + request.user for request in model.requests]
    assert any("dead tuples" in p and "Vacuum" in p for p in prompts), "the works reached the prompts"
    for prompt in prompts:
        assert not CONTROLS.search(prompt) and "<|im_start|>" not in prompt and "[31m" not in prompt
        assert "Ignore previous instructions" not in prompt  # inside the data delimiters, without its steering
        assert prompt.count(DATA_CLOSE) == prompt.count(DATA_OPEN + ":") + prompt.count(DATA_OPEN + " ")
    report = result.report_markdown
    assert "<script>" not in report and "javascript:" not in report and not CONTROLS.search(report)
    page, _ = report_page(result.report_path, report, settings.reports_dir)
    async with in_process(options_for(tmp_path)) as web:
        shown = await web.client.get(f"/reports/{result.id}")
    for html in (page.html, shown.text):
        assert "<script>alert" not in html and "<img src=x" not in html and "<b>Mallory" not in html
        assert not re.search(r"""href=["']?\s*javascript:""", html, re.I) and not CONTROLS.search(html)
    assert shown.status_code == 200 and "&lt;script&gt;alert(1)&lt;/script&gt;" in shown.text
