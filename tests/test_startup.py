"""The command line starts light and leaves the garbage collector as it found it."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

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


def test_the_command_line_loads_export_and_the_critique_only_when_a_command_uses_them():
    code = (
        "import sys, research_agent.cli.root\n"
        "late = ('research_agent.export', 'markdown_it', 'research_agent.memory.critique.judgement')\n"
        "loaded = [m for m in late if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    _run_python(code)


@pytest.mark.parametrize("args", [["--help"], ["--version"], []])
def test_help_and_version_answer_without_loading_a_command(args):
    """Issue 33: ``--version`` imported the whole command line; bench/bench_startup.py measures it."""
    code = (
        "import sys\n"
        "from research_agent.cli import main\n"
        f"sys.argv = ['research-agent', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ('research_agent.pipeline', 'research_agent.config', 'research_agent.llm', 'research_agent.record',\n"
        "         'research_agent.memory', 'research_agent.review', 'openai', 'httpx', 'yaml')\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "commands = [m for m in sys.modules if m.startswith('research_agent.cli.') and m.rsplit('.', 1)[1] in\n"
        "            ('run', 'critique', 'review', 'export', 'doctor', 'mcp', 'corpus', 'memory', 'cache')]\n"
        "assert not loaded and not commands, (loaded, commands)\n"
    )
    _run_python(code)


def test_the_help_lists_each_command_as_the_command_itself_says_it():
    from research_agent.cli.root import COMMANDS, _Root, app, load_command

    group = typer.main.get_group(app)
    assert isinstance(group, _Root)
    for name, spec in COMMANDS.items():
        assert load_command(name).help.split("\n\n")[0].strip() == spec.summary, name

    def root_help(group) -> str:
        return group.get_help(group.make_context("research-agent", [], resilient_parsing=True, terminal_width=100))

    lazy, loaded = typer.main.get_group(app), typer.main.get_group(app)
    for name in COMMANDS:
        loaded.commands[name] = load_command(name)  # every command loaded: the help they give themselves
    assert not lazy.commands and "Commands:\n  run " in root_help(lazy)
    assert root_help(lazy) == root_help(loaded)


def test_a_command_is_loaded_when_it_runs_and_a_typo_still_gets_a_suggestion():
    from research_agent.cli.root import app

    done = CliRunner().invoke(app, ["memroy"])
    assert done.exit_code == 2 and "Did you mean 'memory'?" in done.stderr
    assert "Lint a markdown report" in CliRunner().invoke(app, ["review", "--help"]).stdout


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
    from research_agent.run.indexing import search_client
    from tests.support.pipeline import settings_for

    owned: list = []
    assert search_client(settings_for(tmp_path), owned) is None and owned == []
    searx = settings_for(tmp_path, search_providers=("searxng",), searxng_url="http://127.0.0.1:9")
    client = search_client(searx, owned)
    assert client is not None and owned == [client]
    await client.aclose()


def _run_python(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_jsonschema_is_loaded_while_the_first_structured_request_is_out():
    # Nothing needs jsonschema before the first answer: it is not imported with the run,
    # and it is loaded in the background while the first request waits for its answer.
    _run_python(
        "import asyncio, sys, threading\n"
        "from research_agent.cli import app\n"
        "import research_agent.pipeline, research_agent.record.io, research_agent.memory.store.schema\n"
        "assert 'jsonschema' not in sys.modules\n"
        "from research_agent.llm import ChatRequest\n"
        "from research_agent.llm.structured import RawAnswer, ask_in_forms, interpret\n"
        "schema = {'type': 'object', 'properties': {'n': {'type': 'integer'}}, 'required': ['n']}\n"
        "async def send(messages, response_format):\n"
        "    for loader in [t for t in threading.enumerate() if t.name == 'load-jsonschema']:\n"
        "        loader.join(60)  # a hang guard; it may be done already\n"
        "    assert 'jsonschema' in sys.modules  # loaded by now, before any answer is read\n"
        "    return RawAnswer(content='{\"n\": 3}', finish_reason='stop', prompt_tokens=1, completion_tokens=1)\n"
        "raw, form = asyncio.run(ask_in_forms(send, ChatRequest(stage='t', system='s', user='u'), schema, [], 'json_schema'))\n"
        "assert interpret(raw, schema)[0] == {'n': 3}\n"
    )


def test_modules_imported_later_wait_for_their_turn_and_a_failure_stays_quiet(tmp_path, monkeypatch):
    import threading

    from research_agent.cli.startup import import_later

    (tmp_path / "later_for_the_test.py").write_text("VALUE = 3\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    turn, waiting = threading.Event(), threading.Event()

    def after() -> None:
        waiting.set()
        assert turn.wait(60)  # a hang guard

    thread = import_later(("later_for_the_test", "no_such_module_anywhere"), after=after)
    assert waiting.wait(60) and "later_for_the_test" not in sys.modules
    turn.set()
    thread.join(60)
    assert not thread.is_alive() and sys.modules["later_for_the_test"].VALUE == 3
    del sys.modules["later_for_the_test"]


def test_a_run_loads_no_step_after_its_first_plan_before_its_first_model_call():
    # The run command and the pipeline load what the first model call needs; the skeptic, the claim
    # check, the review and the steps of writing and finishing load while that call is out.
    _run_python(
        "import sys\n"
        "import research_agent.cli.root, research_agent.cli.run, research_agent.pipeline as pipeline\n"
        "later = ('research_agent.stages.skeptic', 'research_agent.claims', 'research_agent.review.review',\n"
        "         'research_agent.record.types', 'research_agent.run.finish', *pipeline.LATER_STEPS)\n"
        "loaded = [m for m in later if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "assert pipeline.writing.write_and_review.__module__ == 'research_agent.run.writing'  # at first use\n"
        "assert 'research_agent.run.writing' in sys.modules\n"
    )


def test_what_the_run_command_imports_later_exists():
    from research_agent.cli.run import LATER

    _run_python(f"import importlib\nfor name in {LATER!r}:\n    importlib.import_module(name)\n")


def test_waiting_for_the_sdk_waits_only_for_an_import_that_was_started():
    # What a run defers until its first request is out waits for the openai import started ahead,
    # and for nothing when no import was started (a model that does not use the SDK).
    _run_python(
        "import asyncio, sys\n"
        "from research_agent.llm.client.sdk import load_sdk_ahead, sdk_loaded, wait_for_sdk\n"
        "asyncio.run(sdk_loaded())\n"
        "wait_for_sdk()\n"
        "assert 'openai' not in sys.modules\n"
        "load_sdk_ahead()\n"
        "asyncio.run(sdk_loaded())\n"
        "assert 'openai.resources.chat' in sys.modules\n"
    )
