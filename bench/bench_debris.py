"""How well the checks of a weak model's debris tell junk from what a capable model or a person writes.

Run: ``python -m bench.bench_debris [--errors]``

Two sets, each text labelled ``debris`` or ``real``:

- ``dev``: the shapes the checks were built and are tested on (``tests/support/debris.py``: what the
  runs of issues 23 and 45 met against SmolLM2-135M, a set of our own, and real queries and reasons);
- ``heldout``: ``tests/data/debris/heldout.jsonl``, written before the checks of issue 45 and never
  tuned on.

Each kind of text goes through the check that reads it in a run: a sub-query through
:func:`research_agent.stages._sub_queries.query_problem` (with the domain list of the decompose
prompt), a skeptic finding's claim or reason through :func:`research_agent.stages.skeptic.is_debris`,
a relevance reason through :func:`research_agent.stages.relevance.reason_problem`, a viability
through :func:`research_agent.review.review.read_viability` (refused: unscored), a paragraph
through :func:`research_agent.text.debris.says_nothing` (the lint's debris test). It prints, per
set and kind, the precision and recall at refusing debris; ``--errors`` lists the texts each gets wrong.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from bench._util import labelled_texts, refusals
from research_agent import prompts
from research_agent.review.review import read_viability
from research_agent.stages._sub_queries import list_words, query_problem
from research_agent.stages.relevance import reason_problem
from research_agent.stages.skeptic import SkepticFinding, is_debris
from research_agent.text.debris import says_nothing
from tests.support.debris import (
    ISSUE45_DEBRIS,
    ISSUE_DEBRIS,
    OTHER_DEBRIS,
    REAL_QUERIES,
    REAL_REASONS,
)

HELDOUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "debris" / "heldout.jsonl"
QUESTION = "What does asyncio.create_task do?"
LISTED = list_words(prompts.fragment("domains"), QUESTION)

REFUSES: dict[str, Callable[[str], bool]] = {
    "sub_query": lambda text: query_problem(text, LISTED) is not None,
    "finding": lambda text: is_debris(SkepticFinding("evidence", "concern", text, text, "", 0.5)),
    "reason": lambda text: reason_problem(text) is not None,
    "viability": lambda text: read_viability(json.loads(text))[0] is None,
    "paragraph": lambda text: says_nothing(text) is not None,
}


def dev_set() -> list[dict[str, str]]:
    """The shapes of ``tests/support/debris.py``, labelled as the tests read them."""
    rows: list[tuple[str, str, str]] = []
    for debris in (ISSUE_DEBRIS, OTHER_DEBRIS, ISSUE45_DEBRIS):
        rows += [("sub_query", q, "debris") for q in debris.sub_queries]
        finding = debris.skeptic()["findings"][0]
        rows += [("finding", text, "debris") for text in dict.fromkeys((finding["claim"], finding["reason"]))]
        rows += [("reason", r, "debris") for r in debris.relevance_reasons]
        label = "real" if 0 <= debris.viability <= 100 else "debris"
        rows.append(("viability", json.dumps(debris.viability), label))
    wordless = [f for d in (ISSUE_DEBRIS, OTHER_DEBRIS) for f in d.findings if f not in ("- 1",)]
    rows += [("paragraph", text, "debris") for text in (ISSUE_DEBRIS.summary, OTHER_DEBRIS.summary, *wordless)]
    rows += [("sub_query", q, "real") for q in REAL_QUERIES]
    rows += [("reason", r, "real") for r in REAL_REASONS]
    return [{"kind": kind, "text": text, "label": label} for kind, text, label in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--errors", action="store_true", help="list the texts each check gets wrong")
    args = parser.parse_args()
    for name, items in (("dev", dev_set()), ("heldout", labelled_texts(HELDOUT))):
        for kind in (*REFUSES, "all"):
            chosen = [item for item in items if kind in ("all", item["kind"])]
            if not chosen:
                continue
            scored = refusals(chosen, lambda item: REFUSES[item["kind"]](item["text"]), "debris")
            print(f"{name:<8} {kind:<10} {scored.line(2, extra=f'; {len(chosen)} texts')}")
            if args.errors and kind != "all" and scored.wrong:
                print("\n".join(f"    {w}" for w in scored.wrong))


if __name__ == "__main__":
    main()
