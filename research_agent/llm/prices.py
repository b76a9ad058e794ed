"""Model prices, for the cost estimate of a run.

A :class:`PriceTable` maps model names to USD per one million input (prompt) and output
(completion) tokens. Names match exactly first, then by the longest known prefix, so
``gpt-4o-mini-2024-07-18`` costs what ``gpt-4o-mini`` costs; an OpenRouter-style
``openai/gpt-4o`` is looked up without its ``provider/`` part too. Models the table does
not know (local models, most of all) have an unknown cost: :meth:`PriceTable.cost` returns
None, never 0, and the run says "cost unknown".

Users extend the built-in table with a TOML or JSON file (``RESEARCH_AGENT_PRICES`` or the
``price_table`` setting)::

    "my-model" = { input = 0.15, output = 0.6 }
    [gpt-4o]
    input = 2.0
    output = 8.0
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import ConfigError
from ..files.nesting import nesting_problem
from ..files.safefile import UnsafeFile, read_text_capped

__all__ = ["Price", "PriceTable", "DEFAULT_PRICES"]


@dataclass(frozen=True)
class Price:
    """USD per one million tokens."""

    input: float
    output: float


# Approximate list prices in USD per 1M tokens, as published by OpenAI when this table was
# written. They change; users who need exact numbers override them with a price file.
DEFAULT_PRICES: Mapping[str, Price] = MappingProxyType(
    {
        "gpt-4o": Price(2.50, 10.00),
        "gpt-4o-mini": Price(0.15, 0.60),
        "gpt-4.1": Price(2.00, 8.00),
        "gpt-4.1-mini": Price(0.40, 1.60),
        "gpt-4.1-nano": Price(0.10, 0.40),
        "o3": Price(2.00, 8.00),
        "o3-mini": Price(1.10, 4.40),
        "o4-mini": Price(1.10, 4.40),
        "gpt-5": Price(1.25, 10.00),
        "gpt-5-mini": Price(0.25, 2.00),
        "gpt-5-nano": Price(0.05, 0.40),
    }
)

_MAX_FILE_BYTES = 1024 * 1024
_MAX_PRICE = 1_000_000.0  # USD per 1M tokens; nan and inf fail the range check too


@dataclass(frozen=True)
class PriceTable:
    """An immutable model -> :class:`Price` table with prefix matching."""

    prices: Mapping[str, Price] = field(default_factory=lambda: DEFAULT_PRICES)

    def __post_init__(self) -> None:
        frozen = MappingProxyType({name.lower(): price for name, price in self.prices.items()})
        object.__setattr__(self, "prices", frozen)

    @classmethod
    def default(cls) -> PriceTable:
        """The built-in table."""
        return cls(DEFAULT_PRICES)

    @classmethod
    def load(cls, path: Path | str, *, base: PriceTable | None = None) -> PriceTable:
        """The ``base`` table (default: built-in) extended and overridden by a TOML/JSON file.

        Raises ConfigError naming the file when it cannot be read or has a bad entry.
        """
        path = Path(path)
        base = base if base is not None else cls.default()
        data = _read_table(path)
        if not isinstance(data, dict):
            raise ConfigError(f"price table {path}: expected a table of models, got {type(data).__name__}")
        merged = dict(base.prices)
        for name, entry in data.items():
            merged[str(name).lower()] = _parse_entry(path, str(name), entry)
        return cls(merged)

    def lookup(self, model: str) -> Price | None:
        """The price of ``model``: exact name, then longest known prefix; None if unknown."""
        for name in _candidates(model):
            price = self.prices.get(name)
            if price is not None:
                return price
            best = max((p for p in self.prices if name.startswith(p)), key=len, default=None)
            if best is not None:
                return self.prices[best]
        return None

    def known(self, model: str) -> bool:
        """Whether the table has a price for ``model``."""
        return self.lookup(model) is not None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Estimated USD for one call's tokens; None when the price of ``model`` is unknown."""
        price = self.lookup(model)
        if price is None:
            return None
        return (prompt_tokens * price.input + completion_tokens * price.output) / 1_000_000


def _read_table(path: Path) -> Any:
    """The parsed price file: a regular file of at most 1 MB, nesting checked before parsing."""
    kind = "json" if path.suffix.lower() == ".json" else "toml"
    try:
        raw = read_text_capped(path, max_bytes=_MAX_FILE_BYTES, follow_symlinks=True)
    except UnsafeFile as exc:
        raise ConfigError(f"price table {path}: {exc}") from None
    problem = nesting_problem(raw, kind)
    if problem is not None:
        raise ConfigError(f"price table {path}: {problem}")
    try:
        return json.loads(raw) if kind == "json" else tomllib.loads(raw)
    except RecursionError:
        raise ConfigError(f"price table {path}: nested too deeply") from None
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError
        raise ConfigError(f"price table {path}: {' '.join(str(exc).split())}") from None


def _candidates(model: str) -> list[str]:
    name = model.strip().lower()
    names = [name]
    if "/" in name:
        names.append(name.rsplit("/", 1)[1])
    return [n for n in names if n]


def _parse_entry(path: Path, name: str, entry: Any) -> Price:
    if not isinstance(entry, dict):
        raise ConfigError(
            f"price table {path}: entry {name!r} must be a table like {{input = 0.15, output = 0.6}}"
        )
    unknown = sorted(set(entry) - {"input", "output"})
    if unknown:
        raise ConfigError(f"price table {path}: entry {name!r} has unknown key(s) {', '.join(unknown)}")
    values = []
    for key in ("input", "output"):
        value = entry.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= _MAX_PRICE:
            raise ConfigError(
                f"price table {path}: entry {name[:80]!r} needs a non-negative number for {key!r} "
                f"(USD per 1M tokens: finite, at most {_MAX_PRICE:,.0f})"
            )
        values.append(float(value))
    return Price(values[0], values[1])
