"""What every call of one front end shares: the options it was started with, its run slots,
its CPU workers, and the settings each call gets.

A front end keeps no state of its own beyond this: settings are resolved for every call
the way the CLI resolves them (the front end's flags, then the environment, then the config
file), and what a call produces is what the CLI writes (reports, run records, critiques).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Settings, load_settings
from ..review.report_file import review_markdown
from .cpu import CpuWork
from .folders import check_corpus_dirs
from .slots import RunSlots

__all__ = ["ServiceOptions", "Service"]


@dataclass(frozen=True)
class ServiceOptions:
    """How a front end was started.

    ``overrides`` are settings from its command line (None: not given). ``allow_dirs``
    are the folders a caller may name as a corpus (resolved; below them is allowed too).
    ``allow_private`` is the only way private-network fetching is turned on. ``max_runs``
    bounds the research runs at once. ``reviewer`` is what a review runs in a worker process
    (a module-level function, so that it pickles; tests pass one that waits for them).
    """

    overrides: Mapping[str, Any] = field(default_factory=dict)
    allow_dirs: tuple[Path, ...] = ()
    allow_private: bool = False
    max_runs: int = 2
    reviewer: Callable[..., Any] = review_markdown


class Service:
    """The options, run slots and CPU workers every call of one front end sees."""

    def __init__(self, options: ServiceOptions) -> None:
        self.options = options
        self.slots = RunSlots(options.max_runs)
        self.cpu = CpuWork()  # review (and any other CPU-heavy call) runs here, off the event loop

    def close(self) -> None:
        """Stop the CPU workers."""
        self.cpu.close()

    def settings(self, **call: Any) -> Settings:
        """Settings for one call: its arguments (None: not given), then the front end's flags, the
        environment and the config file. Private fetching is the front end's choice alone."""
        overrides = {**self.options.overrides, **{k: v for k, v in call.items() if v is not None}}
        overrides["allow_private"] = self.options.allow_private
        return load_settings(overrides)

    def run_settings(self, **call: Any) -> Settings:
        """:meth:`settings` for a research run, whose corpus folders (from the call or the config
        file) must be allowed ones; they are used with their symlinks resolved."""
        settings = self.settings(**call)
        if not settings.corpus_dirs:
            return settings
        return settings.replace(corpus_dirs=check_corpus_dirs(settings.corpus_dirs, self.options.allow_dirs))
