"""Build the labelled (sentence, passage) set the lexical claim check is measured on.

Run: ``python tests/data/claims/build_claims.py [DOCS] > tests/data/claims/pairs.jsonl``
where DOCS is the reStructuredText sources of the Python 3.11 documentation, as Debian's
``python3.11-doc`` package installs them (default ``/usr/share/doc/python3.11/html/_sources``).

The set is deterministic for a given DOCS (a fixed seed, sorted files). It shares no code with
the checker (``research_agent.memory.critique.citation_support``): it imports nothing from
``research_agent``, so that a change to the checker cannot quietly change what it is graded on.

Each line is one pair: ``{"id", "split", "kind", "label", "sentence", "passage", "doc"}``.

* ``supported`` pairs: ``excerpt`` (a sentence of the passage, as a report would cite it) and
  ``paraphrase`` (the same sentence reworded: clauses dropped, words swapped for synonyms,
  hedges and connectives added, active and passive forms switched).
* ``unsupported`` pairs: ``near_miss`` (the passage's own sentence with one number, one name or
  one negation changed; at least a third of the unsupported pairs) and ``neighbour`` (a
  sentence cited against a passage on a neighbouring topic: another section of the same page).

``split`` is ``dev`` or ``heldout`` (half each, alternating within each kind): rules are tuned
on ``dev`` only, and ``bench/bench_citations.py`` prints precision and recall on ``heldout``.
"""

from __future__ import annotations

import json
import random
import re
import sys
import textwrap
from pathlib import Path

DEFAULT_DOCS = Path("/usr/share/doc/python3.11/html/_sources")
PAGES = "library"  # the library reference: many pages on neighbouring topics
SEED = 20261126
COUNTS = {"excerpt": 90, "paraphrase": 90, "near_miss": 80, "neighbour": 100}
MAX_PASSAGE_WORDS = 120

