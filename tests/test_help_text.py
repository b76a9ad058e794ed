"""Issue 43.9: help summaries are whole sentences (click cut them mid-phrase to fit a column), and
``run --help`` groups its options in panels (typer's ``rich_help_panel``) without paying for typer's
rich help (its markdown and traceback imports)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from research_agent.cli import app
from research_agent.cli.root import COMMANDS
from research_agent.cli.run_options import MEMORY, MODEL, OUTPUT, REVIEW, RUN, SOURCES
from research_agent.cli.usage import first_sentence


def _help(*args: str) -> str:
    done = CliRunner().invoke(app, [*args, "--help"], terminal_width=80)
    assert done.exit_code == 0, done.output
    return done.stdout


def _listing(text: str) -> list[str]:
    return text.split("Commands:\n", 1)[1].splitlines()


@pytest.mark.parametrize("group", [(), ("memory",), ("corpus",), ("cache",)])
def test_every_command_listing_holds_whole_sentences(group):
    lines = _listing(_help(*group))
    assert lines and not any(line.rstrip().endswith("...") for line in lines), lines
    entries = " ".join(lines).split()
    assert entries[-1].endswith(".")


def test_the_top_level_summaries_are_one_line_sentences_of_their_own():
    lines = _listing(_help())
    for name, spec in COMMANDS.items():
        assert spec.short.endswith(".") and spec.short[0].isupper() and "\n" not in spec.short
        (line,) = [line for line in lines if line.split()[:1] == [name]]
        assert line.split(None, 1)[1] == spec.short  # on one line at 80 columns


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("Show one critique.", "Show one critique."),
        ("Lint a report: exit 0 when approved. Other words follow.\n\nMore.", "Lint a report: exit 0 when approved."),
        ("Use e.g. this; reports/meta/run-<id>.yaml is read.", "Use e.g. this; reports/meta/run-<id>.yaml is read."),
    ],
)
def test_a_summary_is_the_help_s_first_sentence_whole(text, sentence):
    assert first_sentence(text) == sentence


def _panels(text: str) -> dict[str, str]:
    """Each panel's title and the text inside it."""
    found: dict[str, str] = {}
    title = None
    for line in text.splitlines():
        if line.startswith("╭─ "):
            title = line.removeprefix("╭─ ").split(" ─", 1)[0]
            found[title] = ""
        elif line.startswith("╰"):
            title = None
        elif title is not None:
            found[title] += line.strip("│ ") + "\n"
    return found


def test_run_help_groups_its_options_in_panels():
    panels = _panels(_help("run"))
    assert list(panels) == ["Arguments", RUN, SOURCES, MODEL, OUTPUT, REVIEW, MEMORY, "Options"]
    expected = {
        RUN: ("--quick", "--deep", "--context", "--timeout"),
        SOURCES: ("--corpus", "--exclude", "--search", "--max-sources", "--allow-private"),
        MODEL: ("--model", "--fast-model", "--llm-timeout", "--context-tokens"),
        OUTPUT: ("--reports-dir", "--output", "--json", "--format", "--browser", "--strict"),
        REVIEW: ("--no-retry", "--min-viability", "--max-plans", "--max-revisions", "--rules"),
        MEMORY: ("--no-critique", "--wait-critique", "--no-lessons"),
        "Options": ("--help",),
    }
    for title, flags in expected.items():
        for flag in flags:
            assert [t for t, inside in panels.items() if f"{flag} " in inside] == [title], flag
    assert "QUERY" in panels["Arguments"]


def test_run_help_loads_neither_typer_s_rich_help_nor_the_pipeline():
    code = (
        "import sys\n"
        "from research_agent.cli import main\n"
        "sys.argv = ['research-agent', 'run', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ('typer.rich_utils', 'rich.markdown', 'rich.traceback', 'markdown_it', 'research_agent.pipeline',\n"
        "         'httpx', 'openai')\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "╭─ Sources" in done.stdout or "+- Sources" in done.stdout
