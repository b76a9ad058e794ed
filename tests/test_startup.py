"""The command line starts light and leaves the garbage collector as it found it."""

from __future__ import annotations

import gc
import subprocess
import sys

import research_agent
from research_agent.cli.startup import importing


def test_importing_the_package_loads_neither_the_pipeline_nor_openai():
    code = (
        "import sys, research_agent\n"
        "heavy = [m for m in ('research_agent.pipeline', 'research_agent.llm', 'openai', 'jsonschema') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "from research_agent import research, ChatModel, ResearchResult\n"
        "assert research.__module__ == 'research_agent.pipeline' and 'research_agent.pipeline' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_package_still_offers_every_public_name():
    for name in research_agent.__all__:
        assert getattr(research_agent, name) is not None
    assert set(research_agent.__all__) <= set(dir(research_agent))


def test_importing_pauses_the_collector_and_restores_it():
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    with importing():
        assert not gc.isenabled()
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen  # a process that only imports the CLI keeps its collector whole
    gc.disable()
    try:
        with importing():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


async def test_a_corpus_only_run_builds_no_web_search_client(tmp_path):
    from research_agent.indexing import search_client
    from tests.support.pipeline import settings_for

    owned: list = []
    assert search_client(settings_for(tmp_path), owned) is None and owned == []
    searx = settings_for(tmp_path, search_providers=("searxng",), searxng_url="http://127.0.0.1:9")
    client = search_client(searx, owned)
    assert client is not None and owned == [client]
    await client.aclose()
