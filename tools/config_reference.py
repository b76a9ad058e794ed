"""Write ``docs/configuration.md`` from the code: every setting of :class:`Settings` (its config
key, flag, environment variable, default, range and meaning), the mode presets, a complete example
``config.toml``, and every command and option of the typer app with its own help text.

    python tools/config_reference.py           # rewrite docs/configuration.md
    python tools/config_reference.py --check   # exit 1 when the page is stale

What the code cannot say lives here: a setting's meaning (:data:`MEANINGS`), a readable default
for the defaults that depend on the environment, and an example value for those that default to
nothing. ``tests/test_config_reference.py`` fails when a setting has no meaning, an option has no
help, or the committed page differs from what this script writes.
"""

from __future__ import annotations

import html
import json
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

import typer
import typer.main

from research_agent.cli import app
from research_agent.cli.run_options import settings_overrides
from research_agent.cli.usage import tidy_help
from research_agent.config import ENV_VARS, NUMBER_RANGES, Settings
from research_agent.modes import MODES, Mode

PAGE = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"

# A setting's meaning: what it does, in a sentence or two. Every Settings field needs one.
MEANINGS: dict[str, str] = {
    # the model endpoint
    "model": "The main model: it plans, writes and revises, and plays the skeptic.",
    "fast_model": "A cheaper model for relevance scoring and the critique; empty means the main model.",
    "api_key": "The endpoint's API key. A local server usually takes any value; keep a real key in the "
    "environment rather than in a file.",
    "base_url": "An OpenAI-compatible endpoint (Ollama, llama.cpp, vLLM, LM Studio, a gateway); empty means "
    "OpenAI's own.",
    "llm_timeout": "Seconds one structured call (decompose, relevance, skeptic, critique) may take in all, and "
    "how long the streamed draft may go without a token once its first token came. A call that times out is "
    "tried once more, then its stage degrades.",
    "llm_max_retries": "Retries of a call that failed transiently (429, 5xx, a dropped connection), with "
    "backoff that honours Retry-After.",
    "llm_concurrency": "Model calls in flight at once. Set it to the server's slots: 1 for llama.cpp's default.",
    "llm_max_answer_bytes": "The most one answer may hold, decompressed; past it the answer is unreadable and "
    "its stage degrades.",
    "llm_prompt_rate": "Prompt tokens a second the server reads: the writer's first streamed token may take "
    "llm_timeout plus the prompt's estimated tokens at this rate (lower it for a slow CPU server).",
    "context_tokens": "The model's context window (prompt and answer) when its server does not say it "
    "(llama.cpp's /props, vLLM's /v1/models, Ollama's /api/show); prompts and answers are fitted to it. A "
    "window the server says is never raised by it.",
    "relevance_batch_tokens": "Source tokens per relevance call at most (and no more than the model's context "
    "window leaves beside the answer): a standard run's 12 sources take one call.",
    "price_table": "A TOML or JSON price table (USD per million input and output tokens) that extends the "
    "built-in one. A model without a price has cost unknown, never $0.",
    # the run
    "mode": "How much work a run does: quick, standard or deep (see Modes below).",
    "reports_dir": "Where reports go; run records, critiques and passages go to its meta/ folder.",
    "output": "Also write the report to this file (a regular file or a new path; never a file another run "
    "owns).",
    "context_path": "Business context added to the prompts as background (never as evidence); 'none' for "
    "none. The shipped template injects nothing until you write outside its comments.",
    "run_timeout": "Deadline of a whole run, a waited-for critique included. A draft that exists by then is "
    "published; before a draft it is an error (exit 6).",
    # sources
    "corpus_dirs": "Folders of your own documents to search (.md .txt .rst .html, .pdf with the pdf extra). "
    "Given alone, the run never touches the web.",
    "corpus_exclude": "Gitignore-style patterns of corpus files to leave out (filters the index as it is).",
    "search_providers": "Search providers, any of ddgs, searxng, tavily, local, openalex, arxiv, pubmed, semanticscholar, wikipedia (academic: the four paper indexes); empty means local with a "
    "corpus, else ddgs. One failing provider does not sink the run.",
    "searxng_url": "Base URL of a SearXNG instance, for the searxng provider.",
    "tavily_api_key": "API key of the tavily provider.",
    "mailto": "Your e-mail address, sent to OpenAlex (its polite pool) and NCBI, and in the scholarly "
              "providers' User-Agent.",
    "openalex_url": "Base URL of the OpenAlex API, for the openalex provider (a mirror, a proxy).",
    "openalex_api_key": "API key of the openalex provider (optional; keyless callers get a small daily allowance).",
    "arxiv_url": "Base URL of the arXiv API, for the arxiv provider.",
    "pubmed_url": "Base URL of NCBI E-utilities, for the pubmed provider.",
    "pmc_url": "Where a PubMed Central article's open full text is read.",
    "ncbi_api_key": "API key of the pubmed provider (optional; 10 requests/s instead of 3).",
    "semanticscholar_url": "Base URL of the Semantic Scholar Graph API, for the semanticscholar provider.",
    "semanticscholar_api_key": "API key of the semanticscholar provider (optional; 1 request/s instead of one every 3 s).",
    "wikipedia_url": "MediaWiki API of the wikipedia provider; empty means https://<wikipedia_language>.wikipedia.org/w/api.php.",
    "wikipedia_language": "Language code of the Wikipedia the wikipedia provider searches.",
    "max_sources": "At most this many sources fetched and scored per plan; unset means the mode's number.",
    "cache_dir": "Corpus indexes and the page cache.",
    "state_dir": "What the tool must trust, kept outside reports/: the key that signs the memory index, the "
    "hashes of the lesson files you trusted.",
    "use_cache": "Read and write the on-disk page cache.",
    "cache_ttl": "Seconds a cached page stays fresh.",
    "allow_private": "Fetch loopback and private-network addresses (refused by default).",
    "respect_robots": "Check robots.txt before fetching a page.",
    "fetch_concurrency": "Pages fetched at once.",
    "fetch_per_host": "Pages fetched at once from one host.",
    "fetch_timeout": "Seconds one page fetch may take.",
    "max_page_bytes": "The most of one page that is read, decoded: a page that declares more is refused, a "
    "longer one is cut there.",
    "search_reply_max_bytes": "The most a SearXNG or Tavily reply may hold, decoded.",
    # review and retry
    "min_viability": "Replan when the skeptic's viability score (0-100) is below this.",
    "max_plans": "At most this many plans (the first included) per run.",
    "max_revisions": "At most this many revisions of a draft the review rejected.",
    "retry": "Replan and revise at all; false turns both loops off.",
    "rules_path": "Custom lint rules (YAML); unset means rules.yaml beside the context file, when there is one.",
    "check_claims": "Check cited sentences against their passages in the skeptic's call.",
    "claim_tokens": "The claim list one skeptic call carries; standard mode samples up to it, and a longer "
    "list goes to calls beside the skeptic's.",
    "review_max_bytes": "The largest report `review` (and MCP review_report) reads.",
    # memory
    "critique": "Critique each standard or deep report in the background after the run.",
    "wait_critique": "Wait for the critique and print its summary.",
    "lessons": "Give runs the lessons built from past critiques; false makes a baseline run.",
    "control_fraction": "Share of adaptive runs that are whole-run baselines (no lessons), for the "
    "adaptive-versus-baseline comparison.",
    "trial_probability": (
        "Probability that each selected lesson is withheld from a run, for its own trial, while its effect is "
        "undecided (a fifth of it once the lesson is proven helpful)."
    ),
    "lesson_ttl_days": "Critiques older than this many days build no lessons.",
    "max_critiques": "Critiques (and passage files) kept in reports/meta/; older ones are pruned.",
}

