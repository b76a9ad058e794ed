"""A deterministic stand-in for a model that knows research-agent's stages.

It reads the prompts the stages send and answers in their schemas with content
derived from them: sub-queries from the question's words, relevance from word
overlap (one score per source of a batch), a markdown draft that cites the numbered
sources it was given. Used behind the fake OpenAI-compatible server (CLI end-to-end
tests, bench/) and behind ScriptedModel. It also answers the prompts of research-agent
0.2 (a JSON draft, one source per relevance call), so the bench can measure that
version against the same server.
"""

from __future__ import annotations

import json
import re
from typing import Any

from research_agent import prompts
from tests.support.claims import answer_claims

# How a decompose prompt asks for the domain (a run's first plan): the answer must name one.
ASKS_DOMAIN = prompts.fragment("decompose_domain", domains="").splitlines()[0]
_WORD = re.compile(r"[a-z0-9]+")
_STOP = set(
    ["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "how", "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "what", "when", "where", "which", "who", "why", "will", "with", "does", "do", "did", "can", "should", "would", "could"]
)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2]


def _question(user: str) -> str:
    match = re.search(r"^Question: (.*)$", user, re.MULTILINE)
    return match.group(1).strip() if match else user[:200]


def _sources(user: str) -> list[tuple[int, str, str]]:
    """(number, title, text) of each numbered source block in a prompt."""
    found = []
    pattern = re.compile(r"^\[(\d+)\] (.*?) — .*?\n<<<DATA source \d+>>>\n(.*?)\n<<<END DATA>>>", re.S | re.M)
    for match in pattern.finditer(user):
        found.append((int(match.group(1)), match.group(2), match.group(3)))
    return found


_RELEVANCE_SOURCE = re.compile(r"^<<<DATA source (\d+):[^\n]*>>>\n(.*?)\n<<<END DATA>>>", re.S | re.M)


def writer_markdown(draft: dict) -> str:
    """A draft in the shape research-agent 0.2 asked for, written as the markdown the writer answers with."""
    parts = [f"# {draft.get('title') or 'Report'}", "## Summary", draft["executive_summary"], "## Key Findings"]
    parts.append("\n".join(f"- {finding}" for finding in draft["key_findings"]))
    for section in draft["sections"]:
        parts += [f"## {section['heading']}", section["body"]]
    if draft.get("limitations"):
        parts += ["## Limitations", "\n".join(f"- {item}" for item in draft["limitations"])]
    return "\n\n".join(parts) + "\n"


def _sentences(text: str, limit: int) -> list[str]:
    text = re.sub(r"^#+ [^\n]*\n", "", text, flags=re.M)  # headings are not sentences
    text = re.sub(r"^#+\s*", "", text, flags=re.M)  # a heading run into its text (a flattened file)
    parts = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    good = [p for p in parts if 40 <= len(p) <= 300 and not re.search(r"\d", p)]
    return good[:limit]


