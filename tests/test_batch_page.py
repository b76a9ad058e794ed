"""The batch page from a state made by hand: totals, an unknown price, lesson changes, outside text
kept inert on both pages; and the progress on a terminal: one bar and the running questions' stages."""

from __future__ import annotations

import asyncio
import io
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from research_agent.batch.state import BatchState, Entry, make_batch_id
from research_agent.batch.summary import summary_data, summary_html, summary_markdown
from research_agent.cli.batch.view import BatchView
from research_agent.service.events import EventLog

HOSTILE = "Is <script>alert(1)</script> | [x](javascript:alert(1)) **bold** safe?"


def _state(tmp_path: Path) -> BatchState:
    reports = tmp_path / "reports"
    done = Entry(2, "How does VACUUM work?", "k1", state="done", attempts=1, run_id="how-vacuum_20260101T000000000000Z",
                 seconds=65.0, outcome={"report": str(reports / "how-vacuum_20260101T000000000000Z.md"),
                                        "html": str(reports / "how-vacuum_20260101T000000000000Z.html"),
                                        "review": "approved", "claims_checked": 10, "unsupported_share": 0.2,
                                        "sources_kept": 4, "tokens": 1234, "cost_usd": None,
                                        "critique": {"state": "passed", "mean_score": 3.4}})  # fmt: skip
    failed = Entry(3, HOSTILE, "k2", state="failed", attempts=3, error="model said <b>no</b> | twice")
    pending = Entry(4, "What is MVCC?", "k3")
    state = BatchState(make_batch_id("questions", datetime(2026, 1, 1, tzinfo=UTC)), reports / "meta",
                       file="/data/questions.txt", status="stopped", wall_seconds=3725.0,
                       lessons_at_start={"technology/weak_primary_sources:x": "measuring"},
                       limits={"calls": 40, "pauses": 2, "paused_seconds": 14.0, "waited_seconds": 3.5},
                       entries=[done, failed, pending])  # fmt: skip
    return state


def test_the_page_shows_totals_each_question_and_keeps_outside_text_inert(tmp_path: Path) -> None:
    state = _state(tmp_path)
    data = summary_data(state, lessons_now={"technology/weak_primary_sources:x": "active", "health/new:y": "measuring"})
    totals = data["totals"]
    assert (totals["done"], totals["failed"], totals["pending"], totals["claims_checked"]) == (1, 1, 1, 10)
    assert totals["cost_usd"] is None, "an unknown price is unknown, never $0"
    assert data["lessons_changed"] == [
        {"domain": "health", "key": "new:y", "before": "new", "after": "measuring"},
        {"domain": "technology", "key": "weak_primary_sources:x", "before": "measuring", "after": "active"},
    ]
    reports = tmp_path / "reports"
    markdown = summary_markdown(data, reports)
    assert "- 3 questions: 1 done, 1 failed, 1 not run yet" in markdown
    assert "cost unknown; wall time 1:02:05" in markdown
    assert "endpoint: 40 calls let through the limits (no run record read), 2 pause(s) after a 429 (14.0 s), " \
           "3.5 s waited for the limits" in markdown
    assert "weak\\_primary\\_sources:x (technology): measuring \u2192 active" in markdown
    assert "| 2 | How does VACUUM work? | done (critique passed, mean 3.4) | approved | 10 | 20% | 4 | 1,234 | unknown" \
        " | 1:05 | [report](<how-vacuum_20260101T000000000000Z.md>) |" in markdown
    assert "| 4 | What is MVCC? | pending | - | - | - | - | - | - | - | - |" in markdown
    assert "[report](<how-vacuum_20260101T000000000000Z.md>)" in markdown
    assert "<script>" not in markdown and "](javascript" not in markdown and "<b>" not in markdown
    assert "Is alert(1) \\| x \\*\\*bold\\*\\* safe?" in markdown, "tags and links lose their syntax"
    assert "failed after 3 attempt(s): model said no \\| twice" in markdown
    assert len([line for line in markdown.splitlines() if line.startswith("| ")]) == 4  # the header and 3 rows
    page = summary_html(data, reports)
    assert '<a href="how-vacuum_20260101T000000000000Z.html">report</a>' in page
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;no&lt;/b&gt;" in page
    assert "default-src 'none'" in page


def test_the_terminal_view_is_one_bar_and_the_running_questions_stages(tmp_path: Path) -> None:
    async def scenario() -> str:
        out = io.StringIO()
        view = BatchView(Console(file=io.StringIO(), force_terminal=False), total=3, done=1)  # not live: drawn below
        running = Entry(2, "How does autovacuum decide when to run?", "k2", state="running")
        events = EventLog(asyncio.get_running_loop())
        view.started(running, events)
        events.stage("relevance", "12 sources")
        await asyncio.sleep(0)
        finished = Entry(3, "What is MVCC?", "k3", state="failed", error="endpoint down")
        view.started(finished, EventLog(asyncio.get_running_loop()))
        view.ended(finished)
        Console(file=out, force_terminal=True, width=100).print(view._render())
        return out.getvalue()

    shown = asyncio.run(scenario())
    assert "2/3 · 1 done · 1 failed · 1 running" in shown
    assert "2: How does autovacuum decide when to run? - relevance: 12 sources" in shown
    assert "What is MVCC" not in shown, "a question that ended leaves the list"