# Defaults that depend on the environment, shown as a person reads them.
SHOWN_DEFAULTS: dict[str, str] = {
    "cache_dir": "~/.cache/research-agent",
    "state_dir": "~/.local/state/research-agent",
}

# Example values for the example config.toml, where the default is "nothing".
EXAMPLES: dict[str, Any] = {
    "output": "answer.md",
    "price_table": "~/.config/research-agent/prices.toml",
    "rules_path": "rules.yaml",
    "max_sources": 12,
    "context_tokens": 8192,
}

# Settings that commands other than `run` set by a flag of their own: setting -> (flag, commands).
OTHER_FLAGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "cache_dir": ("--cache-dir", ("corpus index", "corpus search")),
}

# The first setting of each group, in Settings' own order.
SECTIONS: dict[str, str] = {
    "model": "The model endpoint",
    "mode": "The run",
    "corpus_dirs": "Sources and fetching",
    "min_viability": "Review and retries",
    "critique": "Memory",
}

_INTRO = """\
# Configuration

<!-- Generated by tools/config_reference.py from Settings and the command line. Do not edit by hand:
     run `python tools/config_reference.py` after changing a setting or an option. -->

Every setting resolves as **flag > environment variable > config file > default**.

- The config file is TOML, at `$RESEARCH_AGENT_CONFIG` or `~/.config/research-agent/config.toml`
  (`$XDG_CONFIG_HOME/research-agent/config.toml`). Its keys are the setting names below; an unknown
  key is an error. A file named by `$RESEARCH_AGENT_CONFIG` must exist and be a regular file; the
  default one may be absent.
- A bad value anywhere (a number out of range, `nan`, a word where a number belongs) is one line
  on stderr and exit 2, before any work starts. The one exception: the unprefixed names kept for
  compatibility (`MIN_VIABILITY_SCORE`, `MAX_PLANNING_ITERATIONS`, `MAX_REVISIONS`), which another tool
  may have left set. A bad value in one of them is ignored with a one-line warning naming it, and the
  `RESEARCH_AGENT_*` name wins where both are set.
- API keys never show in a repr of the settings, a log line or a run record.
- Flags are `research-agent run`'s; `memory ab`, `mcp` and `serve` take the same ones where they have
  them (see [Commands](#commands)).
- Environment variables that are not settings: `RESEARCH_AGENT_CONFIG` (the config file),
  `RESEARCH_AGENT_MCP_TOKEN` and `RESEARCH_AGENT_WEB_TOKEN` (the MCP server's and the web workbench's
  bearer tokens, kept out of settings on purpose),
  `XDG_CACHE_HOME`, `XDG_STATE_HOME` and `XDG_CONFIG_HOME` (the default folders).
"""


