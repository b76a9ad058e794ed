"""Web addresses in a report's prose that no source has: made up, or remembered, never read.

A weak model invents addresses (``https://github.com/LuigiBoschi/asyncio``, four times, in a
report whose sources were local files). An address in the writer's prose is *known* when it is
a source's location, or the site of one (``https://docs.python.org`` beside a page of it), its
scheme, ``www.``, fragment and trailing slash aside. Anything else is an issue of the lint:

- critical when it looks like a citation: a link's target, an address in angle brackets,
  parentheses or square brackets, or an address that stands alone (at most one word beside
  it, as in "Source: https://...");
- a warning when it sits in running text.

A report with no Sources list is not checked: nothing tells which addresses its sources have.
A run takes every unknown address out of each draft as the writer gives it
(:func:`without_unknown`, :func:`research_agent.run.writing.known_only`), before the draft is
reviewed: the review reads what is published, so ``review`` of the report agrees with the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ...text.debris import real_words
from ..issues import Issue
from ..markdown import ParsedReport
from .common import lint_issue

__all__ = ["ADDRESS_REMOVED", "UNKNOWN_ADDRESS", "check_addresses", "known_addresses", "without_unknown"]

UNKNOWN_ADDRESS = "unknown_address"
ADDRESS_REMOVED = "(address removed)"
_ADDRESS = re.compile(r"(?<![\w.+-])(?:(?:https?|ftp)://|www\.)[^\s<>()\[\]{}\"'`]+", re.I)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_TRAILING = ".,;:!?*_'\""
_LINK = re.compile(r"\[([^\[\]\n]*)\]\(\s*<?\s*$")  # "[label](" just before an address


def address_key(address: str) -> str:
    """An address as two mentions of it compare: no scheme, ``www.``, fragment or trailing slash;
    the host in lower case."""
    text = _SCHEME.sub("", address.strip().rstrip(_TRAILING)).split("#", 1)[0]
    host, _, path = text.partition("/")
    host = host.lower().removeprefix("www.")
    return f"{host}/{path}".rstrip("/")


def known_addresses(locations: Iterable[str]) -> frozenset[str]:
    """The keys of the web addresses among ``locations`` (sources' locations or Sources lines),
    and of their sites."""
    known: set[str] = set()
    for location in locations:
        for match in _ADDRESS.finditer(location):
            key = address_key(match.group(0))
            known.update((key, key.split("/", 1)[0]))
    return frozenset(known)


@dataclass(frozen=True)
class _Found:
    start: int  # what a citation-like mention takes with it: "[label](", "<", "(" included
    end: int
    address: str
    cited: bool  # looks like a citation
    label: str = ""  # a link's text, kept when the link goes


def _unknown(text: str, known: frozenset[str]) -> list[_Found]:
    found = []
    for match in _ADDRESS.finditer(text):
        address = match.group(0).rstrip(_TRAILING)
        if address_key(address) in known:
            continue
        start, end = match.start(), match.start() + len(address)
        link = _LINK.search(text, 0, start)
        if link is not None:
            close = text.find(")", end)
            found.append(_Found(link.start(), close + 1 if close >= 0 else end, address, True, link.group(1)))
            continue
        opening, closing = text[start - 1 : start], text[end : end + 1]
        if (opening, closing) in (("<", ">"), ("(", ")"), ("[", "]")):
            found.append(_Found(start - 1, end + 1, address, True))
            continue
        alone = len(real_words(text[:start] + " " + text[end:])) <= 1
        found.append(_Found(start, end, address, alone))
    return found


def without_unknown(text: str, known: frozenset[str]) -> tuple[str, int]:
    """``text`` with every address no source has taken out, each in its place marked
    :data:`ADDRESS_REMOVED` (a link keeps its words before the mark), and how many were."""
    found = _unknown(text, known)
    for item in reversed(found):
        mark = f"{item.label.strip()} {ADDRESS_REMOVED}" if item.label.strip() else ADDRESS_REMOVED
        text = text[: item.start] + mark + text[item.end :]
    return text, len(found)


def check_addresses(doc: ParsedReport) -> list[Issue]:
    """Addresses in the prose that no source in the Sources list has (see the module docstring)."""
    if doc.sources_heading is None:
        return []
    known = known_addresses(entry.text for entry in doc.sources)
    issues = []
    for block in doc.blocks:
        for item in _unknown(block.text, known):
            issues.append(
                lint_issue(
                    UNKNOWN_ADDRESS,
                    "critical" if item.cited else "warning",
                    block.line_at(item.start),
                    item.address,
                    "no source has this web address"
                    + (", yet it is given as a citation" if item.cited else ": it was not read in this research"),
                    "cite a numbered source for the point instead, or remove the address",
                )
            )
    return issues
