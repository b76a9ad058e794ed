"""Which files of a corpus are not worth indexing, and why.

* ``generated``: what a documentation build writes beside the pages themselves. Sphinx's
  ``_sources/`` (a plain-text copy of every page, titled ``****``), ``_static/``, the
  ``genindex*`` pages, ``search.html`` and ``py-modindex.html`` (:data:`GENERATED`).
* ``excluded``: what the user excluded, with gitignore syntax (the ``pathspec`` package):
  the ``.research-ignore`` file in the corpus root, and ``--exclude GLOB``. A ``!pattern``
  there brings back a file the defaults skip (``!search.html``).
* ``duplicate_copy``: the same document twice. At scan time a plain-text copy beside its
  HTML page (the same relative path stem: Sphinx's ``_sources/x.rst.txt`` beside ``x.html``,
  or ``x.txt`` beside ``x.html``); at read time any two files whose extracted text is the
  same (:func:`preferred_copy` picks the one indexed: the HTML one).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

import pathspec

from ..errors import InputError
from ..files.safefile import UnsafeFile, read_text_capped

__all__ = ["GENERATED", "IGNORE_FILE", "CorpusRules", "copy_key", "stem_copies", "preferred_copy"]

GENERATED = ("_sources/", "_static/", "genindex*", "search.html", "py-modindex.html")
IGNORE_FILE = ".research-ignore"
_MAX_IGNORE_BYTES = 256 * 1024
_HTML = (".html", ".htm")
_TEXT = (".txt", ".md", ".markdown", ".rst")


def _spec(lines: Iterable[str], where: str) -> pathspec.PathSpec:
    try:
        return pathspec.GitIgnoreSpec.from_lines(list(lines))
    except (ValueError, TypeError) as exc:  # pathspec's pattern errors are ValueErrors
        raise InputError(f"{where}: {exc}") from None


@dataclass(frozen=True)
class CorpusRules:
    """The exclusion patterns of one corpus: the user's (``.research-ignore`` and ``--exclude``)
    on top of :data:`GENERATED`."""

    patterns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self._user  # noqa: B018 - a bad pattern is an InputError now, not at the first file

    @classmethod
    def for_root(cls, root: Path, extra: Sequence[str] = ()) -> CorpusRules:
        """The rules of corpus ``root``: its ``.research-ignore`` (if any), then ``extra``."""
        path = Path(root) / IGNORE_FILE
        lines: list[str] = []
        if path.exists() or path.is_symlink():
            try:
                lines = read_text_capped(path, max_bytes=_MAX_IGNORE_BYTES).splitlines()
            except UnsafeFile as exc:
                raise InputError(f"{path}: {exc}") from None
            _spec(lines, str(path))
        _spec(extra, "--exclude")
        return cls((*lines, *extra))

    @cached_property
    def _user(self) -> pathspec.PathSpec:
        return _spec(self.patterns, "--exclude")

    @cached_property
    def _all(self) -> pathspec.PathSpec:
        return _spec((*GENERATED, *self.patterns), "exclusions")

    def reason(self, rel: str) -> str | None:
        """``excluded``, ``generated`` or None (index it) for the corpus-relative path ``rel``."""
        if not self._all.match_file(rel):
            return None
        return "excluded" if self.patterns and self._user.match_file(rel) else "generated"

    def user_excludes(self, rel: str) -> bool:
        """Whether the user's own patterns exclude ``rel`` (for filtering an index at query time)."""
        return bool(self.patterns) and self._user.match_file(rel)


def copy_key(rel: str) -> tuple[str, bool] | None:
    """``(document stem, is HTML)`` for an HTML or plain-text file, with Sphinx's ``_sources/``
    folder and the copy's extra suffix dropped (``_sources/lib/os.path.rst.txt`` and
    ``lib/os.path.html`` are both ``lib/os.path``); None for other files."""
    path = PurePosixPath(rel)
    name = path.name.lower()
    folder = "/".join(part for part in path.parent.parts if part not in ("_sources", "."))
    if name.endswith(_HTML):
        stem, html = path.name[: path.name.rfind(".")], True
    elif name.endswith(_TEXT):
        stem, html = path.name[: path.name.rfind(".")], False
        if stem.lower().endswith(_TEXT):
            stem = stem[: stem.rfind(".")]
    else:
        return None
    return (f"{folder}/{stem}" if folder else stem, html)


def stem_copies(rels: Iterable[str]) -> set[str]:
    """The plain-text files among ``rels`` that copy an HTML page of the same stem."""
    keys = {rel: copy_key(rel) for rel in rels}
    pages = {key[0] for key in keys.values() if key is not None and key[1]}
    return {rel for rel, key in keys.items() if key is not None and not key[1] and key[0] in pages}


def preferred_copy(paths: Sequence[str]) -> str:
    """Which of several files with the same text is indexed: an HTML one, then the shallowest,
    then the first by name."""
    return min(paths, key=lambda p: (not p.lower().endswith(_HTML), p.count("/"), p))