def _default(name: str) -> Any:
    field = next(f for f in fields(Settings) if f.name == name)
    return field.default if field.default is not MISSING else field.default_factory()  # type: ignore[misc]


def _shown(name: str, value: Any) -> str:
    """A default as the table shows it."""
    if name in SHOWN_DEFAULTS:
        return SHOWN_DEFAULTS[name]
    if value is None or value == ():
        return "(none)"
    if isinstance(value, Mode):
        return value.name
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int) and name.endswith("_bytes") and value >= 1 << 20:
        return f"{value} ({value / (1 << 20):g} MiB)"
    return str(value) if str(value) else '""'


def _toml(value: Any) -> str:
    """A value as TOML writes it."""
    if isinstance(value, Mode):
        return json.dumps(value.name)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value))


def _range(name: str) -> str:
    if name not in NUMBER_RANGES:
        return ""
    low, high, low_ok = NUMBER_RANGES[name]
    return f" Range: {_number(name, low)}{'' if low_ok else ' (excluded)'} to {_number(name, high)}."


def _number(name: str, value: float) -> str:
    """A bound as a person reads it: sizes in KiB, MiB or GiB, whole numbers without a point."""
    if name.endswith("_bytes"):
        for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
            if value >= size:
                return f"{value / size:g} {unit}"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _cell(text: str) -> str:
    """Text for a markdown table cell: HTML escaped, pipes escaped, one line."""
    return _text(text).replace("|", "\\|")


def _code(text: str) -> str:
    """Text as inline code in a table cell: an HTML code element, its pipes as entities (a pipe
    escaped inside backticks keeps its backslash in some renderers, splits the cell in others)."""
    return f"<code>{_text(text).replace('|', '&#124;')}</code>"


def _text(text: str) -> str:
    """Help text as a markdown paragraph: HTML escaped, one line."""
    return html.escape(" ".join(text.split()), quote=False)


def _root_command() -> Any:
    command = typer.main.get_command(app)
    tidy_help(command)
    return command


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every leaf command of the app with its path, in the order `--help` lists them."""
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield path, command
        return
    context = typer.Context(command, info_name=" ".join(path) or "research-agent")
    for name in command.list_commands(context):
        yield from _commands(command.get_command(context, name), (*path, name))  # the root loads each on first use


def _options(command: Any) -> list[Any]:
    return [p for p in command.params if p.param_type_name == "option"]


def _sample(param: Any) -> Any:
    """A value of the option's kind, to see which setting it sets."""
    if param.is_flag:
        return True
    kind = param.bare_type().removeprefix("list[").removesuffix("]")
    value: Any = {"int": 7, "float": 7.0, "Path": Path("x")}.get(kind, "x")
    return [value] if param.multiple else value


