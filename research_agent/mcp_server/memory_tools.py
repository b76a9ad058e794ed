"""The memory tools: the lessons a run would get now, the stored critiques, one critique.

They read what the CLI's ``memory`` commands read (``reports/meta``), with the same
selection rules; only ``memory_lessons`` may call a model (the fast one, to classify the
question's domain, as ``research-agent memory lessons`` does).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from ..assembly import validate_query
from ..config import Settings
from ..domains import DOMAINS, parse_domain
from ..errors import InputError, ResearchError
from ..llm import OpenAIChatModel
from ..memory.effects.lesson_effects import lesson_effects
from ..memory.lessons.select import preview_lessons
from ..memory.store.files import critique_path, load_critique, run_id_from
from ..memory.store.index import IndexTrust, list_critiques
from ..stages.classify import classify_domain
from .answers import answered
from .service import service_of
from .shapes import (
    EffectsOutput,
    LessonsOutput,
    MemoryListOutput,
    MemoryShowOutput,
    critique_summary,
    lessons_output,
)

__all__ = ["memory_lessons", "memory_list", "memory_show", "memory_effects", "run_id_of", "load_by_id", "NotFound", "MAX_LIST"]

MAX_LIST = 500


class NotFound(InputError):
    """The id is well formed, but there is no such file."""

DomainName = Annotated[
    str | None,
    Field(description="Skip classification and use this domain.", json_schema_extra={"enum": [*DOMAINS, None]}),
]


@answered
async def memory_lessons(
    question: Annotated[str, Field(description="The question a run would research.")],
    ctx: Context,
    domain: DomainName = None,
) -> LessonsOutput:
    """The lessons from past critiques that a run of this question would get now, and why;
    every critique file left out, with its reason.

    Without a domain, the question's domain is classified first by a call to the fast
    model (as `research-agent memory lessons` does); give the domain to avoid that call.
    """
    settings = service_of(ctx).settings()
    question = validate_query(question)
    chosen = parse_domain(domain) if domain is not None else await _classify(settings, question)
    selection, note = await asyncio.to_thread(
        preview_lessons,
        settings.meta_dir,
        chosen,
        now=datetime.now(UTC),
        ttl_days=settings.lesson_ttl_days,
        control_fraction=settings.control_fraction,
        trust=IndexTrust(settings.state_dir),
    )
    return lessons_output(selection, note)


async def _classify(settings: Settings, question: str) -> str:
    """The question's domain, by the model (closed afterwards)."""
    model = OpenAIChatModel.from_settings(settings)
    try:
        chosen = await classify_domain(model, question)
    finally:
        await model.aclose()
    if chosen not in DOMAINS:
        raise InputError(f"the classifier returned an unknown domain {chosen[:40]!r}")
    return chosen


@answered
async def memory_list(
    ctx: Context,
    domain: DomainName = None,
    limit: Annotated[int, Field(description="At most this many critiques, newest first.")] = 20,
) -> MemoryListOutput:
    """Stored critiques of past reports, newest first (optionally of one domain), and the
    critique files that failed validation with the reason."""
    if not 1 <= limit <= MAX_LIST:
        raise InputError(f"limit must be from 1 to {MAX_LIST}, not {limit}")
    wanted = parse_domain(domain) if domain is not None else None
    settings = service_of(ctx).settings()
    loaded = await asyncio.to_thread(
        list_critiques, settings.meta_dir, trust=IndexTrust(settings.state_dir), now=datetime.now(UTC)
    )
    good = [item.critique for item in loaded if item.critique is not None]
    chosen = [c for c in good if wanted is None or c.query_domain == wanted][:limit]
    return {
        "critiques": [critique_summary(c) for c in chosen],
        "invalid": [{"file": item.name, "reason": item.error or ""} for item in loaded if item.critique is None],
    }


@answered
async def memory_show(
    ctx: Context, id: Annotated[str, Field(description="A run id, or critique-<id>.yaml.")]
) -> MemoryShowOutput:
    """One stored critique: scores, pass or fail, weaknesses, suggestions, tags, usage."""
    settings = service_of(ctx).settings()
    critique = await asyncio.to_thread(load_by_id, settings.meta_dir, id)
    return {"critique": critique.as_dict()}


@answered
async def memory_effects(ctx: Context, domain: DomainName = None) -> EffectsOutput:
    """Each lesson's measured effect: runs with it and baseline runs where it was eligible,
    the mean of its target with and without it, the difference (positive means better) with
    a 90% interval, and its status (trial, active, or retired: no longer given to runs)."""
    wanted = parse_domain(domain) if domain is not None else None
    settings = service_of(ctx).settings()
    found = await asyncio.to_thread(
        lesson_effects, settings.meta_dir, now=datetime.now(UTC), domain=wanted, trust=IndexTrust(settings.state_dir)
    )
    return {"effects": [effect.as_dict() for effect in found]}  # type: ignore[misc]


def run_id_of(value: str) -> str:
    """The run id in ``value`` (an id, or ``critique-<id>.yaml``); InputError when there is none."""
    run_id = run_id_from(value)
    if run_id is None:
        raise InputError(f"not a run id: {value[:80]!r}")
    return run_id


def load_by_id(meta_dir: Path, value: str) -> Any:
    """The critique of run ``value`` in ``meta_dir``; InputError when missing or invalid."""
    run_id = run_id_of(value)
    path = critique_path(meta_dir, run_id)
    if not path.exists() and not path.is_symlink():
        raise NotFound(f"no critique {run_id} in {meta_dir}")
    try:
        return load_critique(path, meta_dir=meta_dir)
    except ResearchError as exc:
        raise InputError(f"{path.name}: {exc}") from None
