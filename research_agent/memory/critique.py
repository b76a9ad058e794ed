"""Critique one finished run: facts from its record, one model judgement, one YAML file.

:func:`critique_run` reads ``run-<id>.yaml`` (safely, size-capped) and the report it
names, computes facts the program knows exactly (:class:`RunFacts`), asks the fast
model once at temperature 0 against the rubric in ``prompts/critique.md``, cleans the
answer (scores clamped to 1-5, free text sanitized to one line of at most 200
characters, at most 5 items), writes ``critique-<id>.yaml`` next to the run record,
prunes to the retention limit and logs one line to ``critique.log``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..config import MODES, Settings
from ..domains import normalize_domain
from ..errors import InputError, InvalidModelOutput, StorageError
from ..fetch.urls import normalize_url, registrable_domain
from ..llm import ChatModel, ChatRequest, UsageRecorder
from ..passages import tokenize
from ..prompts import render
from ..safefile import check_folder_inside
from ..sanitize import sanitize, wrap_data
from .evidence import MAX_REPORT_BYTES, MAX_RUN_RECORD_BYTES, locate_report, read_report_file
from .safeyaml import UnsafeYaml, load_yaml_file
from .schema import (
    DIMENSION_LABELS,
    DIMENSIONS,
    GATE_DECISIONS,
    MAX_ITEMS,
    MAX_TEXT,
    TAGS,
    Critique,
    CritiqueUsage,
    Scores,
    SkepticFlag,
    is_pass,
    mean_of,
)
from .store import append_log, critique_file_name, prune_critiques, write_critique

__all__ = [
    "RunFacts",
    "ANSWER_SCHEMA",
    "MAX_RUN_RECORD_BYTES",
    "MAX_REPORT_BYTES",
    "REPORT_PROMPT_CHARS",
    "load_run_record",
    "read_report",
    "compute_facts",
    "build_request",
    "critique_from_answer",
    "critique_run",
    "summarize",
]

REPORT_PROMPT_CHARS = 30_000  # about 7,500 tokens: a deep report fits whole

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["scores", "weaknesses", "suggestions", "tags"],
    "properties": {
        "scores": {
            "type": "object",
            "additionalProperties": False,
            "required": list(DIMENSIONS),
            "properties": {d: {"type": "integer", "enum": [1, 2, 3, 4, 5]} for d in DIMENSIONS},
        },
        "weaknesses": {"type": "array", "items": {"type": "string"}},
        "suggestions": {"type": "array", "items": {"type": "string"}},
        "tags": {"type": "array", "items": {"type": "string", "enum": list(TAGS)}},
    },
}

_CITATION = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")
_LENS = re.compile(r"[^a-z0-9_]+")
_SKIP_SECTIONS = {"sources", "lessons applied"}


@dataclass(frozen=True)
class RunFacts:
    """What the program knows exactly about a run and its report."""

    query: str
    domain: str
    mode: str
    gate_decision: str
    considered: int
    kept: int
    dropped: int
    unscored: int
    snippet_only: int
    sites: tuple[tuple[str, int], ...]  # (registrable site, kept sources from it), most first
    cited_sources: int
    paragraphs: int
    cited_paragraphs: int
    citations: int
    words: int
    viability: int | None
    findings: tuple[tuple[str, int], ...]  # (severity, count)
    sub_queries: tuple[str, ...]
    unanswered: tuple[str, ...]

    @property
    def distinct_sites(self) -> int:
        return len(self.sites)

    @property
    def top_site_share(self) -> float:
        return self.sites[0][1] / self.kept if self.sites and self.kept else 0.0

    @property
    def answered(self) -> int:
        return len(self.sub_queries) - len(self.unanswered)

    @property
    def citations_per_paragraph(self) -> float:
        return round(self.citations / self.paragraphs, 2) if self.paragraphs else 0.0

    def tags(self) -> tuple[str, ...]:
        """Tags the facts alone justify."""
        out = []
        if self.kept and (self.distinct_sites == 1 or (self.kept >= 3 and self.top_site_share >= 0.6)):
            out.append("single_site")
        if self.kept < 3:
            out.append("few_sources")
        if len(self.sub_queries) >= 2 and self.answered * 2 < len(self.sub_queries):
            out.append("unanswered_sub_queries")
        if self.kept >= 2 and self.snippet_only * 2 > self.kept:
            out.append("snippet_only_sources")
        return tuple(out)

    def as_text(self) -> str:
        """The facts as plain lines (sanitized), for the critique prompt."""
        sites = ", ".join(f"{site} x{count}" if count > 1 else site for site, count in self.sites[:12])
        findings = ", ".join(f"{count} {severity}" for severity, count in self.findings) or "none"
        lines = [
            f"gate decision: {self.gate_decision}",
            f"sources considered: {self.considered}; kept (distinct): {self.kept}; dropped: {self.dropped}; "
            f"unscored: {self.unscored}; read from snippet only: {self.snippet_only}",
            f"distinct sites among kept sources: {self.distinct_sites}" + (f" ({sites})" if sites else ""),
            f"largest share of kept sources from one site: {round(self.top_site_share * 100)}%",
            f"kept sources cited in the report: {self.cited_sources} of {self.kept}",
            f"paragraphs: {self.paragraphs}; with at least one citation: {self.cited_paragraphs}; "
            f"citations per paragraph: {self.citations_per_paragraph}",
            f"report words: {self.words}",
            f"skeptic viability (0-100): {'n/a' if self.viability is None else self.viability}; findings: {findings}",
            f"sub-queries: {len(self.sub_queries)}; answered in the report (by term overlap): {self.answered}",
        ]
        lines += [f"unanswered sub-query: {q}" for q in self.unanswered[:6]]
        return "\n".join(sanitize(line, single_line=True, max_chars=600) for line in lines)


def load_run_record(path: Path) -> dict[str, Any]:
    """Read a run record safely (size cap, nesting, safe YAML) and check the fields a critique needs.

    The record may be a symlink only to a file in its own folder.
    """
    path = Path(path)
    try:
        data = load_yaml_file(
            path, max_bytes=MAX_RUN_RECORD_BYTES, within=path.absolute().parent, allow_symlink=True
        )
    except UnsafeYaml as exc:
        raise InputError(f"run record {path}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"run record {path}: expected a mapping of fields")
    for key in ("id", "query", "mode", "report_path", "model"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise InputError(f"run record {path}: missing or empty field {key!r}")
    try:
        critique_file_name(data["id"])
    except StorageError:
        raise InputError(f"run record {path}: id {data['id'][:80]!r} is not a run id") from None
    if data["mode"] not in MODES:
        raise InputError(f"run record {path}: unknown mode {data['mode'][:20]!r}")
    if data.get("gate_decision") not in GATE_DECISIONS:
        raise InputError(f"run record {path}: gate_decision must be one of {', '.join(GATE_DECISIONS)}")
    for key in ("sources", "sub_queries", "iterations"):
        if data.get(key) is not None and not isinstance(data[key], list):
            raise InputError(f"run record {path}: {key} must be a list")
    return data


def read_report(record_path: Path, record: Mapping[str, Any]) -> tuple[Path, str]:
    """Find and read the report a run record names: a regular file (not a symlink) inside
    the reports folder the record sits in (``<reports>/meta/run-<id>.yaml``), as named or
    by its name there; anything else is an InputError."""
    reports_dir = Path(record_path).absolute().parent.parent
    path = locate_report(reports_dir, record["report_path"], record["id"])
    return path, read_report_file(path, reports_dir)


def _strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :].lstrip("\n")
    return text


def _body_blocks(report: str) -> list[str]:
    """Paragraph-like blocks of the report body, without headings, Sources or Lessons Applied."""
    blocks: list[str] = []
    skipping = False
    for block in re.split(r"\n\s*\n", _strip_front_matter(report)):
        kept_lines: list[str] = []
        for line in block.strip().splitlines():
            if line.lstrip().startswith("#"):
                skipping = line.strip().lstrip("#").strip().lower() in _SKIP_SECTIONS
                continue
            if not skipping and line.strip():
                kept_lines.append(line)
        if kept_lines:
            blocks.append("\n".join(kept_lines))
    return blocks


def _source_key(source: Mapping[str, Any]) -> str:
    location = str(source.get("location") or source.get("title") or "")
    return normalize_url(location) if "://" in location else location


def _site(source: Mapping[str, Any]) -> str:
    site = source.get("site")
    if isinstance(site, str) and site.strip():
        return site.strip().lower()
    location = str(source.get("location") or "")
    return registrable_domain(location) if "://" in location else location


def compute_facts(record: Mapping[str, Any], report: str) -> RunFacts:
    """Facts about a run from its record and report text."""
    sources = [s for s in record.get("sources") or [] if isinstance(s, dict)]
    kept: dict[str, Mapping[str, Any]] = {}
    dropped: set[str] = set()
    unscored: set[str] = set()
    for source in sources:
        key = _source_key(source)
        status = source.get("status")
        if status == "kept":
            kept.setdefault(key, source)
        elif status == "unscored":
            unscored.add(key)
        else:
            dropped.add(key)
    dropped -= set(kept)
    site_counts = Counter(_site(s) for s in kept.values())
    sites = tuple(sorted(site_counts.items(), key=lambda kv: (-kv[1], kv[0])))
    kept_numbers = {s.get("n") for s in kept.values() if isinstance(s.get("n"), int)}

    blocks = _body_blocks(report)
    cited: set[int] = set()
    citations = cited_paragraphs = 0
    for block in blocks:
        numbers = [int(n) for group in _CITATION.findall(block) for n in group.split(",")]
        citations += len(numbers)
        cited_paragraphs += bool(numbers)
        cited.update(numbers)
    body = "\n".join(blocks)
    body_terms = set(tokenize(body))

    sub_queries = tuple(str(q) for q in record.get("sub_queries") or [] if isinstance(q, str | int | float))
    unanswered = []
    for query in sub_queries:
        terms = {t for t in tokenize(query) if len(t) > 2}
        if terms and len(terms & body_terms) / len(terms) < 0.5:
            unanswered.append(query)

    skeptic = record.get("skeptic") if isinstance(record.get("skeptic"), dict) else {}
    viability = skeptic.get("viability")
    severities = Counter(
        str(f.get("severity"))
        for f in skeptic.get("findings") or []
        if isinstance(f, dict) and f.get("severity")
    )
    order = {"critical": 0, "concern": 1, "observation": 2}
    findings = tuple(sorted(severities.items(), key=lambda kv: (order.get(kv[0], 3), kv[0])))

    return RunFacts(
        query=str(record.get("query", "")),
        domain=normalize_domain(record.get("domain")),
        mode=str(record.get("mode", "")),
        gate_decision=str(record.get("gate_decision", "")),
        considered=len({_source_key(s) for s in sources}),
        kept=len(kept),
        dropped=len(dropped),
        unscored=len(unscored - set(kept)),
        snippet_only=sum(1 for s in kept.values() if s.get("snippet_only") is True),
        sites=sites,
        cited_sources=len(cited & kept_numbers) if kept_numbers else len(cited),
        paragraphs=len(blocks),
        cited_paragraphs=cited_paragraphs,
        citations=citations,
        words=len(body.split()),
        viability=viability if isinstance(viability, int) and not isinstance(viability, bool) else None,
        findings=findings,
        sub_queries=sub_queries,
        unanswered=tuple(unanswered),
    )


_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_LESSONS_SECTION = re.compile(r"^## Lessons Applied\b.*\Z", re.S | re.M)


def _gradable(report: str) -> str:
    """The report without what the prompt already states (front matter) or what is not graded (lessons)."""
    return _LESSONS_SECTION.sub("", _FRONT_MATTER.sub("", report, count=1)).strip()


def build_request(facts: RunFacts, report: str) -> ChatRequest:
    """The one structured call: fast tier, temperature 0, outside text sanitized and wrapped as data."""
    prompt = render(
        "critique",
        query=sanitize(facts.query, single_line=True, max_chars=500),
        domain=facts.domain,
        mode=facts.mode,
        facts=wrap_data("run facts (computed by the program)", facts.as_text()),
        report=wrap_data("report to grade", sanitize(_gradable(report), max_chars=REPORT_PROMPT_CHARS)),
    )
    return ChatRequest(
        stage="critique",
        system=prompt.system,
        user=prompt.user,
        schema=ANSWER_SCHEMA,
        temperature=0.0,
        tier="fast",
        max_tokens=900,
    )


def _clean_texts(values: Any) -> tuple[str, ...]:
    out: list[str] = []
    for value in values if isinstance(values, list) else []:
        if not isinstance(value, str):
            continue
        text = sanitize(value, single_line=True, max_chars=MAX_TEXT)
        if text and text not in out:
            out.append(text)
        if len(out) == MAX_ITEMS:
            break
    return tuple(out)


def _clamp_score(value: Any, dimension: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidModelOutput(f"critique answer: {dimension} is not a score", stage="critique")
    try:
        number = float(value)
    except ValueError:
        raise InvalidModelOutput(f"critique answer: {dimension} is not a score", stage="critique") from None
    if math.isnan(number):
        raise InvalidModelOutput(f"critique answer: {dimension} is not a score", stage="critique")
    return min(5, max(1, round(number)))


def _skeptic_flags(record: Mapping[str, Any]) -> tuple[SkepticFlag, ...]:
    skeptic = record.get("skeptic") if isinstance(record.get("skeptic"), dict) else {}
    findings = [f for f in skeptic.get("findings") or [] if isinstance(f, dict)]
    rank = {"critical": 0, "concern": 1}
    notable = sorted((f for f in findings if f.get("severity") in rank), key=lambda f: rank[f["severity"]])
    flags = []
    for finding in notable[:MAX_ITEMS]:
        lens = _LENS.sub("_", str(finding.get("lens") or "skeptic").lower()).strip("_")[:40] or "skeptic"
        if not lens[0].isalpha():
            lens = f"lens_{lens}"[:40]
        detail = f"{finding['severity']}: {finding.get('claim') or ''} - {finding.get('reason') or ''}"
        flags.append(SkepticFlag(lens, sanitize(detail, single_line=True, max_chars=MAX_TEXT)))
    return tuple(flags)


def _applied(record: Mapping[str, Any]) -> tuple[bool, tuple[str, ...]]:
    block = record.get("lessons") if isinstance(record.get("lessons"), dict) else {}
    texts = [a.get("text") for a in block.get("applied") or [] if isinstance(a, dict)]
    applied = _clean_texts(texts)
    return bool(block.get("adaptive")) and bool(applied), applied


def critique_from_answer(
    record: Mapping[str, Any],
    facts: RunFacts,
    answer: Any,
    *,
    timestamp: datetime,
    report_path: str,
    usage: CritiqueUsage | None = None,
) -> Critique:
    """Turn the model's answer and the run's facts into a clean, valid Critique.

    ``usage``: what the critique's own model calls cost, stored in the file.
    """
    if not isinstance(answer, dict) or not isinstance(answer.get("scores"), dict):
        raise InvalidModelOutput("critique answer has no scores object", stage="critique")
    raw = answer["scores"]
    missing = [d for d in DIMENSIONS if d not in raw]
    if missing:
        raise InvalidModelOutput(f"critique answer has no score for {', '.join(missing)}", stage="critique")
    scores = {d: _clamp_score(raw[d], d) for d in DIMENSIONS}
    model_tags = [t for t in answer.get("tags") or [] if isinstance(t, str) and t in TAGS]
    tags = tuple(dict.fromkeys([*facts.tags(), *model_tags]))[:MAX_ITEMS]
    adaptive, applied = _applied(record)
    return Critique(
        id=record["id"],
        query=sanitize(record["query"], single_line=True, max_chars=500) or "(empty query)",
        query_domain=facts.domain,
        mode=facts.mode,
        timestamp=timestamp.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        model_version=sanitize(record["model"], single_line=True, max_chars=200),
        report_path=sanitize(report_path, single_line=True, max_chars=1000),
        scores=Scores(**scores),
        mean_score=mean_of(scores),
        overall_pass=is_pass(scores),
        weaknesses=_clean_texts(answer.get("weaknesses")),
        suggestions=_clean_texts(answer.get("suggestions")),
        tags=tags,
        skeptic_flags=_skeptic_flags(record),
        gate_decision=facts.gate_decision,
        source_count=facts.kept,
        dropped_count=facts.dropped,
        adaptive=adaptive,
        lessons_applied=applied,
        usage=usage,
    )


async def critique_run(
    run_record_path: Path,
    model: ChatModel,
    *,
    settings: Settings,
    now: datetime | None = None,
    meta_dir: Path | None = None,
) -> Critique:
    """Critique the run recorded at ``run_record_path``; write, prune and log; return the critique.

    The critique file goes into ``meta_dir`` (default: the run record's folder), which
    must not lead out of its parent folder. Every model call is counted into the
    critique's ``usage``. A failure is logged to ``critique.log`` there and re-raised.
    """
    run_record_path = Path(run_record_path)
    folder = Path(meta_dir) if meta_dir is not None else run_record_path.absolute().parent
    subject = run_record_path.name
    when = (now or datetime.now(UTC)).astimezone(UTC)
    try:
        check_folder_inside(folder, folder.parent)
        record = load_run_record(run_record_path)
        subject = critique_file_name(record["id"])
        _, report = read_report(run_record_path, record)
        facts = compute_facts(record, report)
        recorder = UsageRecorder(model)
        response = await recorder.complete(build_request(facts, report))
        critique = critique_from_answer(
            record,
            facts,
            response.data,
            timestamp=when,
            report_path=record["report_path"],
            usage=CritiqueUsage.from_usage(recorder.total),
        )
        write_critique(folder, critique)
        prune_critiques(folder, settings.max_critiques, protect=[critique.id], now=when)
    except Exception as exc:
        message = str(exc) or type(exc).__name__
        try:
            append_log(folder, "FAIL", subject, message)
        except Exception as log_exc:  # the original error matters more than the log line
            exc.add_note(f"critique.log could not be written either: {log_exc}")
        raise
    append_log(
        folder,
        "ok",
        subject,
        f"mean {critique.mean_score:.2f}, {'pass' if critique.overall_pass else 'fail'}",
    )
    return critique


def summarize(critique: Critique, *, path: Path | None = None) -> str:
    """A short human summary of a critique."""
    verdict = "pass" if critique.overall_pass else "fail"
    scores = ", ".join(f"{DIMENSION_LABELS[d]} {critique.scores.get(d)}" for d in DIMENSIONS)
    lines = [f"critique of {critique.id}: mean {critique.mean_score:.2f}/5 ({verdict})", f"  {scores}"]
    if critique.tags:
        lines.append(f"  tags: {', '.join(critique.tags)}")
    lines += [f"  weakness: {w}" for w in critique.weaknesses[:3]]
    if path is not None:
        lines.append(f"  saved to {path}")
    return "\n".join(lines)
