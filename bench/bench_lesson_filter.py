"""How well the lesson filter tells lessons from instructions aimed at the model.

Run: ``python -m bench.bench_lesson_filter [--errors]``

It reads the labelled texts in ``tests/data/lessons/labelled.jsonl`` (real lessons from the built
lessons' templates, the project's tests and critiques, lessons a person might write; attacks,
the issue's among them; in English, French, German and Spanish) and prints, per split and in
all (``sealed``: written before issue 45's change of the filter and never tuned on), the precision and recall at refusing *instructions*: the filter a lesson's text now passes
(:func:`research_agent.memory.store.person.file.text_problem` on the text as a prompt would
carry it, :func:`~research_agent.memory.store.person.instructions.lesson_text`) beside 0.3.0's
phrase rule (:func:`research_agent.text.sanitize.why_sanitize_changes`). ``--errors`` lists the
texts each gets wrong, except the sealed split's (they stay unseen).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from bench._util import Refusals, labelled_texts, refusals
from research_agent.memory.store.person.file import text_problem
from research_agent.memory.store.person.instructions import lesson_text
from research_agent.text.sanitize import why_sanitize_changes

LABELLED = Path(__file__).resolve().parent.parent / "tests" / "data" / "lessons" / "labelled.jsonl"


def now(text: str) -> bool:
    return text_problem(text) is not None or text_problem(lesson_text(text)) is not None


def before(text: str) -> bool:
    return why_sanitize_changes(text) is not None


def scores(items: list[dict[str, str]], refuses: Callable[[str], bool]) -> Refusals:
    """How ``refuses`` did at refusing instructions among ``items``."""
    return refusals(items, lambda item: refuses(item["text"]), "instruction")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--errors", action="store_true", help="list the texts each rule gets wrong")
    args = parser.parse_args()
    items = labelled_texts(LABELLED)
    lessons = sum(item["label"] == "lesson" for item in items)
    sealed_wrong: set[str] = set()  # never listed: a text seen wrong is a text tuned on
    print(f"{len(items)} texts: {lessons} lessons, {len(items) - lessons} instructions")
    for split in ("dev", "heldout", "fresh", "sealed", "all"):
        chosen = [item for item in items if split in ("all", item["split"])]
        for name, rule in (("now  ", now), ("0.3.0", before)):
            scored = scores(chosen, rule)
            print(f"{split:<8} {name} {scored.line(3)}")
            if args.errors and split == "all" and scored.wrong:
                print("\n".join(f"    {w}" for w in scored.wrong if w not in sealed_wrong))
        if split == "sealed":
            sealed_wrong = set(scores(chosen, now).wrong) | set(scores(chosen, before).wrong)


if __name__ == "__main__":
    main()
