"""A run's settings as its journal entry keeps them, and the settings a resume runs with again.

Every setting is kept but the secrets (:data:`research_agent.config.SECRET_FIELDS`: keys come from
the environment of the process that resumes, and so does the endpoint's address, which is kept
but not restored: a server that moved serves the same model); paths are kept absolute, so a resume started in
another folder reads the same corpus, context and rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from ..config import SECRET_FIELDS, Settings, load_settings
from ..errors import ConfigError, InputError
from ..modes import Mode

__all__ = ["snapshot", "restored"]

CONNECTION = frozenset({"base_url"})  # where the model is reached: the resuming process's own


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value.absolute())
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mode):  # a preset: its name
        return value.name
    return value


def snapshot(settings: Settings) -> dict[str, Any]:
    """``settings`` as JSON-ready values, secrets left out; the default context file only when it
    is there (a run without one is resumed without one, wherever the resume starts)."""
    kept = {f.name: _plain(getattr(settings, f.name)) for f in fields(settings) if f.name not in SECRET_FIELDS}
    if settings.context_path is not None and not Path(settings.context_path).is_file():
        kept["context_path"] = None
    return kept


def restored(
    kept: Mapping[str, Any], *, reports_dir: Path, load: Callable[[dict[str, Any]], Settings] = load_settings
) -> Settings:
    """The settings of the run whose entry kept ``kept``, its reports in ``reports_dir`` (where its
    journal was found), keys and endpoint as ``load`` gives them (by default, from the environment and
    the config file; a server: its own); InputError when they no longer make settings."""
    known = {f.name for f in fields(Settings)} - SECRET_FIELDS - CONNECTION
    given = {k: v for k, v in kept.items() if k in known and v is not None}
    try:
        settings = load(given)
    except ConfigError as exc:
        raise InputError(f"the run's settings cannot be used again: {exc}") from None
    unset = {k: None for k, v in kept.items() if k in known and v is None}
    return settings.replace(**unset, reports_dir=Path(reports_dir))
