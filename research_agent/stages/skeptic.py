"""The skeptic: structured findings against a draft and a viability score."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from .. import prompts
from ..claims import CitedClaim, ClaimCheck, ClaimVerdict, read_verdicts
from ..errors import LLMError
from ..llm import ChatModel, ChatRequest
from ..review.review import read_viability
from ..shapes import Plain
from ..sources import Source
from ..text.controls import one_line
from ..text.debris import says_nothing
from ..text.sanitize import sanitize, wrap_data
from ._fallback import Notify, degraded_message, degrades
from ._schema import array, enum, integer, nullable, number, obj, string
from ._skeptic_input import cited_block, draft_for_review, draft_view
from .claim_check import answer_tokens, claims_prompt, with_claims

__all__ = [
    "SkepticFinding",
    "SkepticReport",
    "is_debris",
    "run_skeptic",
    "claim_findings",
    "with_claim_findings",
    "SCHEMA",
    "LENSES",
    "DEADLINE_BEFORE_SKEPTIC",
]

# A bound on the answer: a grammar-constrained local server can otherwise generate whitespace
# until its context is full. Generous, so a reasoning model's thinking still fits.
MAX_ANSWER_TOKENS = 4000

LENSES = ("evidence", "counterarguments", "scope", "recency", "bias")
LENS_RULES = {  # what each lens looks for, in the prompt of a skeptic that attacks through it
    "evidence": "claims the cited passages do not support, or that lack a citation",
    "counterarguments": "important opposing views or evidence the draft ignores",
    "scope": "overgeneralisation, answering a different question, missing parts of the question",
    "recency": "outdated information presented as current",
    "bias": "one-sided sourcing, promotional sources taken at face value",
}
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
class SkepticFinding(Plain):
    lens: str
    severity: FindingSeverity
    claim: str
    reason: str
    fix: str
    confidence: float


@dataclass(frozen=True)
class SkepticReport:
    """``viability`` is None when the model gave none (unscored: never a reason to replan).

    ``unavailable`` says why there is no adversarial analysis at all: the skeptic's answers
    could not be read. Such a report has no findings and no viability, so it triggers
    neither a replan nor a revision. ``verdicts``: its verdicts on the cited sentences it
    was asked to check (:mod:`research_agent.claims`), quotes checked. ``unfounded``: the run
    set the viability aside, a score below the bar with no finding behind it
    (:func:`research_agent.run.replan.unfounded`). ``unusable``: the viability the skeptic gave
    when it was no whole number from 0 to 100 (``viability`` is then None: unscored).
    ``said``: the skeptic's own score, when the one shown is held lower while critical
    issues stay open. ``dropped``: findings whose claim or reason was debris, left out.
    """

    findings: tuple[SkepticFinding, ...]
    viability: int | None
    viability_note: str = ""
    unavailable: str = ""
    verdicts: tuple[ClaimVerdict, ...] = ()
    unfounded: bool = False
    unusable: str = ""
    said: int | None = None
    dropped: int = 0

    @property
    def critical(self) -> tuple[SkepticFinding, ...]:
        return tuple(f for f in self.findings if f.severity == "critical")


def _evidence(
    review: str, sources: tuple[Source, ...], *, source_tokens: int, cited_tokens: int, claims: Sequence[CitedClaim]
) -> str:
    """The cited passages within ``cited_tokens``, under their heading; none beside a claim list,
    whose passages take their place (the list may use their budget too)."""
    if claims:
        return ""
    evidence = cited_block(review, sources, source_tokens=source_tokens, cited_tokens=cited_tokens)
    return f"\n\nCited passages ({evidence.coverage}):\n{evidence.block}"


def _distinct(findings: Iterable[SkepticFinding]) -> tuple[SkepticFinding, ...]:
    """The findings without repeats: a model that loops says the same thing once."""
    seen: set[tuple[str, ...]] = set()
    kept = []
    for finding in findings:
        key = tuple(one_line(part).lower() for part in (finding.severity, finding.claim, finding.reason))
        if key not in seen:
            seen.add(key)
            kept.append(finding)
    return tuple(kept)


# What a finding's claim or reason is read against besides JSON Schema's words: its own enums.
_FINDING_VOCABULARY = frozenset({*LENSES, "observation", "concern", "critical"})


def is_debris(finding: SkepticFinding) -> bool:
    """A finding whose claim or reason is debris (:func:`research_agent.text.debris.says_nothing`,
    the lens and severity names read as schema vocabulary), or that has neither."""
    texts = [text for text in (finding.claim, finding.reason) if text.strip()]
    return not texts or any(says_nothing(text, _FINDING_VOCABULARY) is not None for text in texts)


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
    claims: Sequence[CitedClaim] = (),
    elided: Collection[int] = (),
) -> SkepticReport:
    """Attack the draft through ``lenses`` in one call; clamp and normalise what comes back
    (repeated findings are kept once).

    The skeptic reads what the writer wrote (:func:`draft_for_review`) and, of the
    sources, only the passages the draft cites, within ``cited_tokens``
    (:func:`cited_block`; ``source_tokens`` is what the writer read of each source).
    When the model gives nothing usable (invalid answers, a timeout, an unreadable or
    failing endpoint), the result has no findings and says why in ``unavailable``
    (announced through ``notify``). ``claims``: cited sentences, with their passages, to
    judge one by one in the same call (:mod:`.claim_check`); their passages are cited
    passages too, so they share ``cited_tokens`` with the rest. In the body of the draft it reads,
    a listed sentence stands as its number, and the cited sentences in ``elided`` (checked in a
    call beside, or found stated in their passages by the lexical check) as one mark a run
    (:func:`draft_view`): the list is read instead of the draft where the check covers it."""
    review = draft_for_review(draft_markdown)
    evidence = _evidence(review, sources, source_tokens=source_tokens, cited_tokens=cited_tokens, claims=claims)
    view = draft_view(review, {c.number for c in claims}, elided)
    prompt = prompts.render(
        "skeptic",
        query=query,
        lenses=", ".join(lenses),
        lens_rules="\n".join(f"- {lens}: {LENS_RULES[lens]}" for lens in lenses if lens in LENS_RULES),
        view=f"\n{prompts.fragment('skeptic_view')}" if view != review else "",
        draft=wrap_data("draft", sanitize(view, max_chars=40000)),
        passages=evidence,
        claims=claims_prompt(claims),
    )
    schema = with_claims(SCHEMA, len(claims)) if claims else SCHEMA
    request = ChatRequest(stage="skeptic", system=prompt.system, user=prompt.user, schema=schema, temperature=0.0,
                          max_tokens=MAX_ANSWER_TOKENS + answer_tokens(len(claims)))
    try:
        response = await model.complete(request)
    except LLMError as exc:
        if not degrades(exc):
            raise
        message = degraded_message(exc, "the report goes out without adversarial findings", notify)
        return SkepticReport((), None, unavailable=message)
    return _report(response.data, claims)


def _report(data: dict, claims: Sequence[CitedClaim]) -> SkepticReport:
    """The skeptic's answer, clamped and normalised (findings that are debris left out and
    counted); its verdicts on ``claims``, quotes checked."""
    answered = _distinct(
        SkepticFinding(
            lens=f["lens"],
            severity=f["severity"],
            claim=_clean(f["claim"]),
            reason=_clean(f["reason"]),
            fix=_clean(f["fix"]),
            confidence=min(1.0, max(0.0, float(f["confidence"]))),
        )
        for f in data["findings"]
    )
    findings = tuple(f for f in answered if not is_debris(f))
    dropped = len(answered) - len(findings)
    verdicts = read_verdicts(data.get("claims", ()), claims)
    raw = data.get("viability")
    if raw is None:
        return SkepticReport(findings, None, "unscored: the skeptic gave no viability score", verdicts=verdicts,
                             dropped=dropped)  # fmt: skip
    viability, note = read_viability(raw)
    return SkepticReport(findings, viability, note, verdicts=verdicts, unusable="" if viability is not None
                         else str(raw)[:40], dropped=dropped)  # fmt: skip


# The claim check's verdicts, as findings: the review and the report read them like the skeptic's own.
_REVISE_FIX = 'remove the claim, cite a source whose passage states it, or mark it "[Disputed]" and say why'
_QUALIFY_FIX = "qualify the claim to what the passage states, or cite a source that states it"


def claim_findings(check: ClaimCheck | None) -> tuple[SkepticFinding, ...]:
    """An unsupported verdict as a critical finding, a partial one as a concern (a warning);
    the claim quoted as the draft has it, without citation markers or its final stop."""
    if check is None:
        return ()
    return tuple(_finding(v) for v in check.verdicts if v.verdict != "supported")


def _finding(verdict: ClaimVerdict) -> SkepticFinding:
    critical = verdict.verdict == "unsupported"
    cited = ", ".join(f"[{n}]" for n in verdict.sources)
    what = "does not state this claim" if critical else "states only part of this claim"
    reason = f"The cited passage of {cited} {what}" + (f": {verdict.reason}" if verdict.reason else "")
    return SkepticFinding(
        lens="evidence", severity="critical" if critical else "concern", claim=verdict.sentence.rstrip(" .!?"),
        reason=reason[:600], fix=_REVISE_FIX if critical else _QUALIFY_FIX, confidence=0.9,
    )  # fmt: skip


_OUTCOME_SHOWN = {
    "disputed": "marked disputed in the report",
    "removed": "removed in revision",
    "recited": "rewritten in revision to cite other sources",
}


def with_claim_findings(skeptic: SkepticReport | None, check: ClaimCheck | None) -> SkepticReport | None:
    """The skeptic's report as the final report shows it: its findings, then one per unsupported
    claim, saying what became of it."""
    if skeptic is None or check is None or not check.unsupported:
        return skeptic
    shown = tuple(
        replace(_finding(v), fix=_OUTCOME_SHOWN.get(v.outcome, "")) for v in check.unsupported
    )
    return replace(skeptic, findings=(*skeptic.findings, *shown))
