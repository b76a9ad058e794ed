"""Extraction workers carry only what extraction needs; a corpus-only run, no web stack.

A worker process imports the parent's main module and the modules its job function
comes from. Each worker (two per two cores, and a fresh one for every retired one) that
imported the fetcher, httpx, rich or the command line held 10-20 MB more for nothing.
These tests assert which modules are loaded: behaviour, not timing.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

from research_agent.fetch.processes.pool import ExtractionPool
from research_agent.search.corpus_files import read_document
from tests.support import extractors

REPO = Path(__file__).resolve().parents[1]
# Nothing extraction needs: the HTTP stack, the terminal, the command line, the model client.
NOT_FOR_WORKERS = ("httpx", "rich", "typer", "click", "openai", "pydantic", "jsonschema", "asyncio")
NOT_FOR_WORKER_MODULES = ("research_agent.fetch.fetcher", "research_agent.config", "research_agent.cli.root")


def _heavy(modules: list[str]) -> list[str]:
    roots = {name.split(".")[0] for name in modules}
    return [m for m in NOT_FOR_WORKERS if m in roots] + [m for m in NOT_FOR_WORKER_MODULES if m in modules]


def _worker_modules(fn) -> list[str]:
    with ExtractionPool(fn, workers=1, timeout=extractors.HANG_GUARD) as pool:
        return pool.submit().result(timeout=extractors.HANG_GUARD)


def test_a_page_extraction_worker_loads_no_http_terminal_or_model_modules() -> None:
    modules = _worker_modules(extractors.loaded_modules)
    assert "research_agent.fetch.extract" in modules  # the fork server preloaded extraction
    assert _heavy(modules) == []


def test_a_corpus_reading_worker_loads_no_http_terminal_or_model_modules() -> None:
    # Unpickling the corpus reader imports its module, as a real index build does.
    modules = _worker_modules(functools.partial(extractors.loaded_modules, read_document))
    assert "research_agent.search.corpus_files" in modules
    assert _heavy(modules) == []


def test_under_the_console_script_a_worker_does_not_load_the_command_line(tmp_path: Path) -> None:
    # The ``research-agent`` script is a file run as __main__; multiprocessing imports it
    # again in every worker. It imports research_agent.cli, which must cost a worker nothing.
    script = tmp_path / "research-agent"
    script.write_text(
        "import json, sys\n"
        "from research_agent.cli import main\n"
        "if __name__ == '__main__':\n"
        "    from research_agent.fetch.processes.pool import ExtractionPool\n"
        "    from tests.support.extractors import loaded_modules\n"
        "    with ExtractionPool(loaded_modules, workers=1) as pool:\n"
        "        print(json.dumps(pool.submit().result(timeout=60)))\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # a script's own folder comes first on its path
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout)
    assert "__mp_main__" in modules  # the worker did import the script, as multiprocessing does
    assert _heavy(modules) == []


def _loaded_after(code: str) -> list[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_importing_the_command_line_package_loads_no_command() -> None:
    modules = _loaded_after("import research_agent.cli")
    assert [m for m in ("typer", "rich", "research_agent.cli.root", "research_agent.config") if m in modules] == []
    modules = _loaded_after("from research_agent.cli import app\nassert type(app).__name__ == 'Typer'")
    assert "research_agent.cli.root" in modules


def test_the_fetch_package_names_load_on_first_use_and_extract_stays_the_function() -> None:
    modules = _loaded_after(
        "import research_agent.fetch.extract\n"
        "from research_agent.fetch import extract, Fetcher\n"
        "assert callable(extract) and extract.__name__ == 'extract', extract\n"
        "assert Fetcher.__module__ == 'research_agent.fetch.fetcher'\n"
    )
    assert "httpx" in modules  # Fetcher was asked for
    assert "httpx" not in _loaded_after("import research_agent.fetch")


def test_a_corpus_only_run_loads_no_web_provider_or_fetcher() -> None:
    """(httpx it loads: the model client speaks it, issue 37.)"""
    modules = _loaded_after(
        "import research_agent.pipeline\n"
        "from research_agent.config import Settings\n"
        "from research_agent.search.registry import build_providers\n"
        "settings = Settings(corpus_dirs=('.',))\n"
        "assert build_providers(settings, http_client=None, local_provider=object()) != []\n"
    )
    assert [m for m in ("research_agent.search.web", "research_agent.fetch.fetcher") if m in modules] == []
