"""What is made on first use, so that importing a module costs only what its importer touches:
names a package loads from its submodules (PEP 562, :func:`lazy_names`), modules a caller reaches
only later (:func:`lazy_module`, and :func:`import_later` to import them meanwhile, in a thread),
and regular expressions compiled when first matched (:class:`LazyPattern`)."""

from __future__ import annotations

import atexit
import logging
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import import_module
from typing import Any

__all__ = ["lazy_names", "lazy_module", "import_later", "LazyPattern"]

log = logging.getLogger(__name__)


def lazy_names(
    package: str, names: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: ``names`` maps each lazy name to
    the submodule that holds it; a name once loaded is kept in ``namespace`` (the package's
    globals)."""

    def __getattr__(name: str) -> object:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__


class _LazyModule:
    """Module ``name``, imported at the first use of one of its attributes."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> Any:
    """Module ``name`` as a name to use now and import at its first attribute: for the steps a
    caller takes only after something slow has begun (a run's first model call). A type checker
    should see the real import instead (under ``TYPE_CHECKING``)."""
    return _LazyModule(name)


def import_later(modules: Sequence[str], *, after: Callable[[], None]) -> threading.Thread | None:
    """Import ``modules`` in a thread once ``after()`` returns (e.g. the model SDK's import is done, so
    the first request is on its way: these imports would otherwise delay it, one interpreter lock
    serving both). None, and no thread, when all of them are imported already. A module that fails
    to import is left for its user to import again, and to report."""
    if all(name in sys.modules for name in modules):
        return None

    def load() -> None:
        after()
        for name in modules:
            try:
                import_module(name)
            except Exception:  # noqa: BLE001 - imported again where it is used, and reported there
                log.debug("importing %s ahead failed", name, exc_info=True)

    thread = threading.Thread(target=load, name="import-later", daemon=True)
    thread.start()
    atexit.register(thread.join)  # a daemon thread still importing at shutdown crashes the process
    return thread


class LazyPattern:
    """A regular expression compiled on its first match, for the large patterns of a check that
    most runs never make (a person's lesson file): compiling them costs a run's start-up more
    than ten milliseconds. Matches as :class:`re.Pattern` does."""

    __slots__ = ("source", "flags", "_compiled")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:  # two threads may both compile it: the same pattern either way
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)
