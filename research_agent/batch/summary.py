"""One page for what a batch produced: ``reports/batch-<id>.md`` (and ``.html``), or one JSON object.

:func:`summary_data` is the content, once: totals at the top (questions by state, review
verdicts, claims checked and the unsupported share, sources kept, tokens and cost, wall time,
what the endpoint's limits did), the lessons whose status changed during the batch, and one row
per question: status, review verdict, claims checked and unsupported share, sources kept,
tokens and cost, wall time, and its report. The markdown page links each report; the HTML page
(the export's style, no script, nothing from outside) links each report's HTML export. Every
question and error is outside text: escaped on both pages.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import ResearchError
from ..files.atomic import atomic_write_text
from ..shapes import Plain
from ..text.mdsafe import plain_text
from .state import BatchState, Entry

__all__ = ["BatchTotals", "LessonChange", "summary_data", "summary_markdown", "summary_html", "write_summary",
           "lesson_statuses", "lesson_changes", "report_link", "duration_text", "cost_text", "html_page"]

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 160


def lesson_statuses(settings: Settings, now: datetime | None = None) -> dict[str, str]:
    """``domain/key -> status`` of every lesson in memory now ({} when memory cannot be read)."""
    from ..service.memory import Memory

    try:
        effects = Memory(settings).effects(now=now or datetime.now(UTC))
    except (ResearchError, OSError) as exc:
        log.info("lesson statuses not read: %s", exc)
        return {}
    return {f"{effect.domain}/{effect.key}": effect.status for effect in effects}


@dataclass(frozen=True)
class LessonChange(Plain):
    """A lesson whose status changed during the batch (``new``: it did not exist; ``gone``: it no longer does)."""

    domain: str
    key: str
    before: str
    after: str


@dataclass(frozen=True)
class BatchTotals(Plain):
    """Counts over the batch: questions by state, review verdicts, claims checked and the unsupported
    share (None: none checked), sources kept, tokens and cost (None when a price is unknown), the
    questions' seconds summed and the batch's wall time."""

    questions: int
    done: int
    failed: int
    pending: int
    running: int
    approved: int
    rejected: int
    claims_checked: int
    unsupported_share: float | None
    sources_kept: int
    tokens: int
    cost_usd: float | None
    question_seconds: float
    wall_seconds: float


def lesson_changes(before: dict[str, str], after: dict[str, str]) -> list[dict[str, str]]:
    changes = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name, "new"), after.get(name, "gone")
        if old != new:
            domain, _, key = name.partition("/")
            changes.append(LessonChange(domain, key, old, new).as_dict())
    return changes


def _question(entry: Entry) -> dict[str, Any]:
    outcome = entry.outcome if entry.state == "done" else {}
    return {
        "line": entry.line, "question": entry.question, "status": entry.state, "attempts": entry.attempts,
        "error": entry.error, "run_id": entry.run_id, "seconds": entry.seconds, "options": entry.options,
        **{name: outcome.get(name) for name in ("review", "claims_checked", "unsupported_share", "sources_kept",
                                                 "tokens", "cost_usd", "report", "html", "critique")},
    }  # fmt: skip


def _totals(questions: list[dict[str, Any]], wall_seconds: float) -> BatchTotals:
    done = [q for q in questions if q["status"] == "done"]
    checked = sum(q["claims_checked"] or 0 for q in done)
    unsupported = sum((q["unsupported_share"] or 0) * (q["claims_checked"] or 0) for q in done)
    costs = [q["cost_usd"] for q in done]
    return BatchTotals(
        questions=len(questions),
        **{state: sum(1 for q in questions if q["status"] == state) for state in ("done", "failed", "pending", "running")},
        approved=sum(1 for q in done if q["review"] == "approved"),
        rejected=sum(1 for q in done if q["review"] == "rejected"),
        claims_checked=checked,
        unsupported_share=round(unsupported / checked, 3) if checked else None,
        sources_kept=sum(q["sources_kept"] or 0 for q in done),
        tokens=sum(q["tokens"] or 0 for q in done),
        cost_usd=None if any(c is None for c in costs) else round(sum(costs), 6),
        question_seconds=round(sum(q["seconds"] for q in questions), 1),
        wall_seconds=round(wall_seconds, 1),
    )  # fmt: skip


def _recorded_calls(state: BatchState) -> int | None:
    """The model calls the run records of the batch's finished questions count (every answer received,
    the structured-output retries included: what the server saw), summed; None when no record can
    be read. The records are looked up beside the state file, by run id only."""
    from ..ids import is_run_id
    from ..record import read_run_record

    calls, read = 0, 0
    for entry in state.entries:
        if entry.state != "done" or not is_run_id(entry.run_id):
            continue
        try:
            record = read_run_record(Path(state.path).parent / f"run-{entry.run_id}.yaml", allow_symlink=False)
        except (ResearchError, OSError) as exc:
            log.info("run record of %s not read for the call count: %s", entry.run_id, exc)
            continue
        calls += sum(usage.calls for usage in record.usage.values())
        read += 1
    return calls if read else None


def summary_data(state: BatchState, *, lessons_now: dict[str, str]) -> dict[str, Any]:
    """Everything the batch page shows (and ``--json`` prints). The endpoint's call count is the
    run records' sum (:func:`_recorded_calls`), not the limits' count of calls let through, which
    sees a call with its retries as one."""
    questions = [_question(entry) for entry in state.entries]
    limits = dict(state.limits)
    if limits:
        limits["admitted"] = limits.get("calls", 0)
        limits["calls"] = _recorded_calls(state)
    return {
        "id": state.id, "file": state.file, "status": state.status, "created": state.created,
        "state_path": str(state.path), "totals": _totals(questions, state.wall_seconds).as_dict(),
        "limits": limits, "lessons_changed": lesson_changes(state.lessons_at_start, lessons_now),
        "questions": questions,
    }  # fmt: skip


def duration_text(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def cost_text(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def _share(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


def _status(q: dict[str, Any]) -> str:
    if q["status"] == "failed":
        return f"failed after {q['attempts']} attempt(s): {q['error']}"
    critique = q["critique"] or {}
    if q["status"] == "done" and critique.get("state") not in (None, "skipped"):
        score = f", mean {critique['mean_score']:.1f}" if critique.get("mean_score") is not None else ""
        return f"done (critique {critique['state']}{score})"
    return q["status"]


def _lines(data: dict[str, Any]) -> list[str]:
    """The facts above the table, as plain text (escaped by each page)."""
    t, limits = data["totals"], data["limits"] or {}
    lines = [
        f"{t['questions']} question{'' if t['questions'] == 1 else 's'}: {t['done']} done, {t['failed']} failed, {t['pending'] + t['running']} not run yet",
        f"review: {t['approved']} approved, {t['rejected']} rejected; claims checked {t['claims_checked']}, "
        f"{_share(t['unsupported_share'])} unsupported; sources kept {t['sources_kept']}",
        f"tokens {t['tokens']:,}; cost {cost_text(t['cost_usd'])}; wall time {duration_text(t['wall_seconds'])} "
        f"(questions {duration_text(t['question_seconds'])} summed)",
    ]
    if limits:
        calls = limits.get("calls")
        counted = (f"{calls} calls (the run records' sum)" if calls is not None
                   else f"{limits.get('admitted', 0)} calls let through the limits (no run record read)")  # fmt: skip
        lines.append(f"endpoint: {counted}, {limits.get('pauses', 0)} pause(s) after a 429 "
                     f"({limits.get('paused_seconds', 0)} s), {limits.get('waited_seconds', 0)} s waited for the limits")
    changes = data["lessons_changed"]
    lines.append("lessons that changed status: " + (
        "; ".join(f"{c['key']} ({c['domain']}): {c['before']} \u2192 {c['after']}" for c in changes) if changes else "none"))
    return lines


_COLUMNS = ("#", "Question", "Status", "Review", "Claims checked", "Unsupported", "Sources kept", "Tokens", "Cost",
            "Time", "Report")  # fmt: skip


def _cells(q: dict[str, Any]) -> list[str]:
    done = q["status"] == "done"
    return [str(q["line"]), q["question"], _status(q), (q["review"] or "-") if done else "-",
            str(q["claims_checked"]) if done else "-", _share(q["unsupported_share"]) if done else "-",
            str(q["sources_kept"]) if done else "-", f"{q['tokens']:,}" if done else "-",
            cost_text(q["cost_usd"]) if done else "-", duration_text(q["seconds"]) if q["seconds"] else "-"]  # fmt: skip


def report_link(path: str, reports_dir: Path) -> str:
    """A report's address from the batch page beside it: its name when it lies in the reports folder."""
    target = Path(path)
    return target.name if target.parent.resolve() == Path(reports_dir).resolve() else target.resolve().as_uri()


