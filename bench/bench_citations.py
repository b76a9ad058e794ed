"""How well the lexical claim check tells supported citations from unsupported ones.

Run: ``python -m bench.bench_citations [--split heldout|dev|all] [--errors N]``

It reads the labelled (sentence, passage) pairs in ``tests/data/claims/pairs.jsonl`` (built
from the Python documentation by ``tests/data/claims/build_claims.py``, which shares no code
with the checker) and prints, for the split asked for (``heldout`` by default: the half the
rule was not tuned on), the check's precision and recall at flagging *unsupported* pairs,
the same for the rule it replaced (fewer than half of the sentence's key terms in the text),
and the recall per kind of unsupported pair and the false-alarm rate per kind of supported
pair. ``--errors N`` prints N misjudged pairs with the reason the check gave.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from bench._util import labelled_texts
from research_agent.memory.critique.citation_support import key_terms, term_set
from research_agent.text.support import lexical_support, prepare

PAIRS = Path(__file__).resolve().parent.parent / "tests" / "data" / "claims" / "pairs.jsonl"


def load(split: str) -> list[dict[str, str]]:
    pairs = labelled_texts(PAIRS)
    return pairs if split == "all" else [p for p in pairs if p["split"] == split]


def new_rule(pair: dict[str, str]) -> tuple[bool, str]:
    verdict = lexical_support(pair["sentence"], prepare(pair["passage"]))
    return verdict.weak, verdict.reason


def old_rule(pair: dict[str, str]) -> tuple[bool, str]:
    terms = key_terms(pair["sentence"])
    found = terms & term_set(pair["passage"])
    return bool(terms) and 2 * len(found) < len(terms), f"{len(found)} of {len(terms)} key terms"


def score(pairs: list[dict[str, str]], rule: Callable[[dict[str, str]], tuple[bool, str]]) -> dict[str, float]:
    flagged = {p["id"]: rule(p)[0] for p in pairs}
    positive = [p for p in pairs if p["label"] == "unsupported"]
    tp = sum(flagged[p["id"]] for p in positive)
    fp = sum(flagged[p["id"]] for p in pairs if p["label"] == "supported")
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / len(positive) if positive else 0.0
    return {"precision": precision, "recall": recall, "tp": tp, "fp": fp, "positives": len(positive)}


def per_kind(pairs: list[dict[str, str]], rule: Callable[[dict[str, str]], tuple[bool, str]]) -> list[str]:
    out = []
    totals = Counter(p["kind"] for p in pairs)
    flagged = Counter(p["kind"] for p in pairs if rule(p)[0])
    changes = Counter(p["change"] for p in pairs if p["kind"] == "near_miss")
    caught = Counter(p["change"] for p in pairs if p["kind"] == "near_miss" and rule(p)[0])
    for kind in ("excerpt", "paraphrase", "near_miss", "neighbour"):
        what = "false alarms" if kind in ("excerpt", "paraphrase") else "caught"
        out.append(f"  {kind:<11} {flagged[kind]:>3} of {totals[kind]:>3} {what}")
    for change in sorted(changes):
        out.append(f"    near_miss/{change:<8} {caught[change]:>3} of {changes[change]:>3} caught")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("heldout", "dev", "all"), default="heldout")
    parser.add_argument("--errors", type=int, default=0, metavar="N")
    args = parser.parse_args()
    pairs = load(args.split)
    print(f"{len(pairs)} pairs ({args.split}; {PAIRS.relative_to(Path.cwd()) if PAIRS.is_relative_to(Path.cwd()) else PAIRS})")
    for name, rule in (("lexical check (text/support.py)", new_rule), ("previous rule (half the key terms)", old_rule)):
        s = score(pairs, rule)
        print(f"{name}: precision {s['precision']:.2f}, recall {s['recall']:.2f} "
              f"(flagged {s['tp']} of {s['positives']} unsupported, {s['fp']} supported)")  # fmt: skip
        print("\n".join(per_kind(pairs, rule)))
    shown = 0
    for pair in pairs:
        weak, reason = new_rule(pair)
        if shown < args.errors and weak != (pair["label"] == "unsupported"):
            shown += 1
            print(f"\n{pair['id']} {pair['kind']}{'/' + pair['change'] if pair['change'] else ''}: "
                  f"{'flagged' if weak else 'passed'} ({reason or 'no reason'})\n  S: {pair['sentence']}\n"
                  f"  P: {pair['passage'][:300]}")  # fmt: skip


if __name__ == "__main__":
    main()
