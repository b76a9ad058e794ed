"""A weak model's nonsense, as fixtures: what one run against SmolLM2-135M met (issue 23), kept
exactly, and a second set of our own in other shapes. The lint and the sub-query check must catch
both by structure, never by these strings.

Each :class:`Debris` gives the planner's sub-queries, a writer's draft (by part,
:meth:`Debris.draft`; as the writer's markdown answer, :meth:`Debris.answer`), a skeptic's answer (:meth:`Debris.skeptic`), and the same content as a
published markdown report (:meth:`Debris.markdown`). :class:`DebrisResponder` answers a whole run
with it, behind the scripted model or the fake OpenAI-compatible server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support.claims import answer_claims, asked_claims
from tests.support.research_responder import ResearchResponder, writer_markdown

__all__ = ["ISSUE_DEBRIS", "OTHER_DEBRIS", "Debris", "DebrisResponder", "REAL_QUERIES"]


@dataclass(frozen=True)
class Debris:
    name: str
    sub_queries: tuple[str, ...]
    title: str
    summary: str
    findings: tuple[str, ...]
    sections: tuple[tuple[str, str], ...]  # (heading, body)
    skeptic_claim: str
    skeptic_repeats: int
    viability: int

    def draft(self) -> dict[str, Any]:
        """The writer's answer by part (summary, findings, sections, limitations)."""
        return {
            "title": self.title,
            "executive_summary": self.summary,
            "key_findings": list(self.findings),
            "sections": [{"heading": h, "body": b} for h, b in self.sections],
            "limitations": [],
        }

    def answer(self) -> str:
        """The writer's answer as it comes: markdown under the headings it was asked for."""
        return writer_markdown(self.draft())

    def skeptic(self) -> dict[str, Any]:
        """The skeptic's answer: one finding on the debris, repeated, and a confident viability."""
        finding = {
            "lens": "evidence",
            "severity": "concern",
            "claim": self.skeptic_claim,
            "reason": self.skeptic_claim,
            "fix": "",
            "confidence": 0.5,
        }
        return {"findings": [dict(finding) for _ in range(self.skeptic_repeats)], "viability": self.viability}

    def markdown(self, *, gate_decision: str = "full_report", mode: str = "standard") -> str:
        """The same content as a markdown report with front matter and a Sources list (2 sources kept)."""
        parts = [
            f"---\nquery: How does PostgreSQL VACUUM reclaim space?\nmode: {mode}\ndate: 2026-01-01\n"
            f"model: smollm2\ngate_decision: {gate_decision}\n---\n",
            f"# {self.title}\n",
            f"## Executive Summary\n\n{self.summary}\n",
            "## Key Findings\n\n" + "\n".join(f"- {f}" for f in self.findings) + "\n",
        ]
        parts += [f"## {heading}\n\n{body}\n" for heading, body in self.sections]
        parts.append(
            "## Sources\n\n1. VACUUM — /docs/routine-vacuuming.html\n2. MVCC — /docs/mvcc-intro.html\n"
        )
        return "\n".join(parts)


# What SmolLM2-135M wrote over the PostgreSQL manual, as issue 23 quotes it.
_REPEATED = "VACUUM reclaims storage occupied by dead tuples so that the space can be used again."
ISSUE_DEBRIS = Debris(
    name="issue",
    sub_queries=("] } {", "type=", "]", ", type:string, maxLength:200,", "maxItems:6} {", "']; type='"),
    title="PostgreSQL VACUUM",
    summary="{{",
    findings=("type", "maxItems", "- 1", "type':'string','maxLength':150},"),
    sections=(
        ("1", _REPEATED),
        ("2", _REPEATED),
        ("https://www.postgresql-vacuum-guide.org/reclaim-space", _REPEATED),
        *((str(n), _REPEATED) for n in range(3, 12)),
    ),
    skeptic_claim="}], {",
    skeptic_repeats=20,
    viability=100,
)

# Our own, in shapes the issue does not quote: JSON keys and nulls, chat-template tokens, roman
# numerals, a percentage alone, a number in brackets, other kinds of web address, a short line
# repeated in every section, a section copied under a new name, a sentence looping in place.
_SHORT = "See above."
_COPIED = "Autovacuum runs in the background and frees the space of dead rows."
_LOOP = " ".join(["Dead tuples are reclaimed."] * 6)
OTHER_DEBRIS = Debris(
    name="other",
    sub_queries=('{"q": null}', '"title": "vacuum"', "<|im_end|>", "...", "1. 2. 3.", "properties: {}",
                 "vacuum vacuum vacuum vacuum vacuum vacuum", "—"),
    title="[ ]",
    summary='"executive_summary": "",',
    findings=("N/A", "(1)", "42%", '"enum": [1, 2]', "null,", '{"title": "", "body": ""}', "3.2.1", "N/A"),
    sections=(
        ("II.", f"{_COPIED}\n\n{_SHORT}"),
        ("ftp://files.vacuum-facts.example/guide.txt", _SHORT),
        ("pg-vacuum.example.net/how-to", f"{_COPIED}\n\n{_SHORT}"),
        ('"heading": ""', _SHORT),
        ("Background", f"{_COPIED}\n\n{_SHORT}"),
        ("Example.com", _LOOP),
    ),
    skeptic_claim='{"claim": ""}',
    skeptic_repeats=15,
    viability=95,
)

# Sub-queries that look odd but are real technology queries: brackets alone are no reason.
REAL_QUERIES = (
    "list[int]",
    "numpy arr[::2] slicing every second element",
    "jq '.[]' iterate over array elements",
    "C++ std::vector<int> reserve",
    "GPT-4 benchmark results",
    "量子计算 应用",
    "PostgreSQL VACUUM FULL lock",
)


class DebrisResponder(ResearchResponder):
    """The research responder whose writer and skeptic answer with ``debris`` every time
    (drafts and revisions alike); planning and relevance stay sensible."""

    def __init__(self, debris: Debris, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.debris = debris

    def _draft(self, system: str, user: str) -> str:
        return self.debris.answer()

    def _revise(self, system: str, user: str) -> str:
        return self.debris.answer()

    def _skeptic(self, system: str, user: str) -> dict:
        answer = self.debris.skeptic()
        if asked_claims(user):  # the claim check rides in the skeptic's call: it answers that too
            answer["claims"] = answer_claims(user, self.claim_verdict)
        return answer
