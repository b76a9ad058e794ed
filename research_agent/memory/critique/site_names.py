"""The site a source counts under in the facts, always a name that passes validation.

A web page counts under its registrable host (``docs.python.org`` and ``www.python.org``
are ``python.org``); a local file under the first folder below the root of the corpus it
came from, lower-cased and named with the corpus's id (``pg-1a2b3c4d/tutorial``; see
:func:`~research_agent.memory.store.names.local_site`), or under the corpus folder's own name
for a file at its top, so a corpus with one level is one site. A scholarly work (a source whose
record keeps its identifiers) counts under ``scholarly/<identifier>``, each work its own site, as
the gate counts it (:func:`~research_agent.memory.store.names.scholarly_site`). A file whose corpus root the
record does not know counts under its folder's name, which names no corpus. A name that
would not pass :func:`~research_agent.memory.store.names.valid_site` (a host such as
``[::1]``, a folder with spaces or non-ASCII letters, a path over 60 characters) is
turned into a safe form: characters outside ``A-Za-z0-9._-`` become ``-`` and the path is
cut at a folder boundary; when nothing readable is left, ``site-<hash>``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from pathlib import PurePath
from typing import Any

from ...record import SourceSummary
from ..store.names import corpus_id, local_site, scholarly_site, valid_hostname, valid_site

__all__ = ["site_name", "safe_site", "corpus_ids", "source_site", "source_sites"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_FOLDER = 60


def safe_site(name: str) -> str:
    """``name`` if it is a valid site already; else its safe form (always valid)."""
    if _valid(name):
        return name
    parts = [_UNSAFE.sub("-", part).strip("-.") for part in name.replace("\\", "/").split("/")]
    kept: list[str] = []
    for part in (p for p in parts if p and p not in (".", "..")):
        if len("/".join([*kept, part])) > _MAX_FOLDER:
            if not kept:
                kept.append(part[:_MAX_FOLDER].rstrip("-."))
            break
        kept.append(part)
    candidate = "/".join(kept).lstrip("._-")
    if _valid(candidate):
        return candidate
    return "site-" + hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:8]


def _valid(name: str) -> bool:
    # valid_site, and the critique schema's pattern: the first character is a letter or digit
    return bool(name) and name[0].isalnum() and name.isascii() and valid_site(name)


def _is_local(source: SourceSummary) -> bool:
    return source.provider == "local" or bool(source.location and "://" not in source.location)


def _local_site(location: str, roots: Sequence[str]) -> str:
    """The site of a local file: ``<corpus id>/<first-level folder>`` under the corpus root holding
    it (the longest match), the corpus's own name for a file at its top; without a known root,
    its folder's name (which names no corpus)."""
    path = PurePath(location)
    for root in sorted(roots, key=len, reverse=True):
        base = PurePath(root)
        if root and path.is_relative_to(base) and path != base:
            parts = path.relative_to(base).parts
            return local_site(corpus_id(root), parts[0] if len(parts) > 1 else base.name)
    return safe_site(path.parent.name)


def corpus_ids(roots: Sequence[str]) -> tuple[str, ...]:
    """The ids of the corpora at ``roots``, each once, in order."""
    return tuple(dict.fromkeys(corpus_id(root) for root in roots if root))


def site_name(source: SourceSummary, corpus_roots: Sequence[str] = ()) -> str:
    """The site ``source`` counts under (see the module docstring); always a valid site name."""
    if _is_local(source):
        return _local_site(source.location, corpus_roots)
    if source.identifiers:
        scheme, value = source.identifiers[0]
        return scholarly_site(f"{scheme}:{value}")
    host = source.site_key
    return host if valid_hostname(host) else safe_site(host)


def source_site(source: Any, corpus_roots: Sequence[str] = ()) -> str:
    """The site of ``source`` (anything with a provider, location and site, as a search
    :class:`~research_agent.sources.Source`), named as the facts name it: the one rule the gate
    and the critique facts count sites by."""
    work = getattr(source, "work", None)
    ids = tuple(work.identifiers.items()) if work is not None else ()
    summary = SourceSummary(None, "", source.location, source.site, source.provider, None, "", "kept", False,
                            identifiers=ids)  # fmt: skip
    return site_name(summary, corpus_roots)


def source_sites(sources: Iterable[Any], corpus_roots: Sequence[str] = ()) -> set[str]:
    """The sites of ``sources``, named as the facts name them (:func:`source_site`)."""
    return {source_site(s, corpus_roots) for s in sources}
