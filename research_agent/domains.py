"""The fixed taxonomy of query domains. Lessons are only shared within a domain."""

from __future__ import annotations

from .errors import InputError

__all__ = ["DOMAINS", "DEFAULT_DOMAIN", "normalize_domain", "parse_domain"]

DOMAINS: tuple[str, ...] = (
    "technology",
    "science",
    "health",
    "business",
    "economics",
    "policy_law",
    "environment",
    "history_culture",
    "education",
    "other",
)
DEFAULT_DOMAIN = "other"


def normalize_domain(value: object) -> str:
    """Map anything to a member of DOMAINS (unknown values become ``other``)."""
    text = str(value or "").strip().lower().replace(" ", "_").replace("-", "_")
    return text if text in DOMAINS else DEFAULT_DOMAIN


def parse_domain(value: str) -> str:
    """A domain a person or a caller named (``policy-law`` -> ``policy_law``); InputError if unknown."""
    chosen = value.strip().lower().replace("-", "_").replace(" ", "_")
    if chosen not in DOMAINS:
        raise InputError(f"unknown domain {value[:40]!r}: choose one of {', '.join(DOMAINS)}")
    return chosen
