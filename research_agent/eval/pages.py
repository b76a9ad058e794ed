"""An eval's pages: ``reports/eval-<id>.md``, ``.html`` and ``.json``, one row per run linking its report.

:func:`scorecard_lines` says the scorecard in plain lines (the world, the summary, fact recall per
kind, the rounds, how far the critic can be trusted, the lessons that changed): the markdown page,
the HTML page and the command's output all show them. Every question, sentence and error is outside
text: made inert on the markdown page and escaped on the HTML page (the batch page's style: no
script, nothing from outside).
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from ..batch.summary import cost_text, duration_text, html_page, report_link
from ..files.atomic import atomic_write_text
from ..text.mdsafe import plain_text

__all__ = ["scorecard_lines", "question_cells", "write_pages", "page_paths", "COLUMNS", "MAX_LISTED_UNSUPPORTED"]

COLUMNS = ("#", "Question", "Kind", "Round", "Status", "Found", "Cited", "Stale", "Unsupported", "Declined")
MAX_LISTED_UNSUPPORTED = 200
MAX_QUESTION_CHARS = 160


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _summary_lines(data: dict[str, Any]) -> list[str]:
    s, o = data["summary"], data["options"]
    lines = [
        f"fact recall {_share(s['fact_recall'])} ({s['found']} of {s['checkpoints']} checkpoints found in "
        f"{s['reports']} report(s)); cited precision {_share(s['cited_precision'])} ({s['cited']} of {s['found']} "
        "found were cited to a page that states them)",
        f"stale: {s['stale']} report(s) state a superseded value as current; unsupported names and numbers: "
        f"{_share(s['unsupported_per_report'])} a report ({s['unsupported']} in all)",
        f"unanswerable questions declined: {s['declined']} of {s['unanswerable']}",
        f"words {s['words']:,}; tokens {s['tokens']:,}; cost {cost_text(s['cost_usd'])}; model calls {s['calls']:,}; "
        f"wall time {duration_text(s['wall_seconds'])}"
        + (f"; {s['failed']} run(s) failed" if s["failed"] else "") + (f"; {s['not_run']} not run yet" if s["not_run"] else ""),
    ]  # fmt: skip
    if data["kinds"]:
        lines.append("fact recall by kind: " + ", ".join(f"{k} {_share(v)}" for k, v in data["kinds"].items()))
    lines.insert(0, f"mode {o.get('mode', '?')}, model {o.get('model', '?')}; {o['rounds']} round(s)"
                    + ("; holdout: lessons from the learning half, recall of the measured half" if o["holdout"] else "")
                    + ("" if o.get("critique", True) else "; no critique"))  # fmt: skip
    return lines


def _round_lines(data: dict[str, Any]) -> list[str]:
    if len(data["rounds"]) < 2:
        return []
    lines = []
    for row in data["rounds"]:
        given = ", ".join(f"{key} ({n} run{'s' * (n != 1)})" for key, n in row["lessons"].items()) or "none"
        versus = f"; {row['vs_round_1']['words']}" if "vs_round_1" in row else ""
        lines.append(f"round {row['round']}: fact recall {_share(row['fact_recall'])} over {row['reports']} "
                     f"report(s){versus}; lessons given: {given}")  # fmt: skip
    return lines


def scorecard_lines(data: dict[str, Any]) -> list[str]:
    """The scorecard in plain lines (see the module docstring)."""
    w = data["world"]
    seed = f", seed {w['seed']}" if w.get("seed") is not None else ""
    lines = [f"world {w['name']} ({w['questions']} questions, {w['pages']} pages{seed}) at {w['path']}",
             f"status: {data['status']}", *_summary_lines(data), *_round_lines(data)]  # fmt: skip
    if data["critic"]:
        lines += ["how far the critic can be trusted: " + t["words"] for t in data["critic"]]
    elif data["summary"]["reports"]:
        lines.append("how far the critic can be trusted: no report was critiqued (quick mode or --no-critique)")
    changes = data["lessons_changed"]
    lines.append("lessons that changed status: " + (
        "; ".join(f"{c['key']} ({c['domain']}): {c['before']} \u2192 {c['after']}" for c in changes) if changes else "none"))
    return lines


def question_cells(q: dict[str, Any]) -> list[str]:
    """A run's row of the question table, as plain text (the caller makes it inert or escapes it)."""
    round_ = f"{q['round']}" + (f" ({q['half']})" if q["half"] else "")
    status = q["status"] if q["status"] != "failed" else f"failed: {q['error']}"
    if not q["graded"]:
        return [q["id"], q["question"], q["kind"], round_, status, "-", "-", "-", "-", "-"]
    points = len(q["checkpoints"])
    declined = ("yes" if q["declined"] else "no") + ("" if q["answerable"] else " (unanswerable)")
    return [q["id"], q["question"], q["kind"], round_, status, f"{q['found']}/{points}", f"{q['cited']}/{q['found']}",
            ", ".join(q["stale"]) or "-", str(len(q["unsupported"])), declined]  # fmt: skip


