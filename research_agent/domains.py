"""The fixed taxonomy of query domains. Lessons are only shared within a domain."""

from __future__ import annotations

__all__ = ["DOMAINS", "DEFAULT_DOMAIN", "normalize_domain"]

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
