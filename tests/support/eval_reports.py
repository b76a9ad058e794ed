"""Reports and run records made by hand for the grader's tests (tests/data/eval/labelled_world)."""

from __future__ import annotations

from pathlib import Path

from research_agent.eval.world import World, load_world
from research_agent.record import RunRecord
from research_agent.record.types import ReviewOutcome, SourceSummary

LABELLED_WORLD = Path(__file__).resolve().parent.parent / "data" / "eval" / "labelled_world"
LABELLED_SET = LABELLED_WORLD.parent / "labelled.yaml"
CITED_PAGES = ("firms/acme-works.md", "firms/acme-work.html", "landmarks/varn-canal.txt", "towns/tamber.md")


def labelled_world() -> World:
    return load_world(LABELLED_WORLD)


def record_for(world: World, question: str, *, gate: str = "full_report", pages: tuple[str, ...] = CITED_PAGES,
               root: Path | None = None) -> RunRecord:
    """A run record whose Sources [1]..[n] are ``pages`` of ``world`` (under ``root`` when given:
    a world that has moved since the run)."""
    folder = root or world.pages_dir
    sources = tuple(
        SourceSummary(n, Path(page).stem, str(folder / page), str(folder / page), "local", 5, "", "kept", False)
        for n, page in enumerate(pages, start=1)
    )  # fmt: skip
    return RunRecord("labelled_20260101T000000000000Z", question, "standard", "scripted", "r.md", gate,
                     sources=sources, review=ReviewOutcome("approved", words=None))  # fmt: skip


def report_with(body: str, *, summary: str = "The question is answered below.", limitations: str = "",
                notice: str = "") -> str:
    """A report as the tool renders one, ``body`` its only section of findings."""
    parts = ["---\nid: labelled_20260101T000000000000Z\n---\n", "# The question\n"]
    if notice:
        parts.append(notice + "\n")
    parts += ["## Executive Summary\n", summary + "\n", "## Findings\n", body + "\n",
              "## Adversarial Analysis\n", "Viability of the answer from these sources: 82/100.\n",
              "## Limitations & Gaps\n", (limitations or "- None noted by the writer.") + "\n",
              "## Sources\n", "\n".join(f"{n}. {p} \u2014 <file:///{p}>" for n, p in enumerate(CITED_PAGES, 1)) + "\n"]
    return "\n".join(parts)
