"""A weak model's nonsense, as fixtures: what one run against SmolLM2-135M met (issue 23), kept
exactly, a second set of our own in other shapes, and what the runs of issue 45 met (schema junk
searched, a viability of 1234567890, debris findings, a made-up address, junk relevance reasons).
The lint, the sub-query check, the skeptic's and the relevance's checks must catch them by
structure, never by these strings. A held-out set that no check is tuned on is in
``tests/data/debris/heldout.jsonl`` (``bench/bench_debris.py`` measures the checks on it).

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

__all__ = ["ISSUE_DEBRIS", "ISSUE45_DEBRIS", "OTHER_DEBRIS", "Debris", "DebrisResponder", "REAL_QUERIES",
           "REAL_REASONS"]


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
    skeptic_reason: str | None = None  # None: the claim again
    skeptic_fix: str = ""
    relevance_reasons: tuple[str, ...] = ()  # the reasons of the first relevance scores, one each (then sensible)

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
            "reason": self.skeptic_claim if self.skeptic_reason is None else self.skeptic_reason,
            "fix": self.skeptic_fix,
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

# What the runs of issue 45 met over ten asyncio pages, kept exactly where the issue quotes it: a
# file name with a schema for a query string, the domain taxonomy echoed back, a finding rendered
# as '"concern,". critical Response: confidence},{', a viability of 1234567890, an address no source
# has (four times), an exact repeat of a line inside a paragraph, and relevance reasons of one word.
_ASYNCIO = "asyncio.create_task() schedules the coroutine on the running event loop."
_MADE_UP = "https://github.com/LuigiBoschi/asyncio"
ISSUE45_DEBRIS = Debris(
    name="issue45",
    sub_queries=("./science.json?type=object&maxItems:5&minItems:1;",
                 "create-task:true,2019-03-28T14:57:56\u2026,tech,internet,science,\u2026,other,"),
    title="asyncio.create_task",
    summary=f"The task runs on the loop, see {_MADE_UP} for more.",
    findings=(f"The code is at {_MADE_UP}", f"- {_MADE_UP}"),
    sections=(
        ("Overview", f"{_ASYNCIO}\nIt returns a Task object.\nThe task runs concurrently with other tasks.\n{_ASYNCIO}"),
        ("Code", f"The repository ({_MADE_UP}) has examples of the function."),
    ),
    skeptic_claim="concern,",
    skeptic_reason="critical",
    skeptic_fix="confidence},{",
    skeptic_repeats=3,
    viability=1234567890,
    relevance_reasons=("error", "type:string", "no_data"),
)

# Relevance reasons a capable model gives: a sentence, or a word or two.
REAL_REASONS = ("Explains what create_task returns.", "Off topic: about threading.", "Mentions asyncio only once.",
                "central", "on topic", "Explains create_task")

# Sub-queries that look odd but are real technology queries: brackets alone are no reason.
REAL_QUERIES = (
    "list[int]",
    "numpy arr[::2] slicing every second element",
    "jq '.[]' iterate over array elements",
    "C++ std::vector<int> reserve",
    "GPT-4 benchmark results",
    "量子计算 应用",
    "PostgreSQL VACUUM FULL lock",
    "C++ std::string find substring",
    "TypeError: string indices must be integers",
    "mypy type: ignore comment",
    "site:docs.python.org asyncio.gather",
    "asyncio.Queue maxsize=0 meaning",
    "history of science education in Europe",
)


class DebrisResponder(ResearchResponder):
    """The research responder whose writer and skeptic answer with ``debris`` every time
    (drafts and revisions alike); planning stays sensible, and so does relevance, but for the
    debris's ``relevance_reasons``: the reasons of its first scores, one each."""

    def __init__(self, debris: Debris, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.debris = debris
        self.reasons_given = 0

    def _score(self, question: set[str], excerpt: str) -> dict:
        scored = super()._score(question, excerpt)
        if self.reasons_given < len(self.debris.relevance_reasons):
            scored["reason"] = self.debris.relevance_reasons[self.reasons_given]
            self.reasons_given += 1
        return scored

    def _draft(self, system: str, user: str) -> str:
        return self.debris.answer()

    def _revise(self, system: str, user: str) -> str:
        return self.debris.answer()

    def _skeptic(self, system: str, user: str) -> dict:
        answer = self.debris.skeptic()
        if asked_claims(user):  # the claim check rides in the skeptic's call: it answers that too
            answer["claims"] = answer_claims(user, self.claim_verdict)
        return answer