_ROLE = re.compile(r":[a-z:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_LITERAL = re.compile(r"``([^`]*)``")
_EMPH = re.compile(r"\*{1,2}([^*\s][^*]*?)\*{1,2}")
_LINK = re.compile(r"`([^`<]+?)\s*<[^>]*>`_+")
_REF = re.compile(r"`([^`]+)`_+")
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]][.!?])\s+(?=[A-Z(])")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_NAME = re.compile(r"\b(?:[a-z_]+\.[a-z_][\w.]*|[a-z]+_[a-z_]+|[A-Z][a-z]+[A-Z]\w*|[A-Z]{2,})\b")
_AUX = re.compile(r"\b(is|are|was|were|can|will|does|do|should|must|may|has|have)\b(?! not)")
_NEGATED = re.compile(r"\b(is|are|was|were|can|will|does|do|should|must|may|has|have) not\b")

SYNONYMS = {
    "returns": "gives back", "return": "give back", "function": "routine", "functions": "routines",
    "used": "employed", "use": "employ", "uses": "employs", "create": "make", "creates": "makes",
    "provides": "offers", "provide": "offer", "allows": "lets", "object": "value", "objects": "values",
    "specified": "given", "specify": "give", "default": "standard", "argument": "parameter",
    "arguments": "parameters", "raised": "thrown", "raises": "throws", "contains": "holds",
    "contain": "hold", "called": "invoked", "call": "invoke", "calls": "invokes", "new": "fresh",
    "similar": "alike", "instead": "in its place", "however": "but", "also": "as well",
    "following": "next", "module": "library module", "method": "member function",
}
HEDGES = ("According to the documentation, ", "In short, ", "As documented, ", "Notably, ", "Put simply, ")


def clean(text: str) -> str:
    text = _LINK.sub(r"\1", text)
    text = _REF.sub(r"\1", text)
    text = _ROLE.sub(r"\1", text)
    text = _LITERAL.sub(r"\1", text)
    text = _EMPH.sub(r"\1", text)
    return " ".join(text.replace("\\", "").split())


def sections(path: Path) -> list[list[str]]:
    """The page's prose paragraphs, grouped by section (headings and directive lines split them)."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    out: list[list[str]] = [[]]
    block: list[str] = []
    literal = False

    def flush() -> None:
        nonlocal literal
        if block:
            text = textwrap.dedent("\n".join(block)).strip()
            if not literal and not text.startswith(("..", ">>>", "+", "|", "-", "=", "*", "#")):
                out[-1].append(clean(text))
            literal = text.endswith("::")
            block.clear()

    for i, line in enumerate(lines):
        underline = i + 1 < len(lines) and re.fullmatch(r"([=\-~^\"'`#*+])\1{3,}", lines[i + 1].strip() or "x")
        if underline:
            flush()
            out.append([])
            continue
        if not line.strip() or line.lstrip().startswith(".. ") and not block:
            flush()
        else:
            block.append(line)
    flush()
    return [[p for p in section if 25 <= len(p.split()) <= 220] for section in out if section]


def sentences(paragraph: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(paragraph) if 8 <= len(s.split()) <= 45 and s.endswith(".")]


def window(paragraph: str, sentence: str) -> str:
    """At most MAX_PASSAGE_WORDS words of the paragraph, with the sentence inside."""
    words = paragraph.split()
    if len(words) <= MAX_PASSAGE_WORDS:
        return paragraph
    start_char = paragraph.find(sentence)
    first = len(paragraph[:start_char].split())
    length = len(sentence.split())
    lo = max(0, min(first - (MAX_PASSAGE_WORDS - length) // 2, len(words) - MAX_PASSAGE_WORDS))
    return " ".join(words[lo : lo + MAX_PASSAGE_WORDS])


def paraphrase(sentence: str, rng: random.Random) -> str | None:
    body = sentence.rstrip(".")
    body = re.sub(r"\s*\([^)]*\)", "", body)  # drop parentheticals
    words = body.split()
    swapped = [SYNONYMS.get(w, w) if rng.random() < 0.8 else w for w in words]
    if swapped == words and rng.random() < 0.5:
        return None
    text = " ".join(swapped)
    if ", " in text and rng.random() < 0.4:
        head, _, tail = text.partition(", ")  # the clauses swapped
        if len(tail.split()) >= 4 and len(head.split()) >= 4:
            text = f"{tail[0].upper()}{tail[1:]}, and {head[0].lower()}{head[1:]}"
    hedge = rng.choice(HEDGES) if rng.random() < 0.6 else ""
    if hedge:
        text = hedge + text[0].lower() + text[1:] if not text.split()[0].isupper() else hedge + text
    return text + "."


CHANGES = ("number", "name", "negation")


def near_miss(sentence: str, change: str, names: list[str], rng: random.Random) -> str | None:
    """The sentence with one number, one name or one negation changed (``change``); None when
    the sentence has nothing of that kind to change."""
    if change == "number":
        numbers = _NUMBER.findall(sentence)
        if not numbers:
            return None
        n = rng.choice(numbers)
        changed = str(int(float(n)) * 2 + 1) if "." not in n else f"{float(n) * 2:g}"
        return re.sub(rf"\b{re.escape(n)}\b", changed, sentence, count=1)
    if change == "name":
        found = _NAME.findall(sentence)
        others = [x for x in names if x not in found and x.lower() not in sentence.lower()]
        if not found or not others:
            return None
        return re.sub(rf"\b{re.escape(rng.choice(found))}\b", rng.choice(others), sentence, count=1)
    if _NEGATED.search(sentence):
        return _NEGATED.sub(r"\1", sentence, count=1)
    if _AUX.search(sentence):
        return _AUX.sub(r"\1 not", sentence, count=1)
    return None


def build(docs: Path) -> list[dict[str, str]]:
    rng = random.Random(SEED)
    pages = sorted((docs / PAGES).glob("*.rst.txt"))
    per_page = {p.name.removesuffix(".rst.txt"): sections(p) for p in pages}
    per_page = {k: v for k, v in per_page.items() if sum(1 for s in v if s) >= 2}
    names = sorted({n for secs in per_page.values() for sec in secs for p in sec for n in _NAME.findall(p)})
    pairs: list[dict[str, str]] = []
    made = dict.fromkeys(COUNTS, 0)
    used: set[str] = set()
    docs_order = sorted(per_page)
    while any(made[k] < COUNTS[k] for k in COUNTS):
        doc = rng.choice(docs_order)
        secs = [s for s in per_page[doc] if s]
        si = rng.randrange(len(secs))
        paragraph = rng.choice(secs[si])
        candidates = [s for s in sentences(paragraph) if s not in used]
        if not candidates:
            continue
        sentence = rng.choice(candidates)
        kind = rng.choice([k for k in COUNTS if made[k] < COUNTS[k]])
        passage, claim, note = window(paragraph, sentence), sentence, ""
        if kind == "paraphrase":
            claim = paraphrase(sentence, rng) or ""
        elif kind == "near_miss":
            note = CHANGES[made[kind] % len(CHANGES)]  # the three kinds of change in turn
            claim = near_miss(sentence, note, names, rng) or ""
        elif kind == "neighbour":
            others = [p for j, sec in enumerate(secs) if j != si for p in sec]
            if not others:
                continue
            passage = rng.choice(others)
            passage = " ".join(passage.split()[:MAX_PASSAGE_WORDS])
            if sentence in passage:
                continue
        if not claim or claim == sentence and kind in ("paraphrase", "near_miss"):
            continue
        used.add(sentence)
        made[kind] += 1
        label = "supported" if kind in ("excerpt", "paraphrase") else "unsupported"
        pairs.append({"kind": kind, "change": note, "label": label, "sentence": claim + " [1]",
                      "passage": passage, "doc": f"{PAGES}/{doc}"})  # fmt: skip
    for kind in COUNTS:  # half of each kind held out, alternating
        for i, pair in enumerate(p for p in pairs if p["kind"] == kind):
            pair["split"] = "dev" if i % 2 == 0 else "heldout"
    for i, pair in enumerate(pairs, start=1):
        pair["id"] = f"p{i:03d}"
    return pairs


def main() -> None:
    docs = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DOCS
    if not (docs / PAGES).is_dir():
        sys.exit(f"error: {docs / PAGES} not found (apt-get install python3.11-doc)")
    for pair in build(docs):
        order = ("id", "split", "kind", "change", "label", "sentence", "passage", "doc")
        print(json.dumps({k: pair[k] for k in order}, ensure_ascii=False))


if __name__ == "__main__":
    main()
