"""Custom lint rules, loaded from a YAML file the user writes.

The file holds a list of rules, either at the top level or under ``rules:``::

    rules:
      - name: no-weasel-words
        pattern: "\\b(?:clearly|obviously|undeniably)\\b"
        reason: weasel word that asserts instead of showing evidence
        fix: state the evidence and cite it, or drop the word
        severity: warning            # critical | warning
        flags: [ignorecase]          # optional: ignorecase, multiline, dotall, verbose
        type: style                  # optional: groups the rule's issues in the feedback

The file is read like every YAML file the tool reads (size-capped, nesting depth
checked before any parser sees it, safe loader, no anchors or foreign tags: see
:mod:`research_agent.files.safeyaml`); a symlink may lead only to a file inside the
rules file's own folder. Every field is checked on load, and any problem is an
:class:`~research_agent.errors.InputError` whose one-line message names the file and
the rule.

Patterns are compiled with the ``regex`` module, whose matching can be stopped: each
rule gets a time budget per text (:class:`RuleLimits`, :data:`RULE_TIME_BUDGET`) and
never runs past the run's deadline, so a pattern that backtracks catastrophically
(``^(\\w+\\s?)+$`` on a long line) costs seconds, not the run.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, RuleDeadline
from ..files.safefile import UnsafeFile, read_text_capped
from ..files.safeyaml import UnsafeYaml, load_yaml_text
from ..text.controls import one_line
from .issues import Severity

__all__ = [
    "Rule",
    "RuleLimits",
    "RuleDeadline",
    "load_rules",
    "parse_rules",
    "RULE_FLAGS",
    "RULE_TIME_BUDGET",
    "MAX_RULES_BYTES",
    "MAX_RULES",
]

MAX_RULES_BYTES = 256 * 1024
MAX_RULES = 200
MAX_PATTERN_CHARS = 2000
MAX_TEXT_CHARS = 500

RULE_TIME_BUDGET = 2.0  # seconds one rule may spend on one text
RULE_FLAGS: dict[str, str] = {  # the rule's flag: the regex module's name for it
    "ignorecase": "IGNORECASE",
    "multiline": "MULTILINE",
    "dotall": "DOTALL",
    "verbose": "VERBOSE",
}
_FIELDS = {"name", "pattern", "reason", "fix", "severity", "flags", "type"}
_REQUIRED = ("name", "pattern", "reason", "fix", "severity")
_NAME = re.compile(r"^[\w][\w .:/-]{0,79}$")


@dataclass(frozen=True)
class Rule:
    """One custom lint rule. Construction validates it and raises InputError if unusable."""

    name: str
    pattern: str
    reason: str
    fix: str
    severity: Severity = "warning"
    flags: tuple[str, ...] = ()
    type: str | None = None
    compiled: Any = field(init=False, repr=False, compare=False)  # a regex.Pattern

    def __post_init__(self) -> None:
        label = f"rule {self.name!r}" if isinstance(self.name, str) and self.name else "a rule"
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InputError(f"{label}: name must be 1-80 letters, digits, spaces or . : / - _")
        for key in ("pattern", "reason", "fix"):
            value = getattr(self, key)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{label}: {key} must be a non-empty string")
        if len(self.pattern) > MAX_PATTERN_CHARS:
            raise InputError(f"{label}: pattern is longer than {MAX_PATTERN_CHARS} characters")
        for key in ("reason", "fix"):
            if len(getattr(self, key)) > MAX_TEXT_CHARS or "\n" in getattr(self, key).strip():
                raise InputError(f"{label}: {key} must be one line of at most {MAX_TEXT_CHARS} characters")
        if self.severity not in ("critical", "warning"):
            raise InputError(f"{label}: severity must be 'critical' or 'warning', not {self.severity!r}")
        if self.type is not None and (not isinstance(self.type, str) or not _NAME.match(self.type)):
            raise InputError(f"{label}: type must be a short name (letters, digits, spaces, . : / - _)")
        import regex  # loaded with the first rule: a run without rules never needs it (20 ms)

        bits = 0
        for flag in self.flags:
            if flag not in RULE_FLAGS:
                raise InputError(f"{label}: unknown flag {flag!r} (use {', '.join(RULE_FLAGS)})")
            bits |= getattr(regex, RULE_FLAGS[flag])
        try:
            compiled = regex.compile(self.pattern, bits)
        except (regex.error, ValueError, OverflowError) as exc:
            raise InputError(f"{label}: bad pattern: {exc}") from None
        if compiled.fullmatch("") is not None:
            raise InputError(f"{label}: pattern matches empty text, so it would match everywhere")
        object.__setattr__(self, "compiled", compiled)

    @property
    def issue_type(self) -> str:
        """The Issue.type of this rule's issues: its ``type``, else ``rule:<name>``."""
        return self.type or f"rule:{self.name}"

    def find(self, text: str, *, timeout: float | None, limit: int) -> list[tuple[int, str]]:
        """(offset, matched text) of the first ``limit`` non-empty matches in ``text``.

        Raises TimeoutError when matching takes longer than ``timeout`` seconds in all.
        """
        found: list[tuple[int, str]] = []
        for m in self.compiled.finditer(text, timeout=timeout):
            if m.end() == m.start():
                continue
            found.append((m.start(), m.group(0)))
            if len(found) >= limit:
                break
        return found


