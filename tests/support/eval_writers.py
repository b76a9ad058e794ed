"""Writers for eval tests: one that copies sentences from its sources, one that also makes things up.

Both answer every other stage as :class:`ResearchResponder` does (so the endpoint ignores lessons:
the same question gets the same report in every round). The copying writer keeps, from each source,
the sentences that share the most words with the question, digits and all (ResearchResponder's
writer leaves out sentences with digits). The inventing writer adds sentences with names and numbers
no page holds, different for each question.
"""

from __future__ import annotations

import hashlib
import re

from tests.support.research_responder import ResearchResponder, _question, _sources, _words, writer_markdown

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
INVENTED_NAMES = ("Quillon Marbury", "Ostrava Pemberly", "Halvard Quenneth", "Brisco Tamlyn", "Evadne Corrigal",
                  "Lucan Feverell", "Marisol Thackery", "Peregrine Oxley")  # fmt: skip


def _picked(title: str, text: str, question: set[str], limit: int) -> list[str]:
    """The first ``limit`` of the source's sentences that share a word with the question, in page order
    (the page's title, run into its first sentence by the extraction, left out)."""
    body = " ".join(re.sub(r"^\s*#+\s*", "", text).split())
    body = body[len(title):].lstrip() if body.startswith(title + " " + title) else body
    sentences = [s.strip() for s in _SENTENCE.split(body) if 25 <= len(s.strip()) <= 300]
    return [s for s in sentences if question & set(_words(s))][:limit]


class CopyingResponder(ResearchResponder):
    """Writes its draft from its sources' own sentences (see the module docstring)."""

    per_source = 3

    def _draft(self, system: str, user: str) -> str:
        question = _question(user)
        words = set(_words(question))
        paragraphs, findings = [], []
        for n, title, text in _sources(user):
            picked = _picked(title, text, words, self.per_source)
            if picked:
                paragraphs.append(" ".join(f"{s.rstrip('.')} [{n}]." for s in picked))
                findings.append(f"{picked[0].rstrip('.')} [{n}].")
        paragraphs += self.extra(question)
        return writer_markdown({
            "title": question.rstrip("?")[:150],
            "executive_summary": f"The sources answer the question directly [{_sources(user)[0][0]}].",
            "key_findings": findings[:5],
            "sections": [{"heading": "What the sources say", "body": "\n\n".join(paragraphs)}],
            "limitations": ["The sources were not checked against independent measurements."],
        })  # fmt: skip

    def extra(self, question: str) -> list[str]:
        return []


class InventingResponder(CopyingResponder):
    """A copying writer that also states names and numbers no page holds, different for each question."""

    def extra(self, question: str) -> list[str]:
        seed = int(hashlib.sha256(question.encode()).hexdigest()[:8], 16)
        name = INVENTED_NAMES[seed % len(INVENTED_NAMES)]
        figure = f"{3000 + seed % 6000:,}"
        return [f"According to the analyst {name}, the figure stood at {figure} units in 2031 [1]."]
