"""Signing what a resume trusts: a run's journal entry and its checkpoints.

Anything under ``reports/`` may have been planted (a repository can carry someone else's
``reports/``). A resumed run takes its settings from its journal entry (its corpus folders, its
search providers, whether it may fetch private addresses) and its model answers and searches from
its checkpoints, so a planted entry could steer a resume and a planted checkpoint could put words
in the model's mouth. Both are therefore signed with the user's secret key (kept in the user state
folder, outside ``reports/``: :func:`research_agent.files.state.secret_key`, the key that signs the
memory's index and trial ledger): an entry whose MAC does not check cannot be resumed, and a
checkpoint whose MAC does not check is passed over (the run asks again).

The MAC is keyed BLAKE2b, personalised per kind so that a signed checkpoint never passes for an
entry, over the canonical JSON of what is kept and the name it is kept under.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
from pathlib import Path
from typing import Any

from ..errors import StorageError
from ..files.state import secret_key

__all__ = ["mac", "checks", "user_key"]

log = logging.getLogger(__name__)

_MAC_BYTES = 16


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


def mac(key: bytes, kind: str, name: str, value: Any) -> str:
    """The MAC of ``value`` kept as ``name`` (a file name), for ``kind`` (``entry``, ``checkpoint``)."""
    hasher = hashlib.blake2b(key=key, digest_size=_MAC_BYTES, person=kind.encode()[:16])
    hasher.update(name.encode("utf-8", "surrogatepass") + b"\0" + _canonical(value))
    return hasher.hexdigest()


def checks(key: bytes, kind: str, name: str, value: Any, given: Any) -> bool:
    """Whether ``given`` is the MAC of ``value`` kept as ``name``."""
    return isinstance(given, str) and hmac.compare_digest(mac(key, kind, name, value), given)


def user_key(state_dir: Path) -> bytes:
    """The user's secret key, or, where the state folder cannot keep one, a key of this process's
    own (what it signs then cannot be resumed by another process; said in the log)."""
    try:
        return secret_key(Path(state_dir))
    except (StorageError, OSError) as exc:
        log.warning("the run's journal is signed with a key of this process only (%s): it cannot be resumed", exc)
        return secrets.token_bytes(32)