def _unsupported_lines(data: dict[str, Any]) -> list[str]:
    found = [(q, u) for q in data["questions"] if q["graded"] for u in q["unsupported"]]
    return [f"{q['id']} (round {q['round']}): {u['token']}: \u201c{u['sentence']}\u201d" for q, u in found]


def _markdown(data: dict[str, Any], reports_dir: Path) -> str:
    out = [f"# Eval {data['id']}", "", *(f"- {plain_text(line)}" for line in scorecard_lines(data)), ""]
    out += ["| " + " | ".join((*COLUMNS, "Report")) + " |", "|" + "---|" * (len(COLUMNS) + 1)]
    for q in data["questions"]:
        cells = [plain_text(c, max_chars=MAX_QUESTION_CHARS if n == 1 else 400) for n, c in enumerate(question_cells(q))]
        report = f"[report](<{report_link(q['report'], reports_dir)}>)" if q["report"] and q["status"] == "done" else "-"
        out.append("| " + " | ".join([*cells, report]) + " |")
    listed = _unsupported_lines(data)
    if listed:
        out += ["", "## Unsupported names and numbers", ""]
        out += [f"- {plain_text(line, max_chars=600)}" for line in listed[:MAX_LISTED_UNSUPPORTED]]
        if len(listed) > MAX_LISTED_UNSUPPORTED:
            out.append(f"- and {len(listed) - MAX_LISTED_UNSUPPORTED} more (see eval-{data['id']}.json)")
    return "\n".join(out) + "\n"


def _html(data: dict[str, Any], reports_dir: Path) -> str:
    rows = []
    for q in data["questions"]:
        cells = "".join(f"<td>{escape(c)}</td>" for c in question_cells(q))
        link = f'<a href="{escape(report_link(q["report"], reports_dir))}">report</a>' if q["report"] and q["status"] == "done" else "-"
        rows.append(f"<tr>{cells}<td>{link}</td></tr>")
    lines = scorecard_lines(data) + [f"unsupported: {line}" for line in _unsupported_lines(data)[:MAX_LISTED_UNSUPPORTED]]
    return html_page(f"Eval {data['id']}", "Research eval", lines, (*COLUMNS, "Report"), rows)


def page_paths(reports_dir: Path, eval_id: str) -> dict[str, Path]:
    """Where the eval's pages go: ``md``, ``html`` and ``json`` in the reports folder."""
    return {kind: Path(reports_dir) / f"eval-{eval_id}.{kind}" for kind in ("md", "html", "json")}


def write_pages(data: dict[str, Any], reports_dir: Path) -> dict[str, Path]:
    """Write the eval's three pages atomically; their paths."""
    paths = page_paths(reports_dir, data["id"])
    atomic_write_text(paths["json"], json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    atomic_write_text(paths["md"], _markdown(data, reports_dir))
    atomic_write_text(paths["html"], _html(data, reports_dir))
    return paths
