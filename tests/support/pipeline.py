"""A small corpus, a search provider over it, settings and scripts for whole-pipeline runs."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from research_agent.config import MODES, Settings
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.sources import SearchHit
from research_agent.stages.relevance import MAX_BATCH
from tests.support.research_responder import ResearchResponder

DOCS = {
    "vacuum.md": (
        "VACUUM in PostgreSQL",
        "PostgreSQL VACUUM reclaims storage occupied by dead tuples left behind by updates and deletes. "
        "Plain VACUUM marks the space as reusable within the table file without returning it to the operating system. "
        "VACUUM FULL rewrites the whole table into a new file and returns the freed space to the operating system. "
        "Because VACUUM FULL holds an exclusive lock on the table, it blocks reads and writes until the rewrite ends. "
        "Plain VACUUM can run alongside normal reads and writes, which is why routine maintenance relies on it.",
    ),
    "autovacuum.md": (
        "The autovacuum daemon",
        "The autovacuum daemon runs VACUUM automatically when enough dead tuples accumulate in a table. "
        "Autovacuum thresholds are set per table and control how quickly PostgreSQL reclaims space from dead rows. "
        "Tuning autovacuum keeps table bloat low on busy PostgreSQL servers with frequent updates. "
        "The daemon starts worker processes that visit tables in turn, so a large table can wait behind smaller ones. "
        "Disabling autovacuum on a busy table lets dead tuples pile up and slows every query that scans it.",
    ),
    "mvcc.md": (
        "MVCC and dead tuples",
        "PostgreSQL uses multiversion concurrency control, so an update writes a new row version and leaves a dead tuple. "
        "Dead tuples are invisible to new transactions but still occupy space until VACUUM reclaims them. "
        "Long running transactions can prevent VACUUM from reclaiming space because old row versions stay visible. "
        "Each row version records the transactions that created and expired it, which decides who can still see it. "
        "Once no open transaction can see an expired version, VACUUM may mark its space as free for new rows.",
    ),
    "bloat.md": (
        "Table bloat",
        "Table bloat is space in PostgreSQL tables taken by dead tuples that VACUUM has not yet reclaimed. "
        "Monitoring bloat helps decide when VACUUM FULL or pg_repack is needed to reclaim space for the operating system. "
        "Regular VACUUM prevents bloat from growing on tables with steady update traffic. "
        "Indexes bloat as well, because their entries keep pointing at dead tuples until VACUUM removes those entries. "
        "Rebuilding a bloated index with REINDEX gives back its space when routine VACUUM has fallen far behind.",
    ),
}


QUERY = "How does PostgreSQL VACUUM reclaim space from dead tuples?"


def write_docs(folder: Path) -> Path:
    """:data:`DOCS` as markdown notes in ``folder`` (made if need be); returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, (title, text) in DOCS.items():
        (folder / name).write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    return folder


class DocsProvider:
    """A search provider over DOCS written to ``folder``; every query finds every doc."""

    name = "local"

    def __init__(self, folder: Path, docs: dict[str, tuple[str, str]] = DOCS) -> None:
        self.paths = {}
        self.calls: list[str] = []
        for name, (title, text) in docs.items():
            path = folder / name
            path.write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
            self.paths[name] = (path, title, text)

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        self.calls.append(query)
        return [
            SearchHit(title=title, location=str(path), snippet=text[:100], provider="local", text=text)
            for path, title, text in list(self.paths.values())[:max_results]
        ]


def settings_for(tmp_path: Path, mode: str = "standard", **changes) -> Settings:
    return Settings(
        mode=MODES[mode],
        reports_dir=tmp_path / "reports",
        cache_dir=tmp_path / "cache",
        context_path=None,
        corpus_dirs=(tmp_path,),
        **changes,
    )


def script(model, responder: ResearchResponder, *, plans: int = 1, sources: int = len(DOCS), drafts: int = 1,
           skeptics: int = 1, revisions: int = 0, relevance_per_plan: list[int] | None = None) -> None:
    """Queue the calls a run should make, each answered by ``responder`` (``relevance_per_plan``:
    the sources each plan scores, :data:`MAX_BATCH` to a relevance call)."""

    def use(request):
        return responder.answer(request.stage, request.system, request.user)

    model.enqueue("decompose", use, times=plans)
    per_plan = relevance_per_plan if relevance_per_plan is not None else [sources]
    model.enqueue("relevance", use, times=sum(-(-n // MAX_BATCH) for n in per_plan))  # sources batched: calls
    model.enqueue("draft", use, times=drafts)
    model.enqueue("skeptic", use, times=skeptics)
    model.enqueue("revise", use, times=revisions)


def citations(markdown: str) -> set[int]:
    body = markdown.split("## Sources", 1)[0]
    found = set()
    for match in re.finditer(r"\[(\d+(?:\s*,\s*\d+)*)\](?!\()", body):
        found.update(int(n) for n in match.group(1).split(","))
    return found


def source_entries(markdown: str) -> dict[int, str]:
    section = markdown.split("## Sources", 1)[1].split("\n## ", 1)[0]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^(\d+)\. (.*)$", section, re.M)}


CLAIM = "Plain VACUUM marks the space as reusable within the table file"


CRITICAL = {
    "lens": "evidence",
    "severity": "critical",
    "claim": CLAIM,
    "reason": "the draft overstates what the source says",
    "fix": "qualify the claim or mark it disputed",
    "confidence": 0.9,
}


# A finding about what the sources cover: the kind behind a low viability that a new plan could answer.
GAP = {
    "lens": "scope",
    "severity": "concern",
    "claim": "",
    "reason": "the sources say nothing about how VACUUM FULL locks the table",
    "fix": "find sources on VACUUM FULL locking",
    "confidence": 0.8,
}


class Recorded:
    """A Progress that keeps what it was told."""

    def __init__(self) -> None:
        self.stages: list[str] = []
        self.notes: list[str] = []
        self.values: list[dict[str, int]] = []

    def stage(self, name: str, detail: str = "") -> None:
        self.stages.append(name)

    def counts(self, **values: int) -> None:
        self.values.append(values)

    def note(self, message: str) -> None:
        self.notes.append(message)


def use(responder: ResearchResponder):
    return lambda request: responder.answer(request.stage, request.system, request.user)


def queue(model, responder: ResearchResponder, **answers) -> None:
    """Queue one run's calls; ``answers[stage]`` replaces the responder's answers for a stage."""
    plan = {"decompose": [use(responder)],
            "relevance": [use(responder)] * -(-len(DOCS) // MAX_BATCH), "draft": [use(responder)],
            "skeptic": [use(responder)]}  # fmt: skip
    plan.update(answers)
    for stage, items in plan.items():
        for item in items:
            model.enqueue(stage, item)


async def run(tmp_path, model, progress=None, *, provider=None, **changes):
    return await research(
        QUERY,
        settings=settings_for(tmp_path, **changes),
        model=model,
        providers=[provider or DocsProvider(tmp_path)],
        lessons=lambda domain: LessonSelection.none(domain),
        progress=progress,
    )


def record_of(result) -> dict:
    return yaml.safe_load(result.run_record_path.read_text(encoding="utf-8"))
