"""The templates a lesson's text is written from, one per key (or kind of key).

Each template opens with what it is about (the weakness, or the site), never with a
shared boilerplate phrase, so a prompt's lessons read as distinct points. Slots take
only validated values: non-negative integers, and site names that pass
:func:`~research_agent.memory.store.names.valid_site`; ``k`` is the number of critiques behind
the lesson and ``n`` the number it was counted over. :func:`lesson_text` refuses
anything else (the lesson is then not written at all).
"""

from __future__ import annotations

import re
import string
from functools import cache

from ...store.names import valid_site
from ...store.schema import MAX_LESSON_TEXT, key_kind
from .evidence import Evidence

__all__ = ["TEMPLATES", "lesson_text", "written_from_template"]

TEMPLATES: dict[str, str] = {
    "coverage:unanswered": (
        "Sub-queries that found nothing worth keeping: {unanswered} of {asked} across {k} of the last {n} "
        "reports. Phrase each one as a question a single page can answer directly."
    ),
    "coverage:low-score": (
        "Coverage fell short in {k} of the last {n} reports (scored 2, or parts of the question went "
        "uncovered): give each part of the question its own sub-query."
    ),
    "counterarguments:missing": (
        "Counterarguments were missing in {k} of the last {n} reports: add a sub-query for criticism, "
        "limitations and opposing views."
    ),
    "recency:old-sources": (
        "Sources ran old for a time-sensitive question in {k} of the last {n} reports (median age {age} "
        "days{oldest}): add a sub-query for developments of the last year."
    ),
    "breadth:few-sources": (
        "Few sources survived judging in {k} of the last {n} reports the user did not cap (median {kept} "
        "kept of {found} found): word sub-queries more broadly so that more pages qualify."
    ),
    "breadth:sites": (
        "Source spread was narrow in {k} of the last {n} reports the user did not cap{dominant}: aim "
        "sub-queries at other kinds of publisher."
    ),
    "geography:regions": (
        "Geographic balance was weak in {k} of the {n} recent reports where it applied: include a "
        "sub-query aimed at other regions."
    ),
    "primary:evidence": (
        "Primary evidence was thin in {k} of the last {n} reports: add a sub-query for studies, official "
        "data or original documents."
    ),
    "primary:practical": (
        "Practical guidance was vague in {k} of the last {n} reports: add a sub-query for concrete "
        "figures, steps or costs."
    ),
    "site:kept": (
        "{site}: kept {kept} of {pages} pages and cited {cited} across {reports} reports; its pages have "
        "proved relevant to questions like these."
    ),
    "site:dropped": (
        "{site}: dropped {dropped} of {pages} pages across {reports} reports; expect little from it, and "
        "judge each page on what it shows."
    ),
    "source-kind:snippet-only": (
        "Snippet-only pages went with weakly supported citations in {k} of the last {n} reports ({weak} of "
        "{sentences} cited sentences): score such a page on what its snippet itself states."
    ),
    "source-kind:press-release": (
        "Press releases and marketing pages went with weakly supported citations in {k} of the last {n} "
        "reports: score them below independent sources that state the same facts."
    ),
}


def _template(key: str) -> str | None:
    kind = key_kind(key)
    if kind in ("site:kept", "site:dropped"):
        return TEMPLATES[kind]
    return TEMPLATES.get(key)


def _valid_slot(name: str, value: object) -> bool:
    if name in ("site", "top"):
        return value == "" if name == "top" and value == "" else valid_site(value)
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10_000_000


def _phrases(slots: dict[str, int | str]) -> dict[str, str]:
    """Optional parts of a template, present only when their slot holds a value."""
    year, top = slots.get("year", 0), slots.get("top", "")
    return {
        "oldest": f", oldest from {year}" if year else "",
        "dominant": f"; {top} supplied most kept pages in {slots.get('top_reports', 0)} of them"
        if top
        else ", one site supplying most kept pages",
    }


def lesson_text(evidence: Evidence) -> str | None:
    """The lesson's text from its template, or None when the key has no template or a
    slot holds anything but a validated value."""
    template = _template(evidence.key)
    slots = dict(evidence.slots)
    if template is None or not all(_valid_slot(name, value) for name, value in slots.items()):
        return None
    if "site" in slots and evidence.key.rsplit(":", 1)[-1] != slots["site"]:
        return None  # the key and the text always name the same site
    try:
        text = template.format(k=len(evidence.ids), **_phrases(slots), **slots)
    except KeyError:  # a slot the template needs is missing
        return None
    return text if len(text) <= MAX_LESSON_TEXT else None


_NUMBER = r"\d{1,8}"
_SITE = r"[^\s;:]{1,253}"  # then checked with valid_site
# The optional phrases of :func:`_phrases`, as patterns (a site in them is checked like a slot).
_PHRASE_PATTERNS = {
    "oldest": rf"(?:, oldest from {_NUMBER})?",
    "dominant": rf"(?:; (?P<top>{_SITE}) supplied most kept pages in {_NUMBER} of them|, one site supplying most kept pages)",
}


@cache
def _pattern(template: str) -> re.Pattern[str]:
    parts = []
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name is not None:
            parts.append(_PHRASE_PATTERNS.get(name) or (rf"(?P<site>{_SITE})" if name == "site" else _NUMBER))
    return re.compile("".join(parts))


def written_from_template(key: str, text: str) -> bool:
    """True when ``text`` is what ``key``'s template writes with some validated slot values: only
    numbers, and the key's own site (or another valid site name where the template names one).
    Such a text holds nothing a critique file could have planted, so it may be shown as stored
    even after the lesson's counts have moved on."""
    template = _template(key)
    match = _pattern(template).fullmatch(text) if template is not None and len(text) <= MAX_LESSON_TEXT else None
    if match is None:
        return False
    named = match.groupdict()
    if named.get("site") is not None and named["site"] != key.rsplit(":", 1)[-1]:
        return False
    return named.get("top") is None or valid_site(named["top"])