@dataclass(frozen=True)
class RuleLimits:
    """How long custom rules may run: ``per_rule`` seconds each, none past ``deadline``.

    ``deadline`` is a ``clock()`` value (``time.monotonic`` by default, the clock of
    asyncio's event loop), or None for no overall deadline.
    """

    per_rule: float = RULE_TIME_BUDGET
    deadline: float | None = None
    clock: Callable[[], float] = time.monotonic

    def next_budget(self) -> tuple[float, bool]:
        """(seconds the next rule may take, True when the deadline rather than ``per_rule`` sets it)."""
        if self.deadline is None:
            return self.per_rule, False
        left = max(0.0, self.deadline - self.clock())
        return (left, True) if left < self.per_rule else (self.per_rule, False)


def _rule_from(raw: Any, index: int) -> Rule:
    where = f"rule #{index}"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: must be a mapping with name, pattern, reason, fix, severity")
    if isinstance(raw.get("name"), str) and raw["name"].strip():
        where = f"rule {raw['name'].strip()!r}"
    unknown = sorted(str(k) for k in raw if k not in _FIELDS)
    if unknown:
        raise InputError(
            f"{where}: unknown field(s) {', '.join(unknown)} (allowed: {', '.join(sorted(_FIELDS))})"
        )
    missing = [k for k in _REQUIRED if raw.get(k) in (None, "")]
    if missing:
        raise InputError(f"{where}: missing field(s) {', '.join(missing)}")
    for key in ("name", "pattern", "reason", "fix", "severity"):
        if not isinstance(raw[key], str):
            raise InputError(f"{where}: {key} must be a string")
    flags = raw.get("flags") or []
    if isinstance(flags, str):
        flags = [flags]
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise InputError(f"{where}: flags must be a list of names like [ignorecase, multiline]")
    kind = raw.get("type")
    if kind is not None and not isinstance(kind, str):
        raise InputError(f"{where}: type must be a string")
    try:
        return Rule(
            name=raw["name"].strip(),
            pattern=raw["pattern"],
            reason=raw["reason"].strip(),
            fix=raw["fix"].strip(),
            severity=raw["severity"].strip().lower(),
            flags=tuple(f.strip().lower() for f in flags),
            type=kind.strip() if isinstance(kind, str) else None,
        )
    except InputError as exc:
        if str(exc).startswith("rule "):
            raise
        raise InputError(f"{where}: {exc}") from None


def parse_rules(text: str, *, source: str = "rules") -> tuple[Rule, ...]:
    """Rules from YAML ``text``; ``source`` names the file in error messages."""
    if len(text.encode("utf-8")) > MAX_RULES_BYTES:
        raise InputError(f"{source}: larger than {MAX_RULES_BYTES // 1024} KiB")
    try:
        data = load_yaml_text(text.removeprefix("\ufeff"))
    except UnsafeYaml as exc:
        raise InputError(f"{source}: not valid YAML ({one_line(exc)})") from None
    if data is None:
        return ()
    if isinstance(data, dict):
        extra = sorted(str(k) for k in data if k != "rules")
        if extra:
            raise InputError(f"{source}: unknown top-level key(s) {', '.join(extra)} (expected 'rules')")
        data = data.get("rules") or []
    if not isinstance(data, list):
        raise InputError(f"{source}: expected a list of rules (or a mapping with 'rules:')")
    if len(data) > MAX_RULES:
        raise InputError(f"{source}: {len(data)} rules, more than the limit of {MAX_RULES}")
    rules: list[Rule] = []
    names: set[str] = set()
    for index, raw in enumerate(data, start=1):
        try:
            rule = _rule_from(raw, index)
        except InputError as exc:
            raise InputError(f"{source}: {one_line(exc)}") from None
        if rule.name in names:
            raise InputError(f"{source}: rule {rule.name!r} is defined twice")
        names.add(rule.name)
        rules.append(rule)
    return tuple(rules)


def load_rules(path: Path) -> tuple[Rule, ...]:
    """Read and validate the rules file at ``path``; an empty file has no rules."""
    path = Path(path)
    source = f"rules file {path}"
    if not path.is_file():
        raise InputError(f"{source}: not found" if not path.exists() else f"{source}: not a file")
    try:
        if path.stat().st_size > MAX_RULES_BYTES:
            raise InputError(f"{source}: larger than {MAX_RULES_BYTES // 1024} KiB")
        text = read_text_capped(
            path, max_bytes=MAX_RULES_BYTES, inside=path.absolute().parent, follow_symlinks=True
        )
    except UnsafeFile as exc:
        raise InputError(f"{source}: {exc}") from None
    except OSError as exc:
        raise InputError(f"{source}: cannot read ({exc.strerror or exc})") from None
    return parse_rules(text, source=source)
