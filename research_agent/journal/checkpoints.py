"""A run's checkpoints: every model answer and every search it got, kept as it gets them, so that
``run --resume`` never asks again for what the run already has.

A checkpoint is keyed by what it holds, never by the order of the stages: its file,
``reports/meta/checkpoints/<run id>/<what>-<hash>.json``, is named by what it is (``plan``,
``search``, ``scores``, ``draft``, ``skeptic``, ``claims``, ``revision``...) and by the hash of
the question that got it (the request's stage, prompts, schema and parameters; the provider,
query and count of a search). A resumed run tells its story again from the top with the same
settings, the same id, start time and lesson draw: every step that asks what it asked before
finds its answer here, the model is asked only for what the run never had, and stages that run
side by side (a draft written while relevance scores: :mod:`research_agent.run.first_draft`) find
theirs wherever they come in the story. Each file is written atomically once its answer is whole,
signed with the user's key (:mod:`.signing`): one whose signature does not check (planted, edited,
or written under another key) is passed over, and the run asks again.

:class:`RememberingModel` and :class:`RememberingProvider` wrap the run's model and search
providers; :class:`Checkpoints` is the folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ..errors import InputError, StorageError
from ..files.atomic import atomic_write_text
from ..files.safefile import read_text_capped
from ..llm.budget import ContextBudget
from ..llm.protocol import ChatModel, ChatRequest, ChatResponse, TokenCallback
from ..llm.usage import Usage
from ..search.base import SearchProvider
from ..sources import SearchHit, Work
from .signing import checks, mac

__all__ = ["Checkpoints", "RememberingModel", "RememberingProvider", "checkpoint_dir", "remove_checkpoints", "HOLDS"]

log = logging.getLogger(__name__)

MAX_CHECKPOINT_BYTES = 16 * 1024 * 1024
# What a model answer holds, by the stage that asked for it (its file's first word).
HOLDS = {"decompose": "plan", "relevance": "scores", "draft": "draft", "revise": "revision", "skeptic": "skeptic",
         "claims": "claims", "classify": "domain"}  # fmt: skip


def checkpoint_dir(meta_dir: Path, run_id: str) -> Path:
    return Path(meta_dir) / "checkpoints" / run_id


def remove_checkpoints(meta_dir: Path, run_id: str) -> bool:
    """Remove the checkpoints of ``run_id``; True when there were some."""
    folder = checkpoint_dir(meta_dir, run_id)
    if not folder.is_dir() or folder.is_symlink():
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True


def _hash(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class Checkpoints:
    """The checkpoint folder of one run. ``reused`` counts what a lookup found (the answers and
    searches this process did not ask for again)."""

    def __init__(self, meta_dir: Path, run_id: str, key: bytes) -> None:
        self.meta_dir = Path(meta_dir)
        self.folder = checkpoint_dir(meta_dir, run_id)
        self._key = key  # the user's: a checkpoint kept under another key is not this user's run's
        self.reused = 0
        self._asked: dict[str, int] = {}

    def key(self, payload: Any) -> str:
        """The key of the next ask of ``payload``: its hash, and how many times this run asked it
        before (the same question asked twice, e.g. once more after an answer it could not use,
        is answered on resume as it was each time)."""
        digest = _hash(payload)
        self._asked[digest] = self._asked.get(digest, 0) + 1
        return f"{digest}-{self._asked[digest]}"

    def _path(self, what: str, key: str) -> Path:
        return self.folder / f"{what}-{key}.json"

    def get(self, what: str, key: str) -> Any | None:
        """What was kept under ``key`` (None when nothing was, or the file cannot be read)."""
        path = self._path(what, key)
        try:
            kept = json.loads(read_text_capped(path, max_bytes=MAX_CHECKPOINT_BYTES, inside=self.folder))
            if not isinstance(kept, dict) or not checks(self._key, "checkpoint", self._name(path), kept.get("data"), kept.get("mac")):
                raise ValueError("its signature does not check")
        except FileNotFoundError:
            return None
        except (OSError, StorageError, InputError, ValueError) as exc:
            log.info("checkpoint %s passed over: %s", path.name, exc)
            return None
        self.reused += 1
        return kept["data"]

    def _name(self, path: Path) -> str:
        return f"{self.folder.name}/{path.name}"  # the run and the question: a checkpoint moved elsewhere fails

    def put(self, what: str, key: str, data: Any) -> None:
        """Keep ``data`` under ``key``, atomically; a checkpoint that cannot be written costs only
        the resume it would have spared (said in the log), never the run."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self._path(what, key)
            signed = {"data": data, "mac": mac(self._key, "checkpoint", self._name(path), data)}
            atomic_write_text(path, json.dumps(signed, ensure_ascii=False))
        except (OSError, StorageError) as exc:
            log.warning("checkpoint %s not kept: %s", what, exc)


