"""What each lesson should move (its *target*), and how a target is read off one critique.

A target is a dimension score (``scores.coverage``), the mean of the applicable scores
(``mean_score``), or a measured fact (``facts.unanswered``,
``facts.citations.weakly_supported_share``). Each has a
direction: for a fact such as unanswered sub-queries lower is better, and effects flip
its difference so that a positive delta always means the lesson helped. A target that
does not apply to a critique (a null ``geographic_balance``, a version-1 file without
facts, a run whose sources carried no date) reads as None and is left out of the means.

Every built lesson key maps to exactly one target, from its kind (``site:kept:...``) or the
whole key (``coverage:unanswered``), so a critique need not store it. A lesson a person
wrote or approved (``user:``, ``approved:``) takes its stage and target from its entry in
``lessons.yaml``; :data:`PERSON_TARGET` (``mean_score``) is the target when the entry names
none, or when the entry is not at hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...measures import CritiqueFacts
from .critique_types import Critique
from .schema import DIMENSION_LABELS, DIMENSIONS, KIND_STAGES, PERSON_KINDS, key_kind

__all__ = ["Target", "TARGETS", "PERSON_TARGET", "target_of", "stage_of", "is_person_key", "measure", "TARGET_MAP"]


@dataclass(frozen=True)
class Target:
    """One target: its name, the words for it, whether lower is better, its reader, and the
    step its values move in (1 for a score or a count, 0.2 for a mean of five scores): the
    least spread an arm of them is granted (no interval of zero width)."""

    name: str
    label: str
    lower_is_better: bool
    read: Callable[[Critique], float | None]
    step: float = 1.0


def _score(dimension: str) -> Callable[[Critique], float | None]:
    def read(critique: Critique) -> float | None:
        value = critique.scores.get(dimension)
        return None if value is None else float(value)

    return read


def _fact(pick: Callable[[CritiqueFacts], float | int | None]) -> Callable[[Critique], float | None]:
    def read(critique: Critique) -> float | None:
        if critique.facts is None:
            return None
        value = pick(critique.facts)
        return None if value is None else float(value)

    return read


_FACTS = (
    Target("facts.unanswered", "unanswered sub-queries", True, _fact(lambda f: f.open_sub_queries)),
    Target(
        "facts.citations.weakly_supported_share",
        "weakly supported share",
        True,
        _fact(lambda f: f.citations.weakly_supported_share if f.citations.sentences else None),
        0.05,  # one sentence in twenty
    ),
    Target("facts.sites.distinct", "distinct sites", False, _fact(lambda f: f.sites.distinct)),
    Target("facts.sources.kept", "kept sources", False, _fact(lambda f: f.sources.kept)),
    Target(
        "facts.recency.median_age_days",
        "median source age (days)",
        True,
        _fact(lambda f: f.recency.median_age_days),
    ),
)
PERSON_TARGET = "mean_score"
TARGETS: dict[str, Target] = {
    PERSON_TARGET: Target(PERSON_TARGET, "mean score", False, lambda critique: critique.scores.mean, 0.2),
    **{f"scores.{d}": Target(f"scores.{d}", DIMENSION_LABELS[d], False, _score(d)) for d in DIMENSIONS},
    **{t.name: t for t in _FACTS},
}

# Whole keys with a target of their own; every other key takes its kind's target.
_KEY_TARGETS = {
    "coverage:unanswered": "facts.unanswered",
    "breadth:few-sources": "facts.sources.kept",
    "primary:practical": "scores.actionability",
    "primary:actionability": "scores.actionability",  # the interim key of the menu lessons
}
_KIND_TARGETS = {
    "coverage": "scores.coverage",
    "breadth": "facts.sites.distinct",
    "geography": "scores.geographic_balance",
    "counterarguments": "scores.coverage",
    "recency": "facts.recency.median_age_days",
    "primary": "scores.claim_support",
    "site:kept": "facts.citations.weakly_supported_share",
    "site:dropped": "facts.citations.weakly_supported_share",
    "source-kind": "facts.citations.weakly_supported_share",
}


# Which target each key reads, as text: the summary index is rebuilt when this changes.
TARGET_MAP = repr(sorted(_KEY_TARGETS.items())) + repr(sorted(_KIND_TARGETS.items())) + PERSON_TARGET


def is_person_key(key: str) -> bool:
    """Whether ``key`` names a lesson a person wrote or approved (``user:``, ``approved:``)."""
    return key_kind(key) in PERSON_KINDS


def target_of(key: str) -> str:
    """The target of lesson ``key`` (ValueError when ``key`` is not a lesson key); for a
    person's lesson, :data:`PERSON_TARGET` (its entry may name another)."""
    kind = key_kind(key)
    if kind is None:
        raise ValueError(f"not a lesson key: {key[:120]!r}")
    if kind in PERSON_KINDS:
        return PERSON_TARGET
    return _KEY_TARGETS.get(key, _KIND_TARGETS[kind])


def stage_of(key: str) -> str:
    """The stage built lesson ``key`` is written for (ValueError when ``key`` is not a lesson
    key, or is a person's lesson, whose stage only its entry knows)."""
    kind = key_kind(key)
    if kind is None:
        raise ValueError(f"not a lesson key: {key[:120]!r}")
    if kind in PERSON_KINDS:
        raise ValueError(f"the stage of {key[:120]!r} comes from its entry in lessons.yaml")
    return KIND_STAGES[kind]


def measure(critique: Critique, target: str) -> float | None:
    """The value of ``target`` in ``critique``; None when it does not apply there."""
    return TARGETS[target].read(critique)
