"""The strict patterns a name must match before a lesson may carry it into a prompt.

A site is a host name for web pages (lower-case labels, a letters-only top-level
label) or, for local files, the corpus-relative folder (letters, digits and ``._-/``,
at most 60 characters, no ``..`` part). Since issue 20 a local site is written as
``<corpus id>/<first-level folder>`` (:func:`local_site`): the first folder below the corpus
root, lower-cased, under the id of the corpus (:func:`corpus_id`); a folder name written
before that names no corpus (:func:`site_corpus` is None) and teaches no site lesson.
A scholarly work (a paper found by openalex, arxiv, pubmed or semanticscholar) counts as its own
site, ``scholarly/<its identifier>`` (:func:`scholarly_site`): it is no site a lesson can steer
towards or away from (an API host is not a publisher, and a venue is outside text); being no
web host, it gets no site lesson (:func:`~research_agent.memory.lessons.build.judging.usable_site` takes web hosts only).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

__all__ = [
    "valid_hostname",
    "valid_folder",
    "valid_site",
    "corpus_id",
    "is_corpus_id",
    "local_site",
    "site_corpus",
    "scholarly_site",
]

_HOSTNAME = re.compile(r"^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
_FOLDER = re.compile(r"^[A-Za-z0-9._/-]{1,60}$")


def valid_hostname(value: object) -> bool:
    """True for a plain DNS host name such as ``docs.python.org`` (no scheme, port, path or spaces)."""
    return isinstance(value, str) and bool(_HOSTNAME.match(value))


def valid_folder(folder: object) -> bool:
    """True for a corpus-relative folder such as ``guides/vacuum`` (never absolute, never ``..``)."""
    if not isinstance(folder, str) or not _FOLDER.match(folder) or folder.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in folder.rstrip("/").split("/"))


def valid_site(site: object) -> bool:
    """True when ``site`` is a valid host name or corpus-relative folder."""
    return valid_hostname(site) or valid_folder(site)


# --- local corpora: an id per corpus, a site per first-level folder --------------------------

_CORPUS_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,23}-[0-9a-f]{8}$")
_UNSAFE_PART = re.compile(r"[^a-z0-9._-]+")
_MAX_NAME = 24
_MAX_FOLDER = 26


def _part(name: str, limit: int) -> str:
    """``name`` lower-cased, characters outside ``a-z0-9._-`` as ``-``, cut at ``limit``."""
    cleaned = _UNSAFE_PART.sub("-", name.lower()).strip("-._")[:limit].rstrip("-._")
    if cleaned:
        return cleaned
    return "f-" + hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:8]


def corpus_id(root: str | os.PathLike[str]) -> str:
    """The id of the corpus at ``root``: its folder's name and a short hash of its resolved path
    (``html-3f2a9c1d``), so that two corpora both called ``html`` stay apart."""
    resolved = Path(root).resolve()
    return f"{_part(resolved.name or 'root', _MAX_NAME)}-{hashlib.sha256(str(resolved).encode()).hexdigest()[:8]}"


def is_corpus_id(value: object) -> bool:
    """Whether ``value`` has the form :func:`corpus_id` gives."""
    return isinstance(value, str) and bool(_CORPUS_ID.match(value))


def local_site(corpus: str, folder: str) -> str:
    """The site of a file of corpus ``corpus`` under first-level ``folder`` (the corpus's own
    name for a file at its top): ``<corpus id>/<folder, lower-cased>``."""
    return f"{corpus}/{_part(folder, _MAX_FOLDER)}"


def site_corpus(site: str) -> str | None:
    """The corpus id a local site names (``html-3f2a9c1d`` for ``html-3f2a9c1d/library``); None
    for a web host, or for a folder written before sites carried their corpus."""
    corpus, slash, folder = site.partition("/")
    if not slash or not is_corpus_id(corpus) or not folder or "/" in folder:
        return None
    return corpus


# --- scholarly works: each its own site, never a site lesson's ---------------------------------

SCHOLARLY_PREFIX = "scholarly/"
_MAX_WORK = 60 - len(SCHOLARLY_PREFIX)


def scholarly_site(identity: str) -> str:
    """The site a scholarly work counts under: ``scholarly/<identifier>`` in the safe characters of a
    folder (``doi:10.1038/x`` -> ``scholarly/doi-10.1038-x``), a long one cut and told apart by a hash."""
    name = _UNSAFE_PART.sub("-", identity.lower()).strip("-.") or "work"
    if len(name) > _MAX_WORK:
        name = f"{name[: _MAX_WORK - 9]}-{hashlib.sha256(identity.encode()).hexdigest()[:8]}"
    return SCHOLARLY_PREFIX + name
