"""``review REPORT.md --check-claims``: the claim check of a finished report, from what its run stored.

The report finds its run through its front matter's ``id:`` (or its file name), and its
passages (``passages-<id>.json``) in the ``meta/`` folder beside it, else in the reports
folder's (:func:`research_agent.export.files.report_passages`); the question comes from its
run record when one is there, else from the front matter. Every cited sentence is paired
with its passage, as in a run (:mod:`research_agent.claims`), and checked in calls of at
most ``Settings.claim_tokens`` each, side by side as far as the model allows. A sentence
the report already marks "[Disputed]" is checked and reported like any other, but it is
not an open claim: only an unmarked unsupported one fails the review.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...claims import ClaimCheck, ClaimVerdict, choose_claims, cited_claims, is_disputed, pack
from ...errors import InputError
from ...export.files import report_passages
from ...llm import ChatModel
from ...record.passages import PassageStore
from ...review.markdown import parse_front_matter
from ...stages._skeptic_input import draft_for_review
from ...stages.claim_check import check_claims
from ...text.sanitize import sanitize
from ..stored import report_record

__all__ = ["ReportClaims", "check_report_claims", "report_evidence"]


def _shown(text: str) -> str:
    return sanitize(text, max_chars=200, single_line=True)


@dataclass(frozen=True)
class ReportClaims:
    """The claim check of one report (its run ``run_id``)."""

    run_id: str
    check: ClaimCheck

    @property
    def open_unsupported(self) -> tuple[ClaimVerdict, ...]:
        """Unsupported claims the report does not mark "[Disputed]": what fails the review."""
        return tuple(v for v in self.check.unsupported if not is_disputed(v.sentence))

    def summary(self) -> str:
        check = self.check
        if check.skipped or not check.checked:
            return f"Claims not checked: {(check.skipped or check.not_checked or 'no verdict came back').rstrip('.')}."
        counts = {v: sum(1 for x in check.verdicts if x.verdict == v) for v in ("supported", "partial", "unsupported")}
        marked = len(check.unsupported) - len(self.open_unsupported)
        line = (f"Claims checked against their sources: {check.checked} of {check.cited} cited sentences; "
                f"{counts['supported']} supported, {counts['partial']} partly, {counts['unsupported']} unsupported"
                f" ({marked} of them marked [Disputed]).")  # fmt: skip
        return line + (f" Not checked: {check.not_checked}." if check.not_checked else "")

    def lines(self) -> list[str]:
        """The summary, then one line per verdict (the worst first)."""
        order = {"unsupported": 0, "partial": 1, "supported": 2}
        out = [self.summary()]
        for v in sorted(self.check.verdicts, key=lambda v: (order[v.verdict], v.number)):
            cites = "".join(f"[{n}]" for n in v.sources)
            mark = " (marked disputed)" if v.verdict == "unsupported" and is_disputed(v.sentence) else ""
            detail = f'"{v.quote}"' if v.quote and v.verdict != "unsupported" else v.reason
            note = f" ({v.note})" if v.note else ""
            out.append(f"  {v.verdict:<11} {cites} {_shown(v.sentence)}{mark} - {_shown(detail)}{note}")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "open_unsupported": len(self.open_unsupported), **self.check.as_dict()}


def report_evidence(report: Path, markdown: str, reports_dir: Path) -> tuple[PassageStore, str]:
    """The report's stored passages and its question; InputError (one line) when the passages
    are not there, since then there is nothing to check the claims against."""
    store, note = report_passages(report, markdown, reports_dir)
    if store is None:
        raise InputError(f"report {report}: its claims cannot be checked. {note}")
    record = report_record(report, markdown, reports_dir, store.run_id)
    if record is not None:
        return store, record.query
    return store, str(parse_front_matter(markdown).get("query") or "")  # the front matter's question


async def check_report_claims(
    model: ChatModel, markdown: str, store: PassageStore, *, query: str, budget: int
) -> ReportClaims:
    """Check every cited sentence of ``markdown`` against its passage in ``store``."""
    top = max((s.n for s in store.sources), default=0)
    texts = [(source.text if (source := store.source(n)) else "") for n in range(1, top + 1)]
    claims = cited_claims(draft_for_review(markdown), texts)
    chosen = choose_claims(claims, policy="all", seed=store.run_id, budget=budget)
    if not chosen:
        reason = "the report cites no source" if not claims else "no cited sentence has a stored passage"
        return ReportClaims(store.run_id, ClaimCheck.not_run(reason, len(claims)))
    calls, _ = pack(chosen, budget=budget, slots=len(chosen))
    answers = await asyncio.gather(*(check_claims(model, query, call) for call in calls))
    verdicts = tuple(sorted((v for a in answers for v in a.verdicts), key=lambda v: v.number))
    failed = [f"{len(a.claims)} in a call whose answer could not be used ({a.failed})" for a in answers if a.failed]
    asked = sum(len(a.claims) for a in answers if not a.failed)
    if asked > len(verdicts):
        failed.append(f"{asked - len(verdicts)} left without a verdict by the model")
    if not verdicts:
        return ReportClaims(store.run_id, ClaimCheck.not_run("; ".join(failed) or "no verdict came back", len(claims)))
    return ReportClaims(store.run_id, ClaimCheck(len(claims), verdicts, not_checked="; ".join(failed)))
