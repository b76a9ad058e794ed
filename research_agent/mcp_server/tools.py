"""The research and review tools, and the list of every tool the server offers.

Adding a tool is a few lines: an ``async def`` whose parameters are its arguments (with
a ``ctx: Context`` to reach the server's :class:`~research_agent.service.Service`), which
returns its answer's dataclass (:mod:`.shapes`) as plain data and whose docstring is its
description; wrapped in :func:`~research_agent.mcp_server.answers.answered` with that
dataclass (its output schema); then one line in :data:`TOOLS`.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from ..config import MODES
from ..errors import InputError
from ..journal.run_journal import Journalling
from ..pipeline import research as pipeline_research
from ..review.report_file import check_report_size, read_report
from ..review.rules import load_rules
from ..run_refs import Runs, short_id
from ..service import Service
from ..service.folders import inside_any
from ..service.runs import ResearchCall
from .answers import answered, service_of
from .arguments import CorpusFolders, MaxSources, ModeName, Providers, Question, run_settings
from .batch_tool import research_batch
from .memory_tools import memory_effects, memory_lessons, memory_list, memory_proposals, memory_show
from .planning import PlanArgument, given_plan_of, research_plan
from .progress import NotifyingProgress
from .shapes import ResearchOutput, ReviewOutput, research_output, review_output
from .summaries import research_text, review_text

__all__ = ["ToolSpec", "TOOLS", "research", "review_report"]

log = logging.getLogger(__name__)


@answered(ResearchOutput, summary=research_text)
async def research(
    question: Question,
    ctx: Context,
    mode: ModeName = "standard",
    corpus: CorpusFolders = None,
    search: Providers = None,
    max_sources: MaxSources = None,
    plan: PlanArgument = None,
) -> dict[str, Any]:
    """Research a question over the web or local documents and write a cited markdown report.

    Runs the same pipeline as `research-agent run` (minutes, not seconds; progress is
    reported per stage): plan sub-queries, search, read and score sources, draft, review
    and revise, then write reports/<id>.md and its run record. Returns the report's
    markdown and path, the gate decision, the cited sources, the lessons applied, token
    usage and cost (null when a price is unknown). The report's critique is scheduled
    afterwards, as the CLI does. Cancelling the call stops the run and leaves no
    half-written file; once the report is written, the run finishes and the report stays. With
    `plan` (from `research_plan`, maybe edited), no plan is asked of the model: its sub-queries are searched.
    """
    service = service_of(ctx)
    settings = run_settings(service, mode, corpus, search, max_sources)
    given = given_plan_of(plan, question)
    with service.slots.take():
        progress = NotifyingProgress(asyncio.get_running_loop())
        async with progress.forwarding(ctx.report_progress):
            call = ResearchCall(question, settings, progress, research=functools.partial(pipeline_research, plan=given),
                                journalling=Journalling("mcp"))  # fmt: skip
            result, scheduled = await call.outcome()
            if call.cancel_late:
                log.info("research: the cancel came after the report was written: %s stays", result.report_path)
    return research_output(result, scheduled, short_id(result.id, await asyncio.to_thread(_known_ids, settings)))


def _known_ids(settings: Any) -> tuple[str, ...]:
    return Runs.scan(settings.reports_dir).ids()


ReportPath = Annotated[
    str | None,
    Field(description="A markdown report file in the reports folder or an allowed folder (--allow-dir)."),
]
ReportText = Annotated[str | None, Field(description="The report's markdown itself (instead of a path).")]
ReviewMode = Annotated[
    str | None,
    Field(description="Mode whose target length applies (default: the report's front matter).",
          json_schema_extra={"enum": [*MODES, None]}),
]


@answered(ReviewOutput, summary=review_text)
async def review_report(
    ctx: Context, path: ReportPath = None, markdown: ReportText = None, mode: ReviewMode = None
) -> dict[str, Any]:
    """Lint a markdown report (given by path or as text): approved or rejected, with every issue.

    The same deterministic review as `research-agent review` (broken citations, uncited
    numbers, empty sections, placeholders, length against the mode): no model is called.
    """
    service = service_of(ctx)
    settings = service.settings()
    if (path is None) == (markdown is None):
        raise InputError("give the report either as path or as markdown (exactly one of them)")
    if markdown is None:
        real = _readable_report(str(path), service, settings.reports_dir)
        markdown = await asyncio.to_thread(read_report, real, settings.review_max_bytes)
    else:
        check_report_size(markdown, settings.review_max_bytes)
    text = markdown.replace("\r\n", "\n").replace("\r", "\n")
    rules = load_rules(settings.rules_path) if settings.rules_path is not None else ()
    # In a worker process: the review holds the GIL while it runs, a thread would stall every session.
    return review_output(await service.cpu.run(service.options.reviewer, text, rules=rules, mode=mode))


def _readable_report(path: str, service: Service, reports_dir: Path) -> Path:
    """A report path the caller may have read: inside the reports folder or an allowed folder."""
    roots = (Path(reports_dir).resolve(), *service.options.allow_dirs)
    real = inside_any(Path(path), roots)
    if real is None:
        raise InputError(
            f"report {path[:200]!r} refused: only files in the reports folder ({roots[0]}) or an allowed "
            "folder (--allow-dir) can be read"
        )
    return real


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its function (wrapped in ``answered``), and hints for clients."""

    fn: Any
    title: str
    read_only: bool = True
    open_world: bool = False

    def description(self) -> str:
        """The tool's docstring, its indentation removed."""
        return inspect.cleandoc(self.fn.__doc__ or "")

    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title=self.title, read_only_hint=self.read_only, open_world_hint=self.open_world,
            destructive_hint=False, idempotent_hint=self.read_only,
        )  # fmt: skip


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(research, "Research a question", read_only=False, open_world=True),
    ToolSpec(research_plan, "Plan a question's searches", open_world=True),
    ToolSpec(research_batch, "Research many questions", read_only=False, open_world=True),
    ToolSpec(review_report, "Review a markdown report"),
    ToolSpec(memory_lessons, "Lessons a run would get now", open_world=True),
    ToolSpec(memory_list, "List stored critiques"),
    ToolSpec(memory_show, "Show one critique"),
    ToolSpec(memory_effects, "Measured effect of each lesson"),
    ToolSpec(memory_proposals, "Lessons critics proposed (read only)"),
)
