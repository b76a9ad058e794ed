"""The skeptic: structured findings against a draft and a viability score."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from .. import prompts
from ..errors import LLMError
from ..llm import ChatModel, ChatRequest
from ..sources import Source
from ..text.sanitize import sanitize, wrap_data
from ._fallback import Notify, degraded_message, degrades
from ._schema import array, enum, integer, nullable, number, obj, string
from ._skeptic_input import cited_block, draft_for_review

__all__ = ["SkepticFinding", "SkepticReport", "run_skeptic", "SCHEMA", "LENSES", "DEADLINE_BEFORE_SKEPTIC"]

# A bound on the answer: a grammar-constrained local server can otherwise generate whitespace
# until its context is full. Generous, so a reasoning model's thinking still fits.
MAX_ANSWER_TOKENS = 4000

LENSES = ("evidence", "counterarguments", "scope", "recency", "bias")
# Why a report published at the run's deadline has no adversarial analysis (SkepticReport.unavailable).
DEADLINE_BEFORE_SKEPTIC = "the run reached its deadline before the skeptic answered"
FindingSeverity = Literal["observation", "concern", "critical"]

SCHEMA = obj(
    findings=array(
        obj(
            lens=enum(*LENSES),
            severity=enum("observation", "concern", "critical"),
            claim=string(600),
            reason=string(600),
            fix=string(600),
            confidence=number(),
        ),
        max_items=20,
    ),
    viability=nullable(integer()),
)


@dataclass(frozen=True)
class SkepticFinding:
    lens: str
    severity: FindingSeverity
    claim: str
    reason: str
    fix: str
    confidence: float

    def as_dict(self) -> dict:
        return {
            "lens": self.lens,
            "severity": self.severity,
            "claim": self.claim,
            "reason": self.reason,
            "fix": self.fix,
            "confidence": self.confidence,
        }


@dataclass(frozen=True)
class SkepticReport:
    """``viability`` is None when the model gave none (unscored: never a reason to replan).

    ``unavailable`` says why there is no adversarial analysis at all: the skeptic's answers
    could not be read. Such a report has no findings and no viability, so it triggers
    neither a replan nor a revision.
    """

    findings: tuple[SkepticFinding, ...]
    viability: int | None
    viability_note: str = ""
    unavailable: str = ""

    @property
    def critical(self) -> tuple[SkepticFinding, ...]:
        return tuple(f for f in self.findings if f.severity == "critical")


def _distinct(findings: Iterable[SkepticFinding]) -> tuple[SkepticFinding, ...]:
    """The findings without repeats: a model that loops says the same thing once."""
    seen: set[tuple[str, ...]] = set()
    kept = []
    for finding in findings:
        key = tuple(" ".join(part.split()).lower() for part in (finding.severity, finding.claim, finding.reason))
        if key not in seen:
            seen.add(key)
            kept.append(finding)
    return tuple(kept)


def _clean(text: object, limit: int = 600) -> str:
    return sanitize(str(text), max_chars=limit, single_line=True)


async def run_skeptic(
    model: ChatModel,
    query: str,
    draft_markdown: str,
    sources: tuple[Source, ...],
    *,
    lenses: tuple[str, ...],
    source_tokens: int,
    cited_tokens: int,
    notify: Notify | None = None,
) -> SkepticReport:
    """Attack the draft through ``lenses`` in one call; clamp and normalise what comes back
    (repeated findings are kept once).

    The skeptic reads what the writer wrote (:func:`draft_for_review`) and, of the
    sources, only the passages the draft cites, within ``cited_tokens``
    (:func:`cited_block`; ``source_tokens`` is what the writer read of each source).
    When the model gives nothing usable (invalid answers, a timeout, an unreadable or
    failing endpoint), the result has no findings and says why in ``unavailable``
    (announced through ``notify``)."""
    review = draft_for_review(draft_markdown)
    evidence = cited_block(review, sources, source_tokens=source_tokens, cited_tokens=cited_tokens)
    prompt = prompts.render(
        "skeptic",
        query=query,
        lenses=", ".join(lenses),
        draft=wrap_data("draft", sanitize(review, max_chars=40000)),
        coverage=evidence.coverage,
        sources=evidence.block,
    )
    request = ChatRequest(stage="skeptic", system=prompt.system, user=prompt.user, schema=SCHEMA, temperature=0.0,
                          max_tokens=MAX_ANSWER_TOKENS)
    try:
        response = await model.complete(request)
    except LLMError as exc:
        if not degrades(exc):
            raise
        message = degraded_message(exc, "the report goes out without adversarial findings", notify)
        return SkepticReport((), None, unavailable=message)
    findings = _distinct(
        SkepticFinding(
            lens=f["lens"],
            severity=f["severity"],
            claim=_clean(f["claim"]),
            reason=_clean(f["reason"]),
            fix=_clean(f["fix"]),
            confidence=min(1.0, max(0.0, float(f["confidence"]))),
        )
        for f in response.data["findings"]
    )
    raw = response.data.get("viability")
    if raw is None:
        return SkepticReport(findings, None, "unscored: the skeptic gave no viability score")
    viability = int(raw)
    if not 0 <= viability <= 100:
        clamped = min(100, max(0, viability))
        return SkepticReport(findings, clamped, f"viability {viability} out of range, clamped to {clamped}")
    return SkepticReport(findings, viability)
