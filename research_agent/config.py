"""Settings (the mode presets they pick from are :mod:`research_agent.modes`).

Precedence is flags > environment > config file > defaults. This is the only module
that reads the environment; everything else receives a :class:`Settings`.

The config file is TOML, at ``$RESEARCH_AGENT_CONFIG`` or
``$XDG_CONFIG_HOME/research-agent/config.toml``; its keys are the field names of
:class:`Settings` (e.g. ``model = "gpt-4o-mini"``, ``min_viability = 60``). A file named by
``$RESEARCH_AGENT_CONFIG`` must exist and be a regular file; the default one may be absent.
"""

from __future__ import annotations

import logging
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .files.nesting import nesting_problem
from .files.safefile import UnsafeFile, read_text_capped
from .modes import MODES, Mode
from .text.controls import one_line

__all__ = [
    "Mode", "MODES", "Settings", "load_settings", "default_cache_dir", "default_config_path", "default_state_dir",
    "server_token", "SERVER_TOKEN_VARS", "SECRET_FIELDS", "LEGACY_ENV_VARS",
]

log = logging.getLogger(__name__)


def _xdg(env: Mapping[str, str] | None, own: str, var: str, fallback: str) -> Path:
    """``$own`` when set, else ``$var/research-agent`` (``~/<fallback>/research-agent``)."""
    env = os.environ if env is None else env
    if own and env.get(own):
        return Path(env[own])
    return Path(env.get(var) or str(Path.home() / fallback)) / "research-agent"


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    return _xdg(env, "RESEARCH_AGENT_CACHE_DIR", "XDG_CACHE_HOME", ".cache")


