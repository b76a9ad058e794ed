"""The arguments the research tools share (``research``, ``research_batch``), with their descriptions,
and the settings of a run they ask for."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..config import MODES, Settings
from ..search.registry import KNOWN_PROVIDERS
from ..service import Service

__all__ = ["Question", "ModeName", "CorpusFolders", "Providers", "MaxSources", "run_settings"]

Question = Annotated[str, Field(description="The question to research (at most 2,000 characters).")]
ModeName = Annotated[
    str,
    Field(
        description="quick (fewer sources, no skeptic, no critique), standard, or deep.",
        json_schema_extra={"enum": list(MODES)},
    ),
]
CorpusFolders = Annotated[
    list[str] | None,
    Field(description="Folders of documents to search; each must be one the server allows (--allow-dir). "
                      "Alone, they mean local only: the web is not searched."),
]
Providers = Annotated[
    list[str] | None,
    Field(description=f"Search providers, among {', '.join(KNOWN_PROVIDERS)} (default: local with a corpus, "
                      "else ddgs)."),
]
MaxSources = Annotated[int | None, Field(description="At most this many sources fetched and scored per plan.")]


def run_settings(
    service: Service, mode: str, corpus: list[str] | None, search: list[str] | None, max_sources: int | None
) -> Settings:
    """The settings of a run the arguments ask for, its corpus folders checked against --allow-dir."""
    return service.run_settings(
        mode=mode,
        corpus_dirs=tuple(corpus) if corpus else None,
        search_providers=tuple(search) if search else None,
        max_sources=max_sources,
    )