def setting_flags(other_flags: dict[str, tuple[str, tuple[str, ...]]] = OTHER_FLAGS) -> dict[str, list[str]]:
    """Setting name -> the flags that set it: every `run` option (through the very function the
    command uses), then ``other_flags``, each checked to exist (LookupError if not)."""
    commands = {" ".join(path): command for path, command in _commands(_root_command())}
    found: dict[str, list[str]] = {}
    for param in _options(commands["run"]):
        overrides = settings_overrides({param.name: _sample(param)})
        for setting in (k for k, v in overrides.items() if v is not None):
            found.setdefault(setting, []).append(f"`{param.opts[0]}`")
    for setting, (flag, paths) in other_flags.items():
        missing = [p for p in paths if flag not in {o for q in _options(commands[p]) for o in q.opts}]
        if missing:
            raise LookupError(f"OTHER_FLAGS: {', '.join(missing)} has no {flag}")
        found.setdefault(setting, []).append(f"`{flag}` ({', '.join(paths)})")
    return found


def _settings_tables(flags: dict[str, list[str]]) -> list[str]:
    envs: dict[str, list[str]] = {}
    for var, setting in ENV_VARS.items():
        envs.setdefault(setting, []).append(f"`{var}`")
    lines = ["## Settings"]
    for field in fields(Settings):
        name = field.name
        if name in SECTIONS:
            lines += ["", f"### {SECTIONS[name]}", "", "| config key | default | flag | environment | meaning |",
                      "| --- | --- | --- | --- | --- |"]  # fmt: skip
        meaning = MEANINGS.get(name, "") + _range(name)
        row = [f"`{name}`", _code(_shown(name, _default(name))), ", ".join(flags.get(name, [])),
               ", ".join(envs.get(name, [])), _cell(meaning)]  # fmt: skip
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _modes_table() -> list[str]:
    rows = [f.name for f in fields(Mode) if f.name != "name"]
    lines = ["## Modes", "", "`--quick`, `--standard` (the default) and `--deep` pick one of these presets "
             "(`research_agent/modes.py`):", "", "| | " + " | ".join(MODES) + " |",
             "| --- |" + " --- |" * len(MODES)]  # fmt: skip
    for row in rows:
        values = [getattr(mode, row) for mode in MODES.values()]
        shown = [", ".join(v) or "(none: no skeptic)" if isinstance(v, tuple) else str(v) for v in values]
        lines.append(f"| `{row}` | " + " | ".join(_cell(s) for s in shown) + " |")
    return lines


def example_config() -> str:
    """A complete config.toml: every setting at its default, with its meaning; settings whose
    default is nothing or depends on the environment are commented out."""
    out = ["# research-agent config.toml: every setting at its default. Keep only what you change."]
    for field in fields(Settings):
        name = field.name
        if name in SECTIONS:
            out += ["", f"# --- {SECTIONS[name]} ---"]
        out += textwrap.wrap(MEANINGS.get(name, ""), width=98, initial_indent="# ", subsequent_indent="# ")
        value = _default(name)
        if name in SHOWN_DEFAULTS:
            out.append(f"# {name} = {_toml(SHOWN_DEFAULTS[name])}")
        elif value is None:
            out.append(f"# {name} = {_toml(EXAMPLES.get(name, ''))}")
        else:
            out.append(f"{name} = {_toml(value)}")
    return "\n".join(out).strip() + "\n"


def _command_reference() -> list[str]:
    root = _root_command()
    context = typer.Context(root, info_name="research-agent")
    lines = ["## Commands", "", "Every command and option, with the help `--help` prints. Global options, "
             "before or after the command:", "", "| option | meaning |", "| --- | --- |"]  # fmt: skip
    lines += [f"| {_code(record[0])} | {_cell(record[1])} |" for p in root.params if (record := p.get_help_record(context))]
    lines.append("")
    for path, command in _commands(root):
        name = "research-agent " + " ".join(path)
        context = typer.Context(command, info_name=name)
        lines += [f"### {' '.join(path)}", "", "```", command.get_usage(context).removeprefix("Usage: "), "```",
                  "", _text(command.help or ""), "", "| option | meaning |", "| --- | --- |"]  # fmt: skip
        for param in command.params:
            record = param.get_help_record(context)
            if record is not None:
                lines.append(f"| {_code(record[0])} | {_cell(record[1])} |")
        lines.append("")
    return lines


def render() -> str:
    """The whole page."""
    parts = [_INTRO, *_settings_tables(setting_flags()), "", *_modes_table(), "",
             "## Example config.toml", "", "```toml", example_config().rstrip("\n"), "```", "",
             *_command_reference()]  # fmt: skip
    return "\n".join(parts).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    page = render()
    if "--check" in argv:
        if PAGE.exists() and PAGE.read_text(encoding="utf-8") == page:
            return 0
        print(f"{PAGE} is stale: run python tools/config_reference.py", file=sys.stderr)
        return 1
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(page, encoding="utf-8")
    print(PAGE)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
