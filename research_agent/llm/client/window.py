"""The context window a server says it has, and the refusals that say a prompt did not fit.

Where servers say it (:func:`window_questions`, asked at once, the first in this order that answers wins):

* llama.cpp's server: ``GET /props`` (``default_generation_settings.n_ctx``) or ``GET /slots``
  (``n_ctx`` of each slot);
* vLLM: ``GET /v1/models`` (``max_model_len`` of the model);
* Ollama: ``POST /api/show`` (``num_ctx`` among the model's parameters; without it, the model's
  ``context_length`` is only an upper bound: Ollama runs it in 4,096 tokens unless told more,
  so that is a guess a setting overrides).

:class:`Windows` keeps what was learned per model, asks the server once, and takes the
``context_tokens`` setting where the server says nothing (and as a ceiling where it does).
A refusal for size (:func:`refusal`) names the window and the prompt's real size when the
server gives them: llama-cpp-python's "Requested tokens (9467) exceed context window of 8192",
OpenAI's and vLLM's "maximum context length is 8192 tokens ... (9467 in the messages, ...)",
llama.cpp's ``exceed_context_size_error`` with ``n_ctx`` and ``n_prompt_tokens``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..budget import ContextBudget

__all__ = [
    "Windows",
    "Heard",
    "settled",
    "Question",
    "Refusal",
    "window_questions",
    "ask_window",
    "read_window_answer",
    "refusal",
    "server_root",
    "OLLAMA_DEFAULT",
]

log = logging.getLogger(__name__)

OLLAMA_DEFAULT = 4096  # the context Ollama runs a model in unless num_ctx (or OLLAMA_CONTEXT_LENGTH) says more
MAX_PROBE_BYTES = 256 * 1024
_WINDOW = range(256, 10_000_001)  # a window outside it is not believed


@dataclass(frozen=True)
class Question:
    """One place a server may say its window: ``method`` ``url`` (with ``body``), read by ``read``
    into (tokens, certain); ``where`` names it for the user."""

    method: Literal["GET", "POST"]
    url: str
    body: dict[str, Any] | None
    read: Callable[[Any], tuple[int, bool] | None]
    where: str


def server_root(base_url: str) -> str:
    """The server's root: ``base_url`` without a trailing ``/v1``."""
    base = base_url.rstrip("/")
    return base[:-3] if base.endswith("/v1") else base