def summary_markdown(data: dict[str, Any], reports_dir: Path) -> str:
    """The batch page in markdown."""
    out = [f"# Batch {data['id']}", ""]
    out += [f"- {plain_text(line)}" for line in [f"file: {data['file'] or '(questions given directly)'}",
                                                  f"status: {data['status']}", *_lines(data)]]  # fmt: skip
    out += ["", "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
    for q in data["questions"]:
        cells = _cells(q)  # the question and the status (an error's text) come from outside: made inert
        cells[1:3] = [plain_text(cells[1], max_chars=MAX_QUESTION_CHARS), plain_text(cells[2], max_chars=400)]
        report = f"[report](<{report_link(q['report'], reports_dir)}>)" if q["report"] and q["status"] == "done" else "-"
        out.append("| " + " | ".join([*cells, report]) + " |")
    return "\n".join(out) + "\n"


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer">
<title>{title}</title>
<style>
{style}
body {{ max-width: 90rem; }} table {{ border-collapse: collapse; font: 0.9rem/1.4 var(--sans); }}
th, td {{ border-bottom: 1px solid var(--rule); padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }}
</style>
</head>
<body>
<header class="masthead"><p class="kicker">{kicker}</p><h1>{title}</h1></header>
<main>
<ul>{facts}</ul>
<table><thead><tr>{head}</tr></thead><tbody>
{rows}
</tbody></table>
</main>
</body>
</html>
"""


def html_page(title: str, kicker: str, lines: list[str], columns: tuple[str, ...], rows: list[str]) -> str:
    """A page of facts and one table, self-contained in the export's style (no script, nothing from
    outside): ``lines`` and ``columns`` are plain text (escaped here), ``rows`` ready ``<tr>`` markup."""
    style = resources.files("research_agent.export").joinpath("report.css").read_text(encoding="utf-8")
    return _PAGE.format(title=escape(title), kicker=escape(kicker), style=style,
                        facts="".join(f"<li>{escape(line)}</li>" for line in lines),
                        head="".join(f"<th>{escape(c)}</th>" for c in columns), rows="\n".join(rows))  # fmt: skip


def summary_html(data: dict[str, Any], reports_dir: Path) -> str:
    """The batch page as one self-contained HTML page; each report links to its HTML export."""
    rows = []
    for q in data["questions"]:
        cells = "".join(f"<td>{escape(cell)}</td>" for cell in _cells(q))
        target = q["html"] or q["report"]
        link = f'<a href="{escape(report_link(target, reports_dir))}">report</a>' if target and q["status"] == "done" else "-"
        rows.append(f"<tr>{cells}<td>{link}</td></tr>")
    lines = [f"file: {data['file'] or '(questions given directly)'}", f"status: {data['status']}", *_lines(data)]
    return html_page(f"Batch {data['id']}", "Research batch", lines, _COLUMNS, rows)


def write_summary(data: dict[str, Any], reports_dir: Path, *, html: bool) -> list[Path]:
    """Write the batch page (markdown, and HTML when asked), atomically; the paths written."""
    state_id = data["id"]
    written = [atomic_write_text(Path(reports_dir) / f"batch-{state_id}.md", summary_markdown(data, reports_dir))]
    if html:
        written.append(atomic_write_text(Path(reports_dir) / f"batch-{state_id}.html", summary_html(data, reports_dir)))
    return written