def _request_key(request: ChatRequest) -> dict[str, Any]:
    return {"stage": request.stage, "system": request.system, "user": request.user, "schema": request.schema,
            "temperature": request.temperature, "tier": request.tier, "max_tokens": request.max_tokens,
            "retry": request.retry}  # fmt: skip


def _response_data(response: ChatResponse) -> dict[str, Any]:
    return {**asdict(replace(response, usage=Usage())), "usage": asdict(response.usage)}


def _response(data: Mapping[str, Any]) -> ChatResponse:
    usage = Usage(**data["usage"])
    kept = {k: v for k, v in data.items() if k != "usage"}
    return ChatResponse(**{**kept, "notes": tuple(kept.get("notes", ())), "quirks": tuple(kept.get("quirks", ()))},
                        usage=usage)  # fmt: skip


class RememberingModel:
    """A ChatModel that answers from the run's checkpoints what it answered before, and keeps every
    new answer there. A streamed answer found there is heard whole, in one piece."""

    def __init__(self, inner: ChatModel, checkpoints: Checkpoints) -> None:
        self.inner = inner
        self.checkpoints = checkpoints

    def _kept(self, request: ChatRequest) -> tuple[str, str, ChatResponse | None]:
        what, key = HOLDS.get(request.stage, request.stage), self.checkpoints.key(_request_key(request))
        data = self.checkpoints.get(what, key)
        try:
            return what, key, None if data is None else _response(data)
        except (TypeError, KeyError, ValueError):
            return what, key, None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        what, key, kept = self._kept(request)
        if kept is not None:
            return kept
        answer = await self.inner.complete(request)
        self.checkpoints.put(what, key, _response_data(answer))
        return answer

    async def stream(self, request: ChatRequest, on_tokens: TokenCallback | None = None) -> ChatResponse:
        what, key, kept = self._kept(request)
        if kept is not None:
            if on_tokens is not None:
                on_tokens(kept.usage.completion_tokens or max(1, len(kept.text) // 4), kept.text)
            return kept
        answer = await self.inner.stream(request, on_tokens)
        self.checkpoints.put(what, key, _response_data(answer))
        return answer

    async def context_budget(self) -> ContextBudget | None:
        return await self.inner.context_budget()

    async def aclose(self) -> None:
        return None  # the inner model is closed by whoever owns it


def _hit(data: Mapping[str, Any]) -> SearchHit:
    work = data.get("work")
    if work is not None:
        work = Work(**{**work, "authors": tuple(work.get("authors", ()))})
    return SearchHit(**{**data, "work": work})


class RememberingProvider:
    """A SearchProvider that answers from the run's checkpoints a search it made before (the web
    may answer differently today), and keeps every new answer there."""

    def __init__(self, inner: SearchProvider, checkpoints: Checkpoints) -> None:
        self.inner = inner
        self.name = inner.name
        self.checkpoints = checkpoints

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        key = self.checkpoints.key({"provider": self.name, "query": query, "max_results": max_results})
        kept = self.checkpoints.get("search", key)
        if isinstance(kept, list):
            try:
                return [_hit(item) for item in kept]
            except (TypeError, KeyError, ValueError):
                pass
        hits = await self.inner.search(query, max_results=max_results)
        self.checkpoints.put("search", key, [asdict(hit) for hit in hits])
        return hits

    def __getattr__(self, name: str) -> Any:  # what else the provider offers (its index, its corpus)
        return getattr(self.inner, name)
