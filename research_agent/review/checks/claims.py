"""Lint check of numeric claims: a sentence with a figure, a date or a number and no citation.

Percentages, money, large quantities and multipliers are critical; years, dates and
other numbers are warnings. The report's own scores and the gate's counts are not claims.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ...text.citations import CITED, blank, mask_code_and_urls, sentence_spans
from ...text.masking import seen_text
from ..issues import Issue, Severity
from ..markdown import ParsedReport
from .common import claim_context, lint_issue

__all__ = ["check_numeric_claims", "OWN_SCORE"]

_N = r"\d+(?:[.,]\d+)*"
_BEFORE = r"(?<![\w.,/-])"
_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)


class _NumericKind(NamedTuple):
    name: str
    severity: Severity
    pattern: re.Pattern[str]
    reason: str
    fix: str


# In a sentence the first critical match wins, else the first warning.
_NUMERIC_KINDS: tuple[_NumericKind, ...] = tuple(
    _NumericKind(*kind)
    for kind in (
        (
            "percentage",
            "critical",
            re.compile(rf"{_BEFORE}[-+]?{_N}\s?(?:%|percent\b|per\s?cent\b|percentage points?\b|pp\b)", re.I),
            "numeric claim without a citation",
            "cite the source that gives this figure, or remove it",
        ),
        (
            "money",
            "critical",
            re.compile(
                rf"(?:US|A|C)?[$€£¥₹]\s?{_N}(?:\s?(?:k|m|bn?|million|billion|trillion|thousand)\b)?"
                rf"|{_BEFORE}{_N}\s?(?:million|billion|trillion)?\s?(?:USD|EUR|GBP|JPY|dollars?|euros?)\b",
                re.I,
            ),
            "monetary figure without a citation",
            "cite the source that gives this figure, or remove it",
        ),
        (
            "magnitude",
            "critical",
            re.compile(rf"{_BEFORE}{_N}\s?(?:thousand|million|billion|trillion|bn)\b", re.I),
            "large quantity without a citation",
            "cite the source that gives this figure, or remove it",
        ),
        (
            "multiplier",
            "critical",
            re.compile(
                rf"{_BEFORE}{_N}(?:[x×](?!\w)|\s?-?fold\b|\s+times\s+(?:more|less|fewer|higher|lower|faster|slower"
                rf"|larger|smaller|greater|as)\b)",
                re.I,
            ),
            "comparative figure without a citation",
            "cite the source that gives this figure, or remove it",
        ),
        (
            "date",
            "warning",
            re.compile(
                rf"(?<!\w){_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|(?<!\w)\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}\b"
                r"|(?<![\w.])\d{4}-\d{2}-\d{2}\b|(?<![\w./])\d{1,2}/\d{1,2}/\d{2,4}\b"
            ),
            "date without a citation",
            "cite the source for this date, or remove it",
        ),
        (
            "year",
            "warning",
            re.compile(r"(?<![\w.,/$€£-])(?:1[5-9]\d\d|20\d\d|21\d\d)(?:s|'s)?(?![\w%]|[.,]\d)"),
            "date without a citation",
            "cite the source for this date, or remove it",
        ),
        (
            "number",
            "warning",
            re.compile(rf"{_BEFORE}[-−]?{_N}(?![\d])(?!(?:st|nd|rd|th)\b)"),
            "number without a citation",
            "cite the source that gives this number, or remove it",
        ),
    )
)

# The tool's own scores are not claims about the world: "Viability of the answer from these
# sources: 82/100." and "The skeptic rated viability 30/100, below the threshold of 51".
# The same goes for the gate's own counts ("12 source(s) scored but only 0 reached relevance 3;
# at least 1 needed"), which the short report quotes as its reason, and the review's own counts
# ("3 critical issue(s) ... after 2 revision(s)") in the note of a report its review rejected, and
# the length it quotes ("250 words, target 1200") and the lines it lists ("at lines 18, 22 and 3
# more") among the issues left open.
OWN_SCORE = re.compile(
    r"\bviability\b[^.\d\n]{0,60}?\b\d{1,3}/100\b(?:,\s*below the threshold of \d{1,3}\b)?"
    r"|\b\d{1,4} (?:relevant )?(?:source|site)\(s\)|\breached relevance \d\b|\bat least \d{1,4} needed\b"
    r"|\bneeds \d{1,4} from \d{1,4}\b|\b\d{1,4} (?:critical )?issue\(s\)|\b\d{1,4} revision\(s\)"
    r"|\b\d{1,6} words(?:, target \d{1,6}\b| of prose\b)|\btarget of \d{1,6}\b"
    r"|\bClaims checked against their sources: [^\n]{0,600}"  # the claim check's own counts (one line)
    r"|\bat lines \d{1,6}(?:, \d{1,6})*(?: and \d{1,6} more)?",  # where the issues left open stand
    re.I,
)

# A sentence marked disputed is no longer asserted: it is not an unsupported claim. The mark is
# looked for in the seen text (not in a comment, code, a link or a tag).
_DISPUTED = re.compile(r"\[disputed\]", re.I)
_DISPUTED_AFTER = re.compile(r"\s*\[disputed\]", re.I)


def _disputed(text: str, start: int, end: int) -> bool:
    """True when the sentence at ``text[start:end]`` holds the mark, or is followed by it."""
    return bool(_DISPUTED.search(text, start, end) or _DISPUTED_AFTER.match(text, end))

# Numbers after these words are references into the document, not claims.
_REFERENCE_WORD = re.compile(
    r"(?:\b(?:sections?|chapters?|figures?|fig\.|tables?|steps?|phases?|parts?|pages?|pp\.|p\.|appendix"
    r"|items?|questions?|lines?|rounds?|levels?|stages?|tiers?|no\.|options?|points?|sources?)|#)\s*$",
    re.I,
)


def _numeric_match(sentence: str) -> tuple[re.Match[str], _NumericKind] | None:
    """The figure that decides about ``sentence`` (the first critical one, else the first warning)."""
    found: list[tuple[int, int, re.Match[str], _NumericKind]] = []
    taken: list[tuple[int, int]] = []
    for kind in _NUMERIC_KINDS:
        for m in kind.pattern.finditer(sentence):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            if kind.name == "number":
                digits = m.group(0).lstrip("-−")
                if digits.isdigit() and len(digits) == 1:
                    continue  # "3 options", "step 2": too common to be a claim
                if _REFERENCE_WORD.search(sentence[max(0, m.start() - 16) : m.start()]):
                    continue
            taken.append((m.start(), m.end()))
            found.append((0 if kind.severity == "critical" else 1, m.start(), m, kind))
            break  # one match of a kind is enough to decide about the sentence
    if not found:
        return None
    _, _, match, kind = min(found, key=lambda item: (item[0], item[1]))
    return match, kind


def check_numeric_claims(doc: ParsedReport) -> list[Issue]:
    """Sentences with numbers, percentages or dates but no citation.

    Percentages, money, large quantities and multipliers are critical; years, dates and
    other numbers are warnings. Single-digit counts, ordinals, numbers glued to words
    (COVID-19, CO2, GPT-4), references like "Section 12", citations, list markers,
    headings, URLs and code are not claims, and neither is a sentence marked "[Disputed]".
    """
    issues: list[Issue] = []
    for block in doc.blocks:
        masked = blank(mask_code_and_urls(block.text), OWN_SCORE)
        cites = [(m.start(), m.end()) for m in CITED.finditer(masked)]
        masked = blank(masked, CITED)
        seen = seen_text(block.text) if "[" in block.text else block.text  # where a reader sees the mark
        index = 0
        for start, end in sentence_spans(masked):
            while index < len(cites) and cites[index][0] < start:
                index += 1
            if (index < len(cites) and cites[index][0] < end) or _disputed(seen, start, end):
                continue  # a cited sentence, or one the writer marked as disputed
            found = _numeric_match(masked[start:end])
            if found is None:
                continue
            match, kind = found
            at = start + match.start()
            context = claim_context(block.text, at, start + match.end(), start)
            issues.append(
                lint_issue(
                    "unsupported_claim", kind.severity, block.line_at(at), context, kind.reason, kind.fix
                )
            )
    return issues
