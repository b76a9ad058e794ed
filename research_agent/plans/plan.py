"""The plan as a person sees it, gives and edits: the question, its domain, the sub-queries.

``research-agent plan`` prints (or writes) it as one JSON object, which ``run --plan FILE``, the
MCP ``research`` tool's ``plan`` argument and the workbench's review form take back::

    {"question": "...", "domain": "technology", "sub_queries": ["...", "..."]}

Wherever it comes from, a plan is checked the same way (:func:`checked_plan`), and a bad one is
refused in one line naming what is wrong (an :class:`~research_agent.errors.InputError`, exit 2):

* ``question``: the question as a run takes it; when the run names its own question too, the
  two must be the same (whitespace and case aside): a plan made for another question is refused;
* ``domain``: one of the fixed taxonomy (:data:`research_agent.domains.DOMAINS`); left out, ``other``;
* ``sub_queries``: 1 to :data:`MAX_SUB_QUERIES` search queries of at most 200 characters, no
  control characters, each one a search a person would type, as the planner's are screened
  (:func:`research_agent.stages._sub_queries.query_problem`: not mostly punctuation, no address
  with a query string, no schema fragment, at least two real words...). Repeats are merged.

A person edits the sub-queries as text, one a line (:func:`editable_text`, :func:`plan_from_text`),
in ``$EDITOR`` or in the workbench's box.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..domains import DEFAULT_DOMAIN, parse_domain
from ..errors import InputError
from ..files.safefile import UnsafeFile, read_text_capped
from ..run.assembly import validate_query
from ..shapes import Plain
from ..stages._sub_queries import query_problem
from ..text.controls import has_controls, one_line

__all__ = [
    "MAX_SUB_QUERIES", "MAX_SUB_QUERY_CHARS", "MAX_PLAN_BYTES", "ResearchPlan", "checked_plan", "checked_sub_queries",
    "read_plan_file", "editable_text", "plan_from_text",
]  # fmt: skip

MAX_SUB_QUERIES = 12  # a person may plan more than a mode asks of the model, within reason
MAX_SUB_QUERY_CHARS = 200  # as the planner's are cut
MAX_PLAN_BYTES = 64 * 1024
_FIELDS = ("question", "domain", "sub_queries")


@dataclass(frozen=True)
class ResearchPlan(Plain):
    """A plan: the ``question``, its ``domain`` and the ``sub_queries`` the run searches. Its plain form
    (``as_dict``) is the plan as ``research-agent plan`` prints it and a plan file holds it."""

    question: str
    domain: str
    sub_queries: tuple[str, ...]

    def with_sub_queries(self, sub_queries: Sequence[str]) -> ResearchPlan:
        return ResearchPlan(self.question, self.domain, tuple(sub_queries))


def _same_question(a: str, b: str) -> bool:
    return one_line(a).casefold() == one_line(b).casefold()


def checked_plan(data: object, *, question: str | None = None, where: str = "the plan") -> ResearchPlan:
    """The plan ``data`` (a JSON object's dict) holds, checked (see the module docstring); ``question``:
    the run's own, which the plan's must match (None: the plan's is the run's). ``where`` starts
    every refusal (``plan file plan.json``)."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: not a JSON object with {', '.join(_FIELDS)}")
    unknown = sorted(str(k)[:40] for k in data if k not in _FIELDS)
    if unknown:
        raise InputError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; a plan has {', '.join(_FIELDS)}")
    asked = data.get("question", question)
    if not isinstance(asked, str):
        raise InputError(f"{where}: no question (a plan's \"question\" is a string)")
    asked = _checked(validate_query, asked, where)
    if question is not None and not _same_question(asked, question):
        raise InputError(f"{where} was made for another question ({asked[:80]!r}): run it with that question, "
                         "or make a plan for this one")  # fmt: skip
    domain = data.get("domain", DEFAULT_DOMAIN)
    if not isinstance(domain, str):
        raise InputError(f"{where}: the domain must be a string")
    domain = _checked(parse_domain, domain, where)
    items = data.get("sub_queries")
    if not isinstance(items, list):
        raise InputError(f"{where}: \"sub_queries\" must be a list of search queries")
    return ResearchPlan(asked, domain, checked_sub_queries(items, where=where))


def _checked(check: Callable[[str], str], value: str, where: str) -> str:
    """``check(value)``, its refusal starting with ``where``."""
    try:
        return check(value)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def checked_sub_queries(items: Sequence[object], *, where: str = "the plan") -> tuple[str, ...]:
    """``items`` as sub-queries a run searches: tidied, repeats merged, each checked (see the module docstring)."""
    queries: list[str] = []
    for n, item in enumerate(items, start=1):
        if not isinstance(item, str):
            raise InputError(f"{where}: sub-query {n} is not text")
        text = one_line(item)
        problem = _problem(text)
        if problem:
            raise InputError(f"{where}: sub-query {n} ({text[:60]!r}) {problem}")
        if text.casefold() not in {q.casefold() for q in queries}:
            queries.append(text)
    if not queries:
        raise InputError(f"{where}: no sub-query: give at least one search query")
    if len(queries) > MAX_SUB_QUERIES:
        raise InputError(f"{where}: {len(queries)} sub-queries; at most {MAX_SUB_QUERIES}")
    return tuple(queries)


def _problem(text: str) -> str:
    if not text:
        return "is empty"
    if has_controls(text):
        return "holds control characters"
    if len(text) > MAX_SUB_QUERY_CHARS:
        return f"is {len(text)} characters long; the limit is {MAX_SUB_QUERY_CHARS}"
    problem = query_problem(text)
    return f"is no search query: {problem}" if problem else ""


def read_plan_file(path: Path, *, question: str | None = None) -> ResearchPlan:
    """The plan in the JSON file ``path``, checked (:func:`checked_plan`); InputError in one line
    for a file that cannot be read, is no JSON or holds a bad plan."""
    where = f"plan file {path}"
    try:
        text = read_text_capped(Path(path), max_bytes=MAX_PLAN_BYTES, follow_symlinks=True)
    except (UnsafeFile, OSError) as exc:
        raise InputError(f"{where}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise InputError(f"{where}: not JSON (nested too deeply)") from None
    return checked_plan(data, question=question, where=where)


_HEADER = (
    "# The plan for: {question}\n"
    "# Domain: {domain}\n"
    "# One search query a line. Lines starting with # are left out.\n"
    "# Save and close to go on; an empty list stops the run.\n"
)


def editable_text(plan: ResearchPlan) -> str:
    """The plan's sub-queries as a person edits them: a commented header, then one a line."""
    header = _HEADER.format(question=one_line(plan.question), domain=plan.domain)
    return header + "".join(f"{query}\n" for query in plan.sub_queries)


def plan_from_text(plan: ResearchPlan, text: str, *, where: str = "the edited plan") -> ResearchPlan | None:
    """``plan`` with the sub-queries of the edited ``text`` (one a line, ``#`` lines left out), checked;
    None when the person left no sub-query (they stop the run)."""
    lines = [line.strip() for line in text.splitlines()]
    queries = [line for line in lines if line and not line.startswith("#")]
    if not queries:
        return None
    if tuple(queries) == plan.sub_queries:  # left as it was: the plan itself, whatever its checks would say now
        return plan
    return plan.with_sub_queries(checked_sub_queries(queries, where=where))
