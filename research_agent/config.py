"""Settings and mode presets.

Precedence is flags > environment > config file > defaults. This is the only module
that reads the environment; everything else receives a :class:`Settings`.

The config file is TOML, at ``$RESEARCH_AGENT_CONFIG`` or
``$XDG_CONFIG_HOME/research-agent/config.toml``; its keys are the field names of
:class:`Settings` (e.g. ``model = "gpt-4o-mini"``, ``min_viability = 60``).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["Mode", "MODES", "Settings", "load_settings", "default_cache_dir", "default_config_path"]


@dataclass(frozen=True)
class Mode:
    """A preset for how much work one run does."""

    name: str
    sub_queries: int  # how many sub-queries decompose asks for
    results_per_query: int  # search hits asked of each provider per sub-query
    sources_scored: int  # at most this many sources are fetched and scored
    target_words: int  # report length the writer aims for
    skeptic_lenses: tuple[str, ...]  # empty: no skeptic pass
    source_tokens: int  # passage budget per source handed to relevance/synthesis
    keep_score: int  # relevance score a source needs to survive
    full_min_sources: int  # gate: kept sources for a full report
    full_min_sites: int  # gate: distinct sites for a full report
    short_min_sources: int  # gate: kept sources for a short report

    @property
    def skeptic(self) -> bool:
        return bool(self.skeptic_lenses)


MODES: dict[str, Mode] = {
    "quick": Mode(
        name="quick",
        sub_queries=3,
        results_per_query=4,
        sources_scored=6,
        target_words=600,
        skeptic_lenses=(),
        source_tokens=350,
        keep_score=3,
        full_min_sources=3,
        full_min_sites=2,
        short_min_sources=1,
    ),
    "standard": Mode(
        name="standard",
        sub_queries=4,
        results_per_query=6,
        sources_scored=12,
        target_words=1200,
        skeptic_lenses=("evidence", "counterarguments", "scope"),
        source_tokens=450,
        keep_score=3,
        full_min_sources=4,
        full_min_sites=2,
        short_min_sources=2,
    ),
    "deep": Mode(
        name="deep",
        sub_queries=6,
        results_per_query=8,
        sources_scored=20,
        target_words=2500,
        skeptic_lenses=("evidence", "counterarguments", "scope", "recency", "bias"),
        source_tokens=600,
        keep_score=3,
        full_min_sources=6,
        full_min_sites=3,
        short_min_sources=3,
    ),
}


def _xdg(env: Mapping[str, str], var: str, fallback: str) -> Path:
    base = env.get(var) or str(Path.home() / fallback)
    return Path(base) / "research-agent"


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("RESEARCH_AGENT_CACHE_DIR"):
        return Path(env["RESEARCH_AGENT_CACHE_DIR"])
    return _xdg(env, "XDG_CACHE_HOME", ".cache")


def default_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("RESEARCH_AGENT_CONFIG"):
        return Path(env["RESEARCH_AGENT_CONFIG"])
    return _xdg(env, "XDG_CONFIG_HOME", ".config") / "config.toml"


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to know, resolved once."""

    # LLM
    model: str = "gpt-4o-mini"
    fast_model: str = ""  # empty: same as model
    api_key: str = ""
    base_url: str = ""
    llm_timeout: float = 180.0  # per model call: a slow CPU server still finishes a long draft
    llm_max_retries: int = 4
    llm_concurrency: int = 16
    price_table: Path | None = None

    # the run
    mode: Mode = MODES["standard"]
    reports_dir: Path = Path("reports")
    output: Path | None = None
    context_path: Path | None = Path("research_context.md")
    run_timeout: float = 1800.0

    # sources
    corpus_dirs: tuple[Path, ...] = ()
    search_providers: tuple[str, ...] = ()  # empty: local if corpus given, else ddgs
    searxng_url: str = ""
    tavily_api_key: str = ""
    max_sources: int | None = None
    cache_dir: Path = field(default_factory=default_cache_dir)
    use_cache: bool = True
    cache_ttl: float = 24 * 3600.0
    allow_private: bool = False
    respect_robots: bool = True
    fetch_concurrency: int = 8
    fetch_per_host: int = 2
    fetch_timeout: float = 20.0
    max_page_bytes: int = 5 * 1024 * 1024

    # review and retry
    min_viability: int = 51
    max_plans: int = 3
    max_revisions: int = 2
    retry: bool = True
    rules_path: Path | None = None

    # memory
    critique: bool = True
    wait_critique: bool = False
    lessons: bool = True
    control_fraction: float = 0.2
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
        return dataclasses.replace(self, **changes)

    def validate(self) -> Settings:
        """Raise ConfigError for values no run could use; return self."""
        problems = []
        if not 0 <= self.min_viability <= 100:
            problems.append("min_viability must be between 0 and 100")
        if not 1 <= self.max_plans <= 10:
            problems.append("max_plans must be between 1 and 10")
        if not 0 <= self.max_revisions <= 10:
            problems.append("max_revisions must be between 0 and 10")
        if self.max_sources is not None and not 1 <= self.max_sources <= 200:
            problems.append("max_sources must be between 1 and 200")
        if not 0.0 <= self.control_fraction <= 1.0:
            problems.append("control_fraction must be between 0 and 1")
        if self.llm_timeout <= 0 or self.run_timeout <= 0 or self.fetch_timeout <= 0:
            problems.append("timeouts must be positive")
        if self.max_critiques < 0:
            problems.append("max_critiques must be 0 (no limit) or more")
        if problems:
            raise ConfigError("; ".join(problems))
        return self


