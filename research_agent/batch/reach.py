"""What a stored batch may make its runs read: its folders, honoured only under this user's signature.

A batch state file lies under ``reports/``, where anything may have been planted or edited. Its
questions and options are data: they say what was asked and where it stands. The folders it names
(the options' ``corpus_dirs``, each question's ``corpus``, an eval's world) would be authority: resumed as they
stand, a planted file could make ``batch --resume ID`` read any folder and send its text to the
model endpoint. So the tool signs them when it writes the state (a keyed BLAKE2b over the batch
id and every folder named, keyed by the user's secret key in the user state folder, outside
``reports/``, as the memory index's rows are), and a resume without the questions file uses them
only when the signature checks. Otherwise the folders come from the resume itself (``--corpus``,
or the person's own config file); with none given, the resume is refused, saying why: the file
carries no signature, or one that does not match.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files.state import secret_key
from .state import BatchState

__all__ = ["folders_named", "sign_reach", "resumable_rows", "reach_problem"]

_PERSON = b"batch-reach"


def folders_named(state: BatchState) -> list[str]:
    """Every folder ``state`` names for its runs to read, in order, each once."""
    named = [state.file] if state.FILE_IS_FOLDER and state.file else []
    named += _texts(state.overrides.get("corpus_dirs"))
    for entry in state.entries:
        named += _texts(entry.row.get("corpus"))
    return list(dict.fromkeys(named))


def _texts(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list | tuple) else []


def _mac(state: BatchState, key: bytes) -> str:
    hasher = hashlib.blake2b(key=key, digest_size=16, person=_PERSON)
    hasher.update(json.dumps({"id": state.id, "folders": folders_named(state)}).encode("utf-8", "surrogatepass"))
    return hasher.hexdigest()


def sign_reach(state: BatchState, state_dir: Path) -> None:
    """Sign the folders ``state`` names with the user's key (kept in the state file as ``signed``)."""
    state.signed = _mac(state, secret_key(state_dir)) if folders_named(state) else ""


def reach_problem(state: BatchState, state_dir: Path) -> str | None:
    """Why the folders ``state`` names cannot be trusted (None: it names none, or this user's tool signed them)."""
    named = folders_named(state)
    if not named:
        return None
    if not state.signed:
        why = "carries no signature (written by hand, by another tool, or by an earlier version)"
    elif not hmac.compare_digest(state.signed, _mac(state, secret_key(state_dir))):
        why = "carries a signature that does not match (edited, planted, or written by another user)"
    else:
        return None
    shown = ", ".join(repr(folder[:120]) for folder in named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
    return f"it names folders to read ({shown}) but {why}"


def resumable_rows(state: BatchState, rows: list[Any], given_folders: bool, state_dir: Path) -> list[Any]:
    """The rows of ``state`` to resume without its questions file: as stored when its folders are
    signed; without their folders when the resume gives its own (``given_folders``: ``--corpus`` or
    the person's config); else InputError naming the file and why."""
    problem = reach_problem(state, state_dir)
    if problem is None:
        return rows
    if not given_folders:
        raise InputError(
            f"batch state {state.path}: {problem}; its folders are not read. Give the folders again with --corpus, "
            "or resume with the questions FILE"
        )
    state.overrides.pop("corpus_dirs", None)
    return [replace(row, corpus=None) for row in rows]
