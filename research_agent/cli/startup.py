"""Starting and stopping the command line quickly.

Most of a short run's fixed cost is Python's own: importing the CLI, the pipeline and
their dependencies (the ``openai`` package, most of a second on a loaded machine, is imported
in a thread once a model client is built: :mod:`research_agent.llm.client.sdk`), and, at exit,
tearing all of that down again. Two measures, neither of which changes what a command does:

* :func:`importing`: the cyclic garbage collector is paused while modules load. Imports
  allocate many long-lived objects and trigger full collections that find nothing to
  free; pausing it makes start-up about a quarter faster.
* :func:`settle`: what the command line loaded is moved to the collector's permanent
  generation (:func:`gc.freeze`): later collections do not scan it again, and neither
  does the interpreter's teardown when the process exits (atexit handlers and flushes
  still run as usual). Called by :func:`research_agent.cli.main` after start-up and
  before exit, never on import, so a process that imports the CLI (a test) is left alone.

And one that moves work rather than saving it: :func:`import_later` (:mod:`research_agent.lazy`)
imports, in a thread, the modules a command needs only once its first model request is out (reading
the draft, the critique asked for at the end), while the process waits for the model anyway; each is
imported where it is used all the same, so nothing depends on the thread (at worst the use waits for
its import).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from ..lazy import import_later

__all__ = ["importing", "settle", "import_later"]


_settled = False  # set by settle(): this process is the command line, not a program importing it


@contextmanager
def importing() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (module imports), then resume it.

    In the command line's own process (after :func:`settle`), what the block loaded is
    frozen too: the next young collections would otherwise scan all of it, twice.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _settled:
            gc.freeze()
        if was_enabled:
            gc.enable()


def settle() -> None:
    """Never scan what is alive now again (start-up's modules; everything, at exit)."""
    global _settled
    _settled = True
    gc.freeze()