def _tokens(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value in _WINDOW else None


def _from_props(data: Any) -> tuple[int, bool] | None:
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    found = _tokens(settings.get("n_ctx")) if isinstance(settings, dict) else None
    found = found or _tokens(data.get("n_ctx"))
    return (found, True) if found else None


def _from_slots(data: Any) -> tuple[int, bool] | None:
    sizes = [_tokens(slot.get("n_ctx")) for slot in data if isinstance(slot, dict)] if isinstance(data, list) else []
    known = [size for size in sizes if size]
    return (min(known), True) if known else None


def _from_models(model: str) -> Callable[[Any], tuple[int, bool] | None]:
    def read(data: Any) -> tuple[int, bool] | None:
        entries = data.get("data") if isinstance(data, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("id") == model and (found := _tokens(entry.get("max_model_len"))):
                return found, True
        return None

    return read


def _from_ollama_show(data: Any) -> tuple[int, bool] | None:
    if not isinstance(data, dict):
        return None
    parameters = data.get("parameters")
    if isinstance(parameters, str) and (m := re.search(r"(?m)^\s*num_ctx\s+(\d{1,8})\s*$", parameters)):
        found = _tokens(int(m.group(1)))
        if found:
            return found, True
    info = data.get("model_info")
    lengths = [_tokens(v) for k, v in info.items() if str(k).endswith(".context_length")] if isinstance(info, dict) else []
    known = [length for length in lengths if length]
    return (min(min(known), OLLAMA_DEFAULT), False) if known else None


def window_questions(base_url: str, model: str) -> Iterator[Question]:
    """Where the server at ``base_url`` may say the window it runs ``model`` in, in order."""
    root = server_root(base_url)
    yield Question("GET", f"{root}/props", None, _from_props, "llama.cpp /props")
    yield Question("GET", f"{root}/slots", None, _from_slots, "llama.cpp /slots")
    yield Question("GET", f"{base_url.rstrip('/')}/models", None, _from_models(model), "/models max_model_len")
    yield Question("POST", f"{root}/api/show", {"model": model}, _from_ollama_show, "Ollama /api/show")


class Heard:
    """What the answers to :func:`window_questions` say so far: the first certain window ends the
    asking (:meth:`take` returns it); a guess is kept (:attr:`guess`) in case none comes."""

    def __init__(self) -> None:
        self.guess: ContextBudget | None = None

    def take(self, question: Question, status: int, body: bytes) -> ContextBudget | None:
        found = read_window_answer(question, status, body)
        if found is None:
            return None
        if found[1]:
            return ContextBudget(found[0], question.where)
        self.guess = self.guess or ContextBudget(found[0], f"{question.where} (guessed)")
        return None


async def ask_window(
    http: Any, base_url: str, model: str, headers: dict[str, str], timeout: float
) -> ContextBudget | None:
    """The window the server says (an httpx.AsyncClient ``http``); None when it says none. A
    guess (Ollama without ``num_ctx``) comes back with ``source`` ending in "(guessed)".

    Every place is asked at once (one round trip before the first call, not four in a row: a
    remote gateway answers none of them) and the answers are read in :func:`window_questions`'
    order, so the same place wins as if they had been asked one by one; the questions still
    open when one says the window are dropped."""
    from .answers import read_body

    async def one(question: Question) -> tuple[int, bytes] | None:
        try:
            async with http.stream(question.method, question.url, json=question.body, headers=headers,
                                   timeout=timeout) as response:  # fmt: skip
                ok = response.status_code == 200
                return response.status_code, await read_body(response, MAX_PROBE_BYTES) if ok else b""
        except Exception as exc:  # noqa: BLE001 - any failure here means "not said here"
            log.debug("context window: %s: %s: %s", question.url, type(exc).__name__, exc)
            return None

    heard = Heard()
    questions = list(window_questions(base_url, model))
    asked = [asyncio.ensure_future(one(question)) for question in questions]
    try:
        for question, answer in zip(questions, asked, strict=True):
            got = await answer
            try:
                said = heard.take(question, *got) if got is not None else None
            except Exception as exc:  # noqa: BLE001 - an answer that cannot be read says nothing
                log.debug("context window: %s: %s: %s", question.url, type(exc).__name__, exc)
                continue
            if said is not None:
                return said
        return heard.guess
    finally:
        for task in asked:
            task.cancel()
        await asyncio.gather(*asked, return_exceptions=True)


def settled(said: ContextBudget | None, setting: int | None) -> ContextBudget | None:
    """The window to budget for: what the server says, never above the ``context_tokens`` setting;
    the setting where the server says nothing (or only guesses)."""
    mine = ContextBudget(setting, "setting context_tokens") if setting else None
    if said is None or (mine is not None and (said.source.endswith("(guessed)") or mine.window < said.window)):
        return mine
    return said


def read_window_answer(question: Question, status: int, body: bytes) -> tuple[int, bool] | None:
    """What one answer to ``question`` says: (tokens, certain), or None (also for a caller with
    its own HTTP client, e.g. ``doctor``)."""
    if status != 200:
        return None
    try:
        return question.read(json.loads(body.decode("utf-8")))
    except (ValueError, RecursionError):
        return None


# --- refusals ---------------------------------------------------------------------------

_REFUSED = re.compile(
    r"exceeds? (?:the )?(?:available )?context (?:window|size|length)|maximum context length|context_length_exceeded"
    r"|exceed_context_size|prompt is too long|too many tokens|context window exceeded",
    re.IGNORECASE,
)
_SAID_WINDOW = re.compile(r"context (?:window|size|length) (?:is |of )?(\d{3,8})|context length is (\d{3,8})", re.I)
_SAID_PROMPT = re.compile(r"Requested tokens \((\d{1,9})\)|\((\d{1,9}) in the messages", re.IGNORECASE)


@dataclass(frozen=True)
class Refusal:
    """A refusal for size: the window and the prompt's size in the server's tokens, when it said them."""

    window: int | None
    prompt_tokens: int | None


def _number(match: re.Match[str] | None) -> int | None:
    if match is None:
        return None
    return int(next(group for group in match.groups() if group))


def refusal(status: int, text: str, body: Any = None) -> Refusal | None:
    """The refusal in an error answer (HTTP 400, 413, 422 or 500) when it says the prompt did not fit."""
    if status not in (400, 413, 422, 500) or not _REFUSED.search(text):
        return None
    fields = body if isinstance(body, dict) else {}
    window = _tokens(fields.get("n_ctx")) or _number(_SAID_WINDOW.search(text))
    prompt = fields.get("n_prompt_tokens")
    prompt = prompt if isinstance(prompt, int) and not isinstance(prompt, bool) and prompt > 0 else None
    return Refusal(window, prompt or _number(_SAID_PROMPT.search(text)))


class Windows:
    """The windows of one client's models: asked of the server once per model (``ask``), else
    the ``setting``; narrowed by every refusal for size."""

    def __init__(self, setting: int | None, ask: Callable[[str], Awaitable[ContextBudget | None]] | None) -> None:
        self._setting_tokens = setting
        self._setting = settled(None, setting)
        self._ask = ask
        self._known: dict[str, ContextBudget | None] = {}
        self._lock = asyncio.Lock()

    async def budget(self, model: str) -> ContextBudget | None:
        """The budget for ``model``; the server is asked the first time."""
        if model not in self._known and self._ask is not None:
            async with self._lock:
                if model not in self._known:
                    self._known[model] = settled(await self._ask(model), self._setting_tokens)
        return self.known(model)

    def known(self, model: str) -> ContextBudget | None:
        """What is known now, without asking."""
        return self._known.get(model, self._setting)

    def refused(self, model: str, refused: Refusal, estimated: int) -> ContextBudget | None:
        """Learn from a refusal of a prompt estimated at ``estimated`` tokens: the tighter budget,
        or None when neither the server nor anything before said the window."""
        before = self.known(model)
        window = refused.window or (before.window if before is not None else None)
        if window is None:
            return None
        base = before if before is not None else ContextBudget(window, "the server's refusal")
        budget = base.after_refusal(estimated, refused.prompt_tokens, refused.window)
        self._known[model] = budget
        return budget
