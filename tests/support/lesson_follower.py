"""A scripted model that follows its lessons, and a corpus where following them shows.

:class:`LessonFollower` answers like :class:`ResearchResponder`, except that

* **decompose**: when its prompt (below the question line) carries a lesson about
  counterarguments, whatever that lesson's wording, it turns its last sub-query into
  one aimed at counterarguments (:data:`COUNTER_QUERY`); it counts how often it did;
* **relevance**: a source that argues counterarguments is relevant (4), whatever words
  it shares with the question;
* **critique**: it grades only the report itself; a report that covers counterarguments
  scores 4 on coverage, else 3 with the ``missing_counterarguments`` tag. Its scores
  always pass, so its critiques become lessons.

:func:`write_debate_corpus` writes the ResearchResponder corpus (DOCS, in the corpus
root) plus ``debate/objections.md``, a page about counterarguments that shares no
word with the questions or with ResearchResponder's sub-queries: only a
counterarguments sub-query finds it. So a run that follows the lesson cites one more
site (the ``debate`` folder) and scores higher on coverage than one that does not.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.pipeline import write_docs
from tests.support.research_responder import ResearchResponder, _question, _words

__all__ = [
    "LessonFollower",
    "TwoLessonFollower",
    "COUNTER_LESSON",
    "COUNTER_QUERY",
    "OBJECTIONS",
    "write_debate_corpus",
    "write_trial_corpus",
]

COUNTER_LESSON = re.compile(r"counter-?argument|opposing view", re.I)
COUNTER_QUERY = "{first} counterarguments objections"
_REPORT = re.compile(r"<<<DATA report to grade>>>\n(.*?)\n<<<END DATA>>>", re.S)

OBJECTIONS = (
    "Objections and counterarguments",
    "Some administrators raise counterarguments against aggressive cleanup schedules on busy servers. "
    "Their objections hold that frequent maintenance competes with user traffic for disk bandwidth. "
    "Others answer these objections by pointing to lower bloat over the long run.",
)


def write_debate_corpus(folder: Path) -> Path:
    """DOCS in ``folder`` and the counterarguments page in ``folder/debate``; returns ``folder``."""
    (write_docs(folder) / "debate").mkdir(parents=True, exist_ok=True)
    title, text = OBJECTIONS
    (folder / "debate" / "objections.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    return folder


class LessonFollower(ResearchResponder):
    """A responder that follows a counterarguments lesson (see the module docstring)."""

    def __init__(self, *, follow: bool = True, covered_coverage: int = 4, **kwargs) -> None:
        """``covered_coverage``: the coverage a report that covers counterarguments gets (4;
        below 3 makes following the lesson harmful, so that it gets retired)."""
        super().__init__(**kwargs)
        self.follow = follow
        self.covered_coverage = covered_coverage
        self.followed = 0

    def _decompose(self, system: str, user: str) -> dict:
        plan = super()._decompose(system, user)
        below_question = user.split("\n", 1)[-1]
        if self.follow and COUNTER_LESSON.search(below_question):
            first = (_words(_question(user)) or ["topic"])[0]
            plan["sub_queries"][-1] = COUNTER_QUERY.format(first=first)
            self.followed += 1
        return plan

    def _score(self, question: set[str], excerpt: str) -> dict:
        if "counterargument" in excerpt.lower():
            return {"score": 4, "reason": "argues the other side of the question"}
        return super()._score(question, excerpt)

    def _critique(self, system: str, user: str) -> dict:
        match = _REPORT.search(user)
        covered = bool(match) and "counterargument" in match.group(1).lower()
        return {
            "scores": {
                "source_diversity": 3,
                "claim_support": 4,
                "coverage": self.covered_coverage if covered else 3,
                "geographic_balance": 3,
                "actionability": 3,
            },
            "weaknesses": [] if covered else ["The report does not weigh any objection."],
            "suggestions": [],
            "tags": [] if covered else ["missing_counterarguments"],
        }


PRIMARY_LESSON = re.compile(r"primary evidence was thin", re.I)
BROCHURE_QUERY = "{first} brochure pamphlet"
BROCHURE = (
    "Vendor brochure",
    "Our brochure promises effortless results with the bundled appliance and its premium pamphlet. "
    "Every pamphlet reader enjoys effortless upkeep, according to the brochure itself.",
)


def write_trial_corpus(folder: Path) -> Path:
    """:func:`write_debate_corpus` plus ``marketing/brochure.md``, which only a brochure sub-query finds."""
    write_debate_corpus(folder)
    (folder / "marketing").mkdir(exist_ok=True)
    title, text = BROCHURE
    (folder / "marketing" / "brochure.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    return folder


class TwoLessonFollower(LessonFollower):
    """Follows two lessons: the counterarguments lesson helps (coverage 4 instead of 3); the
    primary-evidence lesson harms: following it, the plan looks for a vendor brochure, the
    report cites it, and the critic scores claim support 2 instead of 4. A report without the
    brochure is tagged ``weak_primary_sources`` and one without counterarguments
    ``missing_counterarguments``, so the runs not given a lesson keep showing its weakness."""

    def _decompose(self, system: str, user: str) -> dict:
        plan = super()._decompose(system, user)
        if PRIMARY_LESSON.search(user.split("\n", 1)[-1]):
            first = (_words(_question(user)) or ["topic"])[0]
            plan["sub_queries"][0] = BROCHURE_QUERY.format(first=first)
        return plan

    def _score(self, question: set[str], excerpt: str) -> dict:
        if "brochure" in excerpt.lower():
            return {"score": 4, "reason": "promises results"}
        return super()._score(question, excerpt)

    def _critique(self, system: str, user: str) -> dict:
        answer = super()._critique(system, user)
        match = _REPORT.search(user)
        brochure = bool(match) and "brochure" in match.group(1).lower()
        answer["scores"].update(source_diversity=4, claim_support=2 if brochure else 4, geographic_balance=None,
                                actionability=4)  # fmt: skip
        if not brochure:
            answer["tags"] = [*answer["tags"], "weak_primary_sources"]
        return answer
