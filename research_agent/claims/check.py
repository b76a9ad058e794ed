"""What a run's claim check found, and how the report, the record and the critique say it.

:class:`ClaimCheck` holds the verdicts on the cited sentences of the draft the skeptic
read (and, for each unsupported one, what became of it after the last revision), or why
no claim was checked. It gives the line that ends the report's Limitations, the
critique's ``facts.claims`` (:class:`~research_agent.measures.ClaimFacts`) and the run
record's ``claim_check:`` block.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..measures import ClaimFacts
from .verdicts import ClaimOutcome, ClaimVerdict

__all__ = ["ClaimCheck", "lexical_only"]


def lexical_only(mode: str) -> str:
    """Why a mode without a skeptic (``quick``) checks no claim."""
    return f"the {mode} mode checks citations lexically only"


@dataclass(frozen=True)
class ClaimCheck:
    """``cited``: cited sentences in the draft checked; ``verdicts`` on those checked; ``skipped``:
    why none was (empty when the check ran); ``not_checked``: why some were left out, when that
    is more than not being chosen (e.g. one of the calls failed)."""

    cited: int
    verdicts: tuple[ClaimVerdict, ...] = ()
    skipped: str = ""
    not_checked: str = ""

    @classmethod
    def not_run(cls, reason: str, cited: int = 0) -> ClaimCheck:
        return cls(cited, (), skipped=reason or "no reason given")

    def _count(self, verdict: str) -> int:
        return sum(1 for v in self.verdicts if v.verdict == verdict)

    @property
    def checked(self) -> int:
        return len(self.verdicts)

    @property
    def unsupported(self) -> tuple[ClaimVerdict, ...]:
        return tuple(v for v in self.verdicts if v.verdict == "unsupported")

    def facts(self) -> ClaimFacts:
        """The critique's ``facts.claims``: ``unsupported_share`` None when nothing was checked."""
        unsupported = self._count("unsupported")
        share = round(unsupported / self.checked, 2) if self.checked else None
        return ClaimFacts(self.checked, self._count("supported"), self._count("partial"), unsupported, share)

    def limitations_line(self) -> str:
        """The line that ends the report's Limitations."""
        if self.skipped:
            return f"Claims not checked: {self.skipped.rstrip('.')}."
        if not self.checked:
            return f"Claims not checked: {self.not_checked or 'no verdict came back'}."
        outcomes = [v.outcome for v in self.unsupported]
        parts = [f"{self._count('supported')} supported", f"{self._count('partial')} partly",
                 f"{outcomes.count('disputed')} marked disputed", f"{outcomes.count('removed')} removed in revision"]  # fmt: skip
        if outcomes.count("recited"):
            parts.append(f"{outcomes.count('recited')} rewritten to cite other sources")
        open_claims = len(outcomes) - sum(outcomes.count(o) for o in ("disputed", "removed", "recited"))
        if open_claims:
            parts.append(f"{open_claims} unsupported")
        line = f"Claims checked against their sources: {self.checked} of {self.cited} cited sentences; "
        line += ", ".join(parts) + "."
        return line + (f" Some were not checked: {self.not_checked.rstrip('.')}." if self.not_checked else "")

    def with_outcomes(self, outcomes: Mapping[int, ClaimOutcome]) -> ClaimCheck:
        """The check with each unsupported claim's outcome after the last revision."""
        verdicts = tuple(
            v.with_outcome(outcomes.get(v.number, v.outcome)) if v.verdict == "unsupported" else v
            for v in self.verdicts
        )
        return replace(self, verdicts=verdicts)

    def renumbered(self, source_of: Callable[[int], tuple[int | None, str]]) -> ClaimCheck:
        """The check with sources in the final report's numbering: ``source_of(n)`` gives the
        final number (None when no longer cited) and the address of the draft's source ``n``."""

        def moved(v: ClaimVerdict) -> ClaimVerdict:
            final, location = source_of(v.source) if v.source is not None else (None, "")
            numbers = tuple(n for n in (source_of(s)[0] for s in v.sources) if n is not None)
            return replace(v, source=final, location=location, sources=numbers)

        return replace(self, verdicts=tuple(moved(v) for v in self.verdicts))

    def as_dict(self) -> dict[str, Any]:
        """The run record's ``claim_check:`` block."""
        return {
            "cited": self.cited,
            "checked": self.checked,
            "skipped": self.skipped,
            "not_checked": self.not_checked,
            "verdicts": [v.as_dict() for v in self.verdicts],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClaimCheck:
        """From a run record's block (checked by the record's schema)."""
        return cls(
            cited=int(data.get("cited", 0)),
            verdicts=tuple(ClaimVerdict.from_dict(v) for v in data.get("verdicts", ())),
            skipped=str(data.get("skipped", "")),
            not_checked=str(data.get("not_checked", "")),
        )