class ResearchResponder:
    """Answers research-agent's stages. ``viability`` and ``findings`` script the skeptic."""

    def __init__(
        self,
        *,
        viability: int | None | list[int | None] = 82,
        findings: list[dict] | None = None,
        domain: str = "technology",
        fix_on_revise: bool = True,
        claim_verdict: Any = None,
    ):
        # a list of viabilities is answered one per skeptic call, the last one repeating
        self.viabilities = list(viability) if isinstance(viability, list) else [viability]
        self.findings = findings or []
        self.domain = domain
        self.fix_on_revise = fix_on_revise
        self.claim_verdict = claim_verdict  # sentence -> supported | partial | unsupported (None: supported)

    def answer(self, stage: str, system: str, user: str) -> Any:
        handler = getattr(self, f"_{stage}", None)
        if handler is None:
            raise ValueError(f"no canned answer for stage {stage!r}")
        return handler(system, user)

    def __call__(self, body: dict, stage: str) -> str:
        """The FakeOpenAIServer responder signature: request body -> message content."""
        messages = body.get("messages", [])
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        user = "\n".join(m["content"] for m in messages if m["role"] == "user")
        answer = self.answer(stage, system, user)
        return answer if isinstance(answer, str) else json.dumps(answer)

    # --- stages -------------------------------------------------------------------

    def _classify(self, system: str, user: str) -> dict:
        return {"domain": self.domain}

    def _decompose(self, system: str, user: str) -> dict:
        count = int(re.search(r"Write exactly (\d+)", user).group(1))
        words = _words(_question(user))
        facets = ["overview", "how it works", "evidence and measurements", "limitations and criticism",
                  "practical guidance", "history", "alternatives", "costs"]
        plan = 1 + user.count("previous plan fell short")
        words = words or ["topic"]
        queries = []
        for i in range(count):
            # each sub-query keeps the first word and a sliding window of the others, like a planner would
            window = [words[(i + j) % len(words)] for j in range(1, min(4, len(words)))]
            queries.append(" ".join(dict.fromkeys([words[0], *window, facets[(i + plan - 1) % len(facets)]])))
        if ASKS_DOMAIN in user:  # a run's first plan also names the domain
            return {"domain": self.domain, "sub_queries": queries}
        return {"sub_queries": queries}

    def _relevance(self, system: str, user: str) -> dict:
        question = set(_words(_question(user)))
        batch = _RELEVANCE_SOURCE.findall(user)
        if not batch:  # research-agent 0.2: one source per call
            return self._score(question, user.split("<<<DATA", 1)[-1])
        return {"scores": [{"id": int(n), **self._score(question, text)} for n, text in batch]}

    def _score(self, question: set[str], excerpt: str) -> dict:
        """One source's score and reason, from its excerpt's overlap with the question."""
        overlap = len(question & set(_words(excerpt)))
        score = 5 if overlap >= 4 else 4 if overlap >= 2 else 2 if overlap == 1 else 1
        return {"score": score, "reason": f"shares {overlap} key terms with the question"}

    def _draft(self, system: str, user: str) -> str | dict:
        sources = _sources(user)
        target = int(re.search(r"about (\d+) words", system).group(1))
        question = _question(user)
        if not sources:
            raise ValueError("draft prompt without sources")
        findings = []
        sections = []
        said: set[str] = set()  # a writer does not repeat itself: sources that say the same are cited once
        per_section = max(1, len(sources) // 3)
        for i in range(0, len(sources), per_section):
            group = sources[i : i + per_section]
            paragraphs = []
            for n, title, text in group:
                sentences = _sentences(text, max(4, target // (12 * len(sources)))) or [f"{title} discusses {question.rstrip('?')}."]
                sentences = [s for s in sentences if s not in said]
                said.update(sentences)
                if sentences:
                    paragraphs.append(" ".join(f"{s.rstrip('.')} [{n}]." for s in sentences))
                if title not in said:
                    said.add(title)
                    findings.append(f"{title} bears directly on the question [{n}].")
            if paragraphs:
                sections.append({"heading": f"What the sources say ({len(sections) + 1})", "body": "\n\n".join(paragraphs)})
        cited = ", ".join(str(n) for n, _, _ in sources[:3])
        draft = {
            "title": question.rstrip("?")[:150],
            "executive_summary": f"The sources address the question from several angles [{cited}].",
            "key_findings": findings[:7],
            "sections": sections[:12],
            "limitations": ["The sources were not checked against independent measurements."],
        }
        return draft if "Answer with JSON only" in system else writer_markdown(draft)

    def _skeptic(self, system: str, user: str) -> dict:
        viability = self.viabilities.pop(0) if len(self.viabilities) > 1 else self.viabilities[0]
        answer: dict[str, Any] = {"findings": list(self.findings), "viability": viability}
        if "<<<DATA cited sentences>>>" in user:  # the claim check rides in the skeptic's call
            answer["claims"] = answer_claims(user, self.claim_verdict)
        return answer

    def _claims(self, system: str, user: str) -> dict:
        return {"claims": answer_claims(user, self.claim_verdict)}

    def _revise(self, system: str, user: str) -> str | dict:
        match = re.search(r"<<<DATA draft>>>\n(.*?)\n<<<END DATA>>>", user, re.S)
        current = match.group(1)
        claims = [f.get("claim", "") for f in self.findings] if self.fix_on_revise else []
        if "Answer with JSON only" in system:  # research-agent 0.2
            data = json.loads(current)
            for claim in claims:
                for section in data["sections"]:
                    section["body"] = section["body"].replace(claim, "")
            return data
        for claim in claims:
            current = current.replace(claim, "")
        return current

    def _critique(self, system: str, user: str) -> dict:
        return {
            "scores": {
                "source_diversity": 3,
                "claim_support": 4,
                "coverage": 3,
                "geographic_balance": 3,
                "actionability": 3,
            },
            "weaknesses": ["Few independent sources."],
            "suggestions": ["Add a sub-query for primary sources."],
            "tags": ["weak_primary_sources"],
        }
