"""What every tool of one server shares: the options it was started with, and its run slots.

The server keeps no state of its own beyond this: settings are resolved for every call
the way the CLI resolves them (the server's flags, then the environment, then the config
file), and what a call produces is what the CLI writes (reports, run records, critiques).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Settings, load_settings
from ..errors import InputError, ResearchError
from ..review.report_file import review_markdown
from .cpu import CpuWork

__all__ = ["ServerOptions", "Service", "Busy", "RunSlots", "resolve_allowed_dirs", "check_corpus_dirs", "inside_any", "service_of"]


@dataclass(frozen=True)
class ServerOptions:
    """How the server was started.

    ``overrides`` are settings from its command line (None: not given). ``allow_dirs``
    are the folders a caller may name as a corpus (resolved; below them is allowed too).
    ``allow_private`` is the only way private-network fetching is turned on. ``reviewer``
    is what ``review_report`` runs in a worker process (a module-level function, so that it
    pickles; tests pass one that waits for them).
    """

    overrides: Mapping[str, Any] = field(default_factory=dict)
    allow_dirs: tuple[Path, ...] = ()
    allow_private: bool = False
    max_runs: int = 2
    reviewer: Callable[..., Any] = review_markdown


class Busy(ResearchError):
    """Every run slot is taken: the caller should try again later (never queued)."""


class RunSlots:
    """At most ``limit`` research runs at once; one more is refused at once with :class:`Busy`.

    Tools run on one event loop, so the check and the count are one step: no lock needed.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0

    @contextmanager
    def take(self) -> Iterator[None]:
        """Hold one slot for the block; Busy when none is free."""
        if self.active >= self.limit:
            raise Busy(
                f"busy: {self.active} research run(s) already in progress, the most this server takes "
                f"(--max-runs {self.limit}); try again when one has finished"
            )
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1


def resolve_allowed_dirs(folders: Sequence[Path]) -> tuple[Path, ...]:
    """The ``--allow-dir`` folders, symlinks resolved; InputError for one that is not a folder."""
    resolved = []
    for folder in folders:
        real = Path(folder).expanduser().resolve()
        if not real.is_dir():
            raise InputError(f"--allow-dir {folder}: not a folder")
        resolved.append(real)
    return tuple(dict.fromkeys(resolved))


def inside_any(path: Path, roots: Sequence[Path]) -> Path | None:
    """``path`` with its symlinks resolved when it is one of ``roots`` or lies below one; else None."""
    real = Path(path).expanduser().resolve()
    return real if any(real == root or real.is_relative_to(root) for root in roots) else None


def check_corpus_dirs(folders: Sequence[Path], allowed: Sequence[Path]) -> tuple[Path, ...]:
    """Each corpus folder with its symlinks resolved, when it is an allowed folder or lies below one.

    Raises InputError naming the first folder that is not, so a caller cannot reach
    outside the folders the server was started with, through a symlink or ``..``.
    """
    checked = []
    for folder in folders:
        real = inside_any(folder, allowed)
        if real is None:
            where = ", ".join(str(root) for root in allowed)
            reason = f"it is not below an allowed folder ({where})" if allowed else "this server reads no folders"
            raise InputError(
                f"corpus folder {str(folder)[:200]!r} refused: {reason}; "
                "start the server with --allow-dir to allow one"
            )
        checked.append(real)
    return tuple(checked)


class Service:
    """The options, run slots and CPU workers every tool call of one server sees."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self.slots = RunSlots(options.max_runs)
        self.cpu = CpuWork()  # review (and any other CPU-heavy call) runs here, off the event loop

    def close(self) -> None:
        """Stop the CPU workers."""
        self.cpu.close()

    def settings(self, **call: Any) -> Settings:
        """Settings for one call: its arguments (None: not given), then the server's flags, the
        environment and the config file. Private fetching is the server's choice alone."""
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


def service_of(ctx: Any) -> Service:
    """The Service of the server a tool call came to (its lifespan hands it to every request)."""
    service = ctx.request_context.lifespan_context
    if not isinstance(service, Service):
        raise TypeError(f"the server's lifespan gave {type(service).__name__}, not a Service")
    return service