def default_state_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user state folder: what the tool must trust, kept outside ``reports/`` (which a
    repository may carry from someone else): the key that signs index rows, the hashes of
    lesson files a person trusted. ``RESEARCH_AGENT_STATE_DIR`` overrides it."""
    return _xdg(env, "RESEARCH_AGENT_STATE_DIR", "XDG_STATE_HOME", ".local/state")


def default_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("RESEARCH_AGENT_CONFIG"):
        return Path(env["RESEARCH_AGENT_CONFIG"])
    return _xdg(env, "", "XDG_CONFIG_HOME", ".config") / "config.toml"


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to know, resolved once. Its repr leaves out every key
    (:data:`SECRET_FIELDS`): a traceback or a debug line that shows the settings shows none."""

    # LLM
    model: str = "gpt-4o-mini"
    fast_model: str = ""  # empty: same as model
    api_key: str = field(default="", repr=False)
    base_url: str = ""
    llm_timeout: float = 180.0  # per structured call in all; for a streamed draft, idle time (no token)
    llm_max_retries: int = 4
    llm_concurrency: int = 16
    llm_max_answer_bytes: int = 4 * 1024 * 1024  # one answer's decompressed body; past it: unreadable
    llm_prompt_rate: float = 20.0  # prompt tokens a second the server reads: the first streamed token's allowance
    context_tokens: int | None = None  # the model's context window when its server does not say it
    relevance_batch_tokens: int = 1800  # source tokens per relevance call at most: a standard run's 12 sources in 1
    price_table: Path | None = None

    # the run
    mode: Mode = MODES["standard"]
    reports_dir: Path = Path("reports")
    output: Path | None = None
    context_path: Path | None = Path("research_context.md")
    run_timeout: float = 1800.0

    # sources
    corpus_dirs: tuple[Path, ...] = ()
    corpus_exclude: tuple[str, ...] = ()  # gitignore patterns filtered out of the corpus at query time
    search_providers: tuple[str, ...] = ()  # empty: local if corpus given, else ddgs
    searxng_url: str = ""
    tavily_api_key: str = field(default="", repr=False)
    max_sources: int | None = None
    cache_dir: Path = field(default_factory=default_cache_dir)
    state_dir: Path = field(default_factory=default_state_dir)
    use_cache: bool = True
    cache_ttl: float = 24 * 3600.0
    allow_private: bool = False
    respect_robots: bool = True
    fetch_concurrency: int = 8
    fetch_per_host: int = 2
    fetch_timeout: float = 20.0
    max_page_bytes: int = 5 * 1024 * 1024
    search_reply_max_bytes: int = 5 * 1024 * 1024  # a search API's reply, decoded
    # scholarly providers (docs/sources.md): base URLs, keys, a contact address for the polite pools
    mailto: str = ""  # OpenAlex's polite pool, NCBI's email parameter, and the API requests' User-Agent
    openalex_url: str = "https://api.openalex.org"
    openalex_api_key: str = field(default="", repr=False)
    arxiv_url: str = "https://export.arxiv.org/api"
    pubmed_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    pmc_url: str = "https://pmc.ncbi.nlm.nih.gov/articles"  # where a PubMed Central article's full text is read
    ncbi_api_key: str = field(default="", repr=False)
    semanticscholar_url: str = "https://api.semanticscholar.org/graph/v1"
    semanticscholar_api_key: str = field(default="", repr=False)
    wikipedia_url: str = ""  # empty: https://<wikipedia_language>.wikipedia.org/w/api.php
    wikipedia_language: str = "en"

    # review and retry
    min_viability: int = 51
    max_plans: int = 3
    max_revisions: int = 2
    retry: bool = True
    rules_path: Path | None = None
    check_claims: bool = True  # check cited sentences against their passages in the skeptic's call
    claim_tokens: int = 1600  # the claim list one skeptic call carries; --standard samples up to it
    review_max_bytes: int = 1024 * 1024  # `review` and review_report: far above any report, below a stall

    # memory
    critique: bool = True
    wait_critique: bool = False
    lessons: bool = True
    control_fraction: float = 0.2
    trial_probability: float = 0.5  # an undecided lesson is withheld on its own this often (a fifth once helpful)
    lesson_ttl_days: float = 30.0
    max_critiques: int = 50

    @property
    def fast_model_name(self) -> str:
        return self.fast_model or self.model

    @property
    def source_limit(self) -> int:
        return self.max_sources if self.max_sources is not None else self.mode.sources_scored

    @property
    def providers(self) -> tuple[str, ...]:
        """The search providers this run uses, after applying the defaults."""
        if self.search_providers:
            return self.search_providers
        return ("local",) if self.corpus_dirs else ("ddgs",)

    @property
    def meta_dir(self) -> Path:
        return self.reports_dir / "meta"

    def replace(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    def validate(self) -> Settings:
        """Raise ConfigError for values no run could use; return self.

        Every number must be a finite number of the field's kind within its range
        (:data:`NUMBER_RANGES`): ``nan``, ``inf`` and ``1e400`` are refused.
        """
        problems = [p for name, bounds in NUMBER_RANGES.items() if (p := _number_problem(name, getattr(self, name), bounds))]
        if problems:
            raise ConfigError("; ".join(problems))
        return self


# name: (lowest, highest, whether the lowest value itself is allowed). Integers for int fields.
NUMBER_RANGES: dict[str, tuple[float, float, bool]] = {
    "llm_timeout": (0, 24 * 3600, False), "llm_max_retries": (0, 20, True), "llm_concurrency": (1, 256, True),
    "llm_max_answer_bytes": (64 * 1024, 1 << 30, True), "llm_prompt_rate": (0, 1_000_000, False),
    "context_tokens": (512, 10_000_000, True), "relevance_batch_tokens": (50, 100_000, True),
    "run_timeout": (0, 7 * 24 * 3600, False), "max_sources": (1, 200, True),
    "cache_ttl": (0, 10 * 365 * 24 * 3600, True), "fetch_concurrency": (1, 256, True),
    "fetch_per_host": (1, 64, True), "fetch_timeout": (0, 3600, False), "max_page_bytes": (1024, 1 << 30, True),
    "search_reply_max_bytes": (1024, 1 << 30, True),
    "min_viability": (0, 100, True), "max_plans": (1, 10, True), "max_revisions": (0, 10, True),
    "claim_tokens": (200, 100_000, True), "review_max_bytes": (1024, 64 * 1024 * 1024, True),
    "control_fraction": (0, 1, True), "trial_probability": (0, 1, True), "lesson_ttl_days": (0, 36_500, False),
    "max_critiques": (0, 100_000, True),
}  # fmt: skip


def _number_problem(name: str, value: Any, bounds: tuple[float, float, bool]) -> str | None:
    """Why ``value`` is not a usable Settings.<name>, or None."""
    low, high, low_ok = bounds
    if value is None and str(_FIELD_TYPES[name]).endswith("| None"):
        return None
    whole = str(_FIELD_TYPES[name]).startswith("int")
    kind = "a whole number" if whole else "a number"
    if isinstance(value, bool) or not isinstance(value, int | float) or (whole and not isinstance(value, int)):
        return f"{name} must be {kind}, not {value!r}"
    if not math.isfinite(value):
        return f"{name} must be a finite number, not {value}"
    if value < low or (value == low and not low_ok) or value > high:
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        lower = f"from {low:g}" if low_ok else f"above {low:g}"
        return f"{name} must be {lower} to {high:g}, not {shown}"
    return None


# Environment variables and the settings they set. OPENAI_* follow the ecosystem's names.
ENV_VARS: dict[str, str] = {
    "OPENAI_API_KEY": "api_key", "OPENAI_BASE_URL": "base_url",
    "RESEARCH_AGENT_MODEL": "model", "RESEARCH_AGENT_FAST_MODEL": "fast_model",
    "RESEARCH_AGENT_REPORTS_DIR": "reports_dir", "RESEARCH_AGENT_MODE": "mode", "RESEARCH_AGENT_TIMEOUT": "run_timeout",
    "RESEARCH_AGENT_LLM_TIMEOUT": "llm_timeout", "RESEARCH_AGENT_LLM_CONCURRENCY": "llm_concurrency",
    "RESEARCH_AGENT_LLM_PROMPT_RATE": "llm_prompt_rate", "RESEARCH_AGENT_CONTEXT_TOKENS": "context_tokens",
    "RESEARCH_AGENT_SEARCH": "search_providers", "RESEARCH_AGENT_SEARXNG_URL": "searxng_url",
    "TAVILY_API_KEY": "tavily_api_key", "RESEARCH_AGENT_PRICES": "price_table",
    "RESEARCH_AGENT_CACHE_DIR": "cache_dir", "RESEARCH_AGENT_STATE_DIR": "state_dir",
    "MIN_VIABILITY_SCORE": "min_viability", "MAX_PLANNING_ITERATIONS": "max_plans", "MAX_REVISIONS": "max_revisions",
    "RESEARCH_AGENT_MIN_VIABILITY": "min_viability", "RESEARCH_AGENT_MAX_PLANS": "max_plans",
    "RESEARCH_AGENT_MAX_REVISIONS": "max_revisions",
    "RESEARCH_AGENT_CHECK_CLAIMS": "check_claims", "RESEARCH_AGENT_MAILTO": "mailto",
    "OPENALEX_API_KEY": "openalex_api_key", "NCBI_API_KEY": "ncbi_api_key",
    "SEMANTIC_SCHOLAR_API_KEY": "semanticscholar_api_key", "RESEARCH_AGENT_WIKIPEDIA_LANGUAGE": "wikipedia_language",
    **{f"RESEARCH_AGENT_{name.upper()}_URL": f"{name}_url" for name in ("openalex", "arxiv", "pubmed", "pmc", "semanticscholar", "wikipedia")},
}  # fmt: skip

# Unprefixed names kept for compatibility (another tool may have left one set): never fatal.
LEGACY_ENV_VARS = frozenset({"MIN_VIABILITY_SCORE", "MAX_PLANNING_ITERATIONS", "MAX_REVISIONS"})

_FIELD_TYPES = {f.name: f.type for f in fields(Settings)}
# Fields that hold a key: never in a repr, a log line or a record.
SECRET_FIELDS = frozenset(f.name for f in fields(Settings) if not f.repr)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _real(name: str, value: Any) -> float:
    """A float setting from a flag, the environment or TOML: finite, or ConfigError."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigError(f"setting {name}: expected a number, not {_shown(value)}")
    try:
        number = float(value.strip()) if isinstance(value, str) else float(value)
    except (ValueError, OverflowError):
        raise ConfigError(f"setting {name}: {_shown(value)} is not a number") from None
    if not math.isfinite(number):
        raise ConfigError(f"setting {name}: {_shown(value)} is not a finite number")
    return number


def _whole(name: str, value: Any) -> int:
    """An int setting: a whole, finite number (``1e400``, ``2.5`` and ``true`` are refused)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    number = _real(name, value)
    if not number.is_integer():
        raise ConfigError(f"setting {name}: {_shown(value)} is not a whole number")
    return int(number)


def _coerce_text(name: str, kind: str, value: Any) -> Any:
    """Path, tuple and plain-text settings; anything but text (or a list of text) is refused."""
    items = value if isinstance(value, list | tuple) and kind.startswith("tuple") else [value]
    if not all(isinstance(v, str | Path) for v in items):
        raise ConfigError(f"setting {name}: expected text, not {_shown(value)}")
    if kind.startswith("tuple[Path"):
        items = value.split(os.pathsep) if isinstance(value, str) else value
        return tuple(Path(v).expanduser() for v in items if str(v))
    if kind.startswith("tuple[str"):
        items = value.split(",") if isinstance(value, str) else value
        shown = (str(s).strip() for s in items if str(s).strip())
        return tuple(s if name == "corpus_exclude" else s.lower() for s in shown)  # paths keep their case
    if "Path" in kind:
        if isinstance(value, str) and value.lower() == "none" and name == "context_path":
            return None
        return Path(value).expanduser()
    return str(value)


def _coerce(name: str, value: Any) -> Any:
    """Turn a string or TOML value into the type of Settings.<name>; ConfigError if it cannot be."""
    kind = str(_FIELD_TYPES[name])
    if name == "mode":
        if isinstance(value, Mode):
            return value
        if not isinstance(value, str) or value not in MODES:
            raise ConfigError(f"unknown mode {_shown(value)}: choose one of {', '.join(MODES)}")
        return MODES[value]
    if value is None:
        return None
    if kind == "bool":
        if isinstance(value, str):
            return value.strip().lower() in {"1", "true", "yes", "on"}
        if not isinstance(value, bool | int):
            raise ConfigError(f"setting {name}: expected true or false, not {_shown(value)}")
        return bool(value)
    if kind.startswith("int"):
        return _whole(name, value)
    if kind == "float":
        return _real(name, value)
    return _coerce_text(name, kind, value)


MAX_CONFIG_BYTES = 1024 * 1024


def _read_config_file(path: Path, *, named: bool) -> dict[str, Any]:
    """The settings in a TOML config file: size-capped, nesting checked before parsing.

    A file the user ``named`` (``$RESEARCH_AGENT_CONFIG``) must be there and be a readable
    regular file: a missing one, a folder, a FIFO or a device is a ConfigError rather than
    settings silently not applied. The default path may be absent.
    """
    if not named and not (path.exists() or path.is_symlink()):
        return {}
    try:
        text = read_text_capped(path, max_bytes=MAX_CONFIG_BYTES, follow_symlinks=True)
        problem = nesting_problem(text, "toml")
        if problem is not None:
            raise ConfigError(f"config file {path}: {problem}")
        data = tomllib.loads(text)
    except UnsafeFile as exc:
        raise ConfigError(f"config file {path}: {exc}") from None
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        reason = one_line(exc) if isinstance(exc, tomllib.TOMLDecodeError) else "nested too deeply"
        raise ConfigError(f"config file {path}: {reason}") from None
    unknown = sorted(set(data) - set(_FIELD_TYPES))
    if unknown:
        raise ConfigError(f"config file {path}: unknown setting(s) {', '.join(_shown(k) for k in unknown)}")
    return data


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    """The settings the environment sets (:data:`ENV_VARS`); see :func:`_legacy` for the unprefixed names."""
    values: dict[str, Any] = {}
    named = {key for var, key in ENV_VARS.items() if env.get(var) and var not in LEGACY_ENV_VARS}
    for var, key in ENV_VARS.items():
        if var not in LEGACY_ENV_VARS and env.get(var):
            values[key] = _coerce(key, env[var])
        elif env.get(var) and key not in named and (value := _legacy(var, key, env[var])) is not None:
            values[key] = value  # the RESEARCH_AGENT_* name, when set, wins
    return values


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> Settings:
    """Resolve settings: ``overrides`` (flags; None values ignored) > env > file > defaults."""
    env = os.environ if env is None else env
    path = config_file if config_file is not None else default_config_path(env)
    values: dict[str, Any] = {}
    named = config_file is None and bool(env.get("RESEARCH_AGENT_CONFIG"))
    for key, value in _read_config_file(path, named=named).items():
        values[key] = _coerce(key, value)
    values.update(_from_env(env))
    if "cache_dir" not in values:
        values["cache_dir"] = default_cache_dir(env)
    if "state_dir" not in values:
        values["state_dir"] = default_state_dir(env)
    for key, value in (overrides or {}).items():
        if key not in _FIELD_TYPES:
            raise ConfigError(f"unknown setting {key!r}")
        if value is not None:
            values[key] = _coerce(key, value)
    return Settings(**values).validate()


_warned: set[tuple[str, str]] = set()


def _legacy(var: str, name: str, text: str) -> Any:
    """An unprefixed variable's value; None, with one warning a process, when it is no usable ``name``."""
    try:
        value = _coerce(name, text)
        problem = _number_problem(name, value, NUMBER_RANGES[name])
    except ConfigError as exc:
        problem = str(exc).removeprefix(f"setting {name}: ")
    if problem is not None and (var, text) not in _warned:
        _warned.add((var, text))
        log.warning("ignoring %s=%s (an older name of %s): %s", var, _shown(text), name, problem)
    return value if problem is None else None


SERVER_TOKEN_VARS = {"mcp": "RESEARCH_AGENT_MCP_TOKEN", "web": "RESEARCH_AGENT_WEB_TOKEN"}


def server_token(server: str, env: Mapping[str, str] | None = None) -> str:
    """The bearer token of ``server`` (mcp, web) from its variable in :data:`SERVER_TOKEN_VARS`
    ("" when unset): kept out of Settings, which runs print and pass around."""
    env = os.environ if env is None else env
    return env.get(SERVER_TOKEN_VARS[server], "").strip()
