"""The issue object every critic of a draft produces."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..shapes import Plain

__all__ = ["Issue", "Severity", "Origin"]

Severity = Literal["critical", "warning"]
Origin = Literal["lint", "skeptic"]


@dataclass(frozen=True)
class Issue(Plain):
    """One problem in a draft. ``line`` is 1-based in the draft markdown, None if unknown."""

    type: str
    severity: Severity
    line: int | None
    matched: str
    reason: str
    fix: str
    origin: Origin
    confidence: float = 1.0

    @property
    def critical(self) -> bool:
        return self.severity == "critical"
