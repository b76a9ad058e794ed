"""The strict patterns a name must match before a lesson may carry it into a prompt.

A site is a host name for web pages (lower-case labels, a letters-only top-level
label) or, for local files, the corpus-relative folder (letters, digits and ``._-/``,
at most 60 characters, no ``..`` part).
"""

from __future__ import annotations

import re

__all__ = ["valid_hostname", "valid_folder", "valid_site"]

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