# Environment variables and the settings they set. OPENAI_* follow the ecosystem's names.
ENV_VARS: dict[str, str] = {
    "OPENAI_API_KEY": "api_key",
    "OPENAI_BASE_URL": "base_url",
    "RESEARCH_AGENT_MODEL": "model",
    "RESEARCH_AGENT_FAST_MODEL": "fast_model",
    "RESEARCH_AGENT_REPORTS_DIR": "reports_dir",
    "RESEARCH_AGENT_MODE": "mode",
    "RESEARCH_AGENT_TIMEOUT": "run_timeout",
    "RESEARCH_AGENT_LLM_TIMEOUT": "llm_timeout",
    "RESEARCH_AGENT_SEARCH": "search_providers",
    "RESEARCH_AGENT_SEARXNG_URL": "searxng_url",
    "TAVILY_API_KEY": "tavily_api_key",
    "RESEARCH_AGENT_PRICES": "price_table",
    "RESEARCH_AGENT_CACHE_DIR": "cache_dir",
    "MIN_VIABILITY_SCORE": "min_viability",
    "MAX_PLANNING_ITERATIONS": "max_plans",
    "MAX_REVISIONS": "max_revisions",
}

_FIELD_TYPES = {f.name: f.type for f in fields(Settings)}


def _coerce(name: str, value: Any) -> Any:
    """Turn a string or TOML value into the type of Settings.<name>."""
    kind = str(_FIELD_TYPES[name])
    try:
        if name == "mode":
            if isinstance(value, Mode):
                return value
            if value not in MODES:
                raise ConfigError(f"unknown mode {value!r}: choose one of {', '.join(MODES)}")
            return MODES[value]
        if value is None:
            return None
        if kind.startswith("tuple[Path"):
            items = value.split(os.pathsep) if isinstance(value, str) else value
            return tuple(Path(v).expanduser() for v in items if str(v))
        if kind.startswith("tuple[str"):
            items = value.split(",") if isinstance(value, str) else value
            return tuple(s.strip().lower() for s in items if s.strip())
        if "Path" in kind:
            if isinstance(value, str) and value.lower() == "none" and name == "context_path":
                return None
            return Path(value).expanduser()
        if kind == "bool":
            if isinstance(value, str):
                return value.strip().lower() in {"1", "true", "yes", "on"}
            return bool(value)
        if kind.startswith("int"):
            return int(value)
        if kind == "float":
            return float(value)
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {name}: cannot use {value!r} ({exc})") from None


def _read_config_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"config file {path}: {exc}") from None
    unknown = sorted(set(data) - set(_FIELD_TYPES))
    if unknown:
        raise ConfigError(f"config file {path}: unknown setting(s) {', '.join(unknown)}")
    return data


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
    for key, value in _read_config_file(path).items():
        values[key] = _coerce(key, value)
    for var, key in ENV_VARS.items():
        if env.get(var):
            values[key] = _coerce(key, env[var])
    if "cache_dir" not in values:
        values["cache_dir"] = default_cache_dir(env)
    for key, value in (overrides or {}).items():
        if key not in _FIELD_TYPES:
            raise ConfigError(f"unknown setting {key!r}")
        if value is not None:
            values[key] = _coerce(key, value)
    return Settings(**values).validate()
