"""The model seam: one small protocol, and the OpenAI-compatible implementation.

Every stage talks to a :class:`ChatModel`. A call is a :class:`ChatRequest` naming
its stage, a system and a user message, and (almost always) the JSON Schema the answer
must satisfy; the answer is a :class:`ChatResponse` whose ``data`` already validated.

Tests pass a scripted ChatModel; the product builds :class:`OpenAIChatModel` from
Settings. :class:`UsageRecorder` (in :mod:`research_agent.usage`) wraps any ChatModel to
count tokens per stage, failed calls included.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import jsonschema

from .errors import ConfigError, InvalidModelOutput, LLMError, LLMTimeout, LLMUnavailable, ModelNotFound
from .passages import estimate_tokens
from .prices import PriceTable
from .schema_bounds import answer_schema, clamp, wire_schema
from .usage import Usage, UsageRecorder

if TYPE_CHECKING:
    import openai

    from .config import Settings
else:
    openai = None  # imported on first use: it costs half a second of start-up for every command


def _import_openai() -> None:
    global openai
    if openai is None:
        import openai as module

        openai = module


__all__ = [
    "ChatRequest",
    "ChatResponse",
    "ChatModel",
    "Usage",
    "UsageRecorder",
    "OpenAIChatModel",
    "OutputForm",
    "strip_think",
    "extract_json",
    "parse_retry_after",
    "wire_schema",
    "STRUCTURED_ATTEMPTS",
    "DEFAULT_TIMEOUT",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChatRequest:
    """One call to a model.

    ``schema`` is the JSON Schema of the answer (its ``stage`` is used as the schema
    name); ``None`` asks for plain text. ``tier`` picks the main or the cheaper fast model.
    The schema's upper bounds (``maxLength``, ``maxItems``) are the real ones: an answer
    that passes them is cut to them (:func:`research_agent.schema_bounds.clamp`), not refused.
    """

    stage: str
    system: str
    user: str
    schema: Mapping[str, Any] | None = None
    temperature: float = 0.2
    tier: Literal["main", "fast"] = "main"
    max_tokens: int | None = None


@dataclass(frozen=True)
class ChatResponse:
    """A validated answer. ``data`` is the parsed JSON (None for plain text).

    ``notes`` says what was changed locally, e.g. a field cut to its schema bound.
    """

    data: Any
    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    notes: tuple[str, ...] = ()


@runtime_checkable
class ChatModel(Protocol):
    """Anything that can answer a ChatRequest.

    An answer's ``data`` satisfies the request's schema (upper bounds applied by cutting).
    When no valid answer came after :data:`STRUCTURED_ATTEMPTS` attempts, raise
    :class:`~research_agent.errors.InvalidModelOutput`; any LLMError may carry the
    ``usage`` spent before it, which :class:`UsageRecorder` then counts.
    """

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


# ---------------------------------------------------------------------------
# The OpenAI-compatible implementation
# ---------------------------------------------------------------------------

OutputForm = Literal["json_schema", "json_object", "instructions"]
STRUCTURED_ATTEMPTS = 3  # answers asked for per request; each retry shows the model its error
DEFAULT_TIMEOUT = 180.0  # seconds per call: a slow CPU server still finishes a long draft
_TIMEOUT_RETRIES = 1  # per request: a second timeout is final (other transient errors keep theirs)
_FORMS: tuple[OutputForm, ...] = ("json_schema", "json_object", "instructions")

# Which structured-output form worked, per (base_url, model); shared by every instance so
# later runs in one process go straight to the form the endpoint accepts.
_SHARED_FORMS: dict[tuple[str, str], OutputForm] = {}

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_API_KEY = "sk-no-key-needed"  # local servers ignore the key, the client needs one
NO_ENDPOINT_MESSAGE = (
    "no model endpoint configured: set OPENAI_API_KEY (for OpenAI), or OPENAI_BASE_URL "
    "(e.g. http://localhost:11434/v1 for a local Ollama)"
)

_RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
_REJECTION_WORDS = ("response_format", "json_schema", "schema", "grammar")
_BACKOFF_BASE = 0.25  # transient 5xx clear fast; 429s usually say how long to wait
_BACKOFF_CAP = 30.0
_RETRY_AFTER_CAP = 60.0
_MAX_ECHO_CHARS = 8000  # how much of a bad answer is sent back in the repair message
_MAX_JSON_STARTS = 500  # bound on the prose scan for an embedded JSON value

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def strip_think(text: str) -> str:
    """Remove reasoning: ``<think>...</think>`` blocks, everything before an orphan
    ``</think>``, and an unterminated leading ``<think>`` with all that follows it."""
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:  # the opening tag was in the prompt template (DeepSeek-R1 style)
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened is not None and not text[: opened.start()].strip():
        text = ""  # reasoning that never ended: the answer was cut off inside it
    return text.strip()


def extract_json(text: str) -> Any:
    """The JSON value in a model's answer: the whole text, a fenced block, or the largest
    JSON object/array embedded in prose. Raises ValueError when there is none."""
    text = text.strip()
    if not text:
        raise ValueError("the answer was empty")
    try:
        return json.loads(text)
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip())
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    best: tuple[int, Any] | None = None
    index, starts = 0, 0
    while index < len(text) and starts < _MAX_JSON_STARTS:
        if text[index] in "{[":
            starts += 1
            try:
                value, end = decoder.raw_decode(text, index)
            except ValueError:
                index += 1
                continue
            if best is None or end - index > best[0]:
                best = (end - index, value)
            index = end
            continue
        index += 1
    if best is None:
        raise ValueError("no JSON object or array found in the answer")
    return best[1]


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP-date),
    capped at 60; None when absent or unreadable. ``now`` is a Unix time (for HTTP-dates)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms:
        try:
            return _clamp(float(raw_ms) / 1000.0)
        except ValueError:
            log.debug("ignoring unreadable retry-after-ms header %r", raw_ms)
    raw = lowered.get("retry-after")
    if not raw:
        return None
    try:
        return _clamp(float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        log.debug("ignoring unreadable Retry-After header %r", raw)
        return None
    current = time.time() if now is None else now
    return _clamp(when.timestamp() - current)


def _clamp(seconds: float) -> float | None:
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), _RETRY_AFTER_CAP)


class _SchemaRejected(Exception):
    """The endpoint refused the response_format we sent; try the next form."""


class _InvalidAnswer(Exception):
    """The answer did not parse or validate; ``str()`` is the short reason."""


@dataclass(frozen=True)
class _Raw:
    content: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int


@dataclass
class _Tally:
    """What one request has spent so far, and how many retries after a timeout it has left."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    retries: int = 0
    timeout_retries: int = _TIMEOUT_RETRIES

    def answered(self, raw: _Raw) -> None:
        self.prompt_tokens += raw.prompt_tokens
        self.completion_tokens += raw.completion_tokens
        self.calls += 1

    def usage(self, prices: PriceTable, model: str) -> Usage:
        cost = prices.cost(model, self.prompt_tokens, self.completion_tokens)
        return Usage(self.prompt_tokens, self.completion_tokens, self.calls, self.retries, cost)


class OpenAIChatModel:
    """A :class:`ChatModel` for any OpenAI-compatible chat-completions endpoint.

    Structured answers are asked for with ``response_format`` ``json_schema`` (strict),
    then ``json_object`` carrying the schema (llama.cpp's form), then instructions alone,
    remembering per (base_url, model) which form the endpoint accepted. The schema sent
    never carries a bound above 200 (grammar decoders crash on them); every answer is
    validated with jsonschema and cut to the real bounds. An invalid answer is asked again,
    showing the model its error, up to :data:`STRUCTURED_ATTEMPTS` answers in all.
    Transient failures (429, 5xx, connection errors) are retried up to ``max_retries``
    times with exponential backoff and jitter, honouring ``Retry-After``, sleeping through
    the injected ``sleep``; a timeout is retried once per request. ``Usage.calls`` counts
    every answer received, ``Usage.retries`` the transient retries plus repair attempts;
    an LLMError raised carries the usage spent before it as ``.usage``.
    """

    def __init__(
        self,
        model: str,
        fast_model: str = "",
        api_key: str = PLACEHOLDER_API_KEY,
        base_url: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 4,
        concurrency: int = 16,
        prices: PriceTable | None = None,
        http_client: Any = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        *,
        rng: random.Random | None = None,
        form_cache: dict[tuple[str, str], OutputForm] | None = None,
        limiter: asyncio.Semaphore | None = None,
    ) -> None:
        if not model:
            raise ConfigError("no model name configured: set RESEARCH_AGENT_MODEL or pass --model")
        if timeout <= 0:
            raise ConfigError("the model timeout must be positive")
        self.model = model
        self.fast_model = fast_model or model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.timeout = float(timeout)
        self.max_retries = max(0, int(max_retries))
        self.prices = prices if prices is not None else PriceTable.default()
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        self._forms = _SHARED_FORMS if form_cache is None else form_cache
        self._dropped_params: dict[tuple[str, str], set[str]] = {}
        # ``limiter`` lets several models share one bound on calls in flight to an endpoint
        self._semaphore = limiter if limiter is not None else asyncio.Semaphore(max(1, int(concurrency)))
        _import_openai()
        self._client = openai.AsyncOpenAI(
            api_key=api_key or PLACEHOLDER_API_KEY,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.timeout,
            http_client=http_client,
        )

    @classmethod
    def from_settings(cls, settings: Settings, *, http_client: Any = None) -> OpenAIChatModel:
        """Build from Settings; ConfigError when neither an API key nor a base URL is set."""
        if not settings.api_key and not settings.base_url:
            raise ConfigError(NO_ENDPOINT_MESSAGE)
        prices = PriceTable.load(settings.price_table) if settings.price_table else PriceTable.default()
        return cls(
            model=settings.model,
            fast_model=settings.fast_model_name,
            api_key=settings.api_key or PLACEHOLDER_API_KEY,
            base_url=settings.base_url,
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
            concurrency=settings.llm_concurrency,
            prices=prices,
            http_client=http_client,
        )

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._client.close()

    async def __aenter__(self) -> OpenAIChatModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def form_for(self, model: str) -> OutputForm:
        """The structured-output form this endpoint is known to accept for ``model``."""
        return self._forms.get((self.base_url, model), "json_schema")

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer one request; raises the LLMError family (with ``.usage``) or ConfigError (bad key)."""
        model = self.fast_model if request.tier == "fast" else self.model
        tally = _Tally()
        try:
            return await self._answer(request, model, tally)
        except LLMError as exc:
            exc.usage = tally.usage(self.prices, model)
            raise

    async def _answer(self, request: ChatRequest, model: str, tally: _Tally) -> ChatResponse:
        """Up to STRUCTURED_ATTEMPTS answers; each retry shows the model what was wrong."""
        schema = _plain(request.schema) if request.schema is not None else None
        repair: list[dict[str, str]] = []
        reason = ""
        for attempt in range(STRUCTURED_ATTEMPTS):
            tally.retries += 1 if attempt else 0
            if schema is None:
                raw = await self._call(request, model, _messages(request, None) + repair, None, tally)
            else:
                raw = await self._call_structured(request, model, schema, repair, tally)
            tally.answered(raw)
            try:
                data, text, notes = _interpret(raw, schema)
            except _InvalidAnswer as exc:
                reason = str(exc)
                log.info("stage %s: invalid answer %d from %s (%s)", request.stage, attempt + 1, model, reason)
                repair = [
                    {"role": "assistant", "content": raw.content[:_MAX_ECHO_CHARS]},
                    {"role": "user", "content": _repair_message(reason, schema is not None)},
                ]
                continue
            for note in notes:
                log.info("stage %s: %s", request.stage, note)
            usage = tally.usage(self.prices, model)
            return ChatResponse(data=data, text=text, model=model, usage=usage, notes=notes)
        raise InvalidModelOutput(
            f"the {request.stage} stage got invalid output from model {model} "
            f"after {STRUCTURED_ATTEMPTS} attempts: {reason}",
            stage=request.stage,
            model=model,
        )

    async def _call_structured(
        self,
        request: ChatRequest,
        model: str,
        schema: dict[str, Any],
        repair: list[dict[str, str]],
        tally: _Tally,
    ) -> _Raw:
        key = (self.base_url, model)
        start = _FORMS.index(self.form_for(model))
        for form in _FORMS[start:]:
            in_system = wire_schema(schema) if form != "json_schema" else None
            messages = _messages(request, in_system) + repair
            try:
                raw = await self._call(
                    request, model, messages, _response_format(form, request.stage, schema), tally
                )
            except _SchemaRejected as exc:
                log.info(
                    "endpoint %s rejected response_format %s for %s: %s", self.base_url, form, model, exc
                )
                continue
            if self._forms.get(key) != form:
                self._forms[key] = form
            return raw
        raise AssertionError("unreachable: the instructions form sends no response_format")

    async def _call(
        self,
        request: ChatRequest,
        model: str,
        messages: list[dict[str, str]],
        response_format: dict[str, Any] | None,
        tally: _Tally,
    ) -> _Raw:
        """One logical HTTP call with the retry loop; retries are added to ``tally``."""
        attempt = 0
        while True:
            kwargs = self._kwargs(request, model, messages, response_format)
            try:
                async with self._semaphore, asyncio.timeout(self.timeout):
                    completion = await self._client.chat.completions.create(**kwargs)
                return _raw_from(completion, messages)
            except (TimeoutError, openai.APITimeoutError):
                failure: BaseException = TimeoutError()
            except openai.APIConnectionError as exc:
                failure = exc
            except openai.APIStatusError as exc:
                if not self._retryable_status(exc, request, model, response_format):
                    continue  # a parameter the model refuses was dropped: send again at once
                failure = exc
            except openai.APIError as exc:  # a response the client could not read
                failure = exc
            if attempt >= self.max_retries or not _may_retry(failure, tally):
                raise self._final_error(request, failure, attempt + 1) from None
            delay = self._delay(attempt, failure)
            attempt += 1
            tally.retries += 1
            log.info(
                "stage %s: %s; retry %d/%d in %.1fs",
                request.stage,
                _describe(failure),
                attempt,
                self.max_retries,
                delay,
            )
            await self._sleep(delay)

    def _retryable_status(
        self, exc: openai.APIStatusError, request: ChatRequest, model: str, response_format: dict[str, Any] | None
    ) -> bool:
        """True for a transient status; False when a refused parameter was dropped; raises otherwise."""
        key = (self.base_url, model)
        text = _error_text(exc)
        if response_format is not None and _is_rejection(exc.status_code, text):
            raise _SchemaRejected(f"HTTP {exc.status_code} {text[:200]}") from None
        dropped = _unsupported_param(exc.status_code, text, self._dropped_params.get(key, set()))
        if dropped is not None:
            log.info("model %s does not accept %s; sending without it", model, dropped)
            self._dropped_params.setdefault(key, set()).add(dropped)
            return False
        if exc.status_code in (401, 403):
            raise ConfigError(
                f"the model endpoint {self.base_url} refused the API key (HTTP {exc.status_code}): "
                "check OPENAI_API_KEY"
            ) from None
        if exc.status_code == 404:
            which = "RESEARCH_AGENT_FAST_MODEL / --fast-model" if model != self.model else "RESEARCH_AGENT_MODEL / --model"
            raise ModelNotFound(f"model '{model}' not found at {self.base_url}; check {which}") from None
        if exc.status_code not in _RETRYABLE_STATUS:
            raise LLMError(
                f"model endpoint {self.base_url} rejected the {request.stage} request: "
                f"HTTP {exc.status_code} {text[:200]}"
            ) from None
        return True

    def _kwargs(
        self,
        request: ChatRequest,
        model: str,
        messages: list[dict[str, str]],
        response_format: dict[str, Any] | None,
    ) -> dict[str, Any]:
        dropped = self._dropped_params.get((self.base_url, model), set())
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "extra_headers": {"X-Research-Agent-Stage": request.stage},
            "timeout": self.timeout,
        }
        if "temperature" not in dropped:
            kwargs["temperature"] = request.temperature
        if request.max_tokens is not None:
            name = "max_completion_tokens" if "max_tokens" in dropped else "max_tokens"
            kwargs[name] = request.max_tokens
        if response_format is not None:
            kwargs["response_format"] = response_format
        return kwargs

    def _delay(self, attempt: int, failure: BaseException) -> float:
        if isinstance(failure, openai.APIStatusError):
            waited = parse_retry_after(dict(failure.response.headers))
            if waited is not None:
                return waited
        ceiling = min(_BACKOFF_CAP, _BACKOFF_BASE * 2**attempt)
        return ceiling * (0.5 + 0.5 * self._rng.random())

    def _final_error(self, request: ChatRequest, failure: BaseException, attempts: int) -> LLMError:
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(failure, TimeoutError):
            return LLMTimeout(
                f"model call for stage {request.stage} timed out after {self.timeout:g}s ({tries})"
            )
        if isinstance(failure, openai.APIConnectionError):
            cause = failure.__cause__
            if cause is not None and type(cause).__name__ == "ConnectError":
                return LLMUnavailable(
                    f"cannot reach the model endpoint at {self.base_url}: {cause} ({tries})"
                )
            return LLMUnavailable(
                f"model endpoint {self.base_url} kept failing: {_describe(failure)} ({tries})"
            )
        return LLMUnavailable(f"model endpoint {self.base_url} kept failing: {_describe(failure)} ({tries})")


def _may_retry(failure: BaseException, tally: _Tally) -> bool:
    """Whether a retry is left for ``failure``: a timeout spends the request's only one."""
    if not isinstance(failure, TimeoutError):
        return True
    if tally.timeout_retries <= 0:
        return False
    tally.timeout_retries -= 1
    return True


def _plain(value: Any) -> Any:
    """A JSON-ready copy of a schema built from any Mappings/sequences."""
    return json.loads(json.dumps(value, default=dict))


def _schema_instruction(schema: dict[str, Any]) -> str:
    return (
        "Answer with only one JSON value that matches this JSON Schema, with no prose and no "
        "code fences:\n" + json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
    )


def _messages(request: ChatRequest, schema_in_system: dict[str, Any] | None) -> list[dict[str, str]]:
    system = request.system
    if schema_in_system is not None:
        system = (
            f"{system}\n\n{_schema_instruction(schema_in_system)}"
            if system
            else _schema_instruction(schema_in_system)
        )
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": request.user})
    return messages


def _response_format(form: OutputForm, stage: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    if form == "json_schema":
        name = _SCHEMA_NAME.sub("_", stage).strip("_")[:64] or "answer"
        strict = wire_schema(schema, strict=True)
        return {"type": "json_schema", "json_schema": {"name": name, "schema": strict, "strict": True}}
    if form == "json_object":
        return {"type": "json_object", "schema": wire_schema(schema)}
    return None


def _repair_message(reason: str, structured: bool) -> str:
    if structured:
        return f"Your previous answer was invalid: {reason}. Answer again with only JSON matching the schema."
    return f"Your previous answer was unusable: {reason}. Answer again."


def _raw_from(completion: Any, messages: list[dict[str, str]]) -> _Raw:
    choices = getattr(completion, "choices", None) or []
    content, finish = "", "missing"
    if choices:
        message = getattr(choices[0], "message", None)
        content = (getattr(message, "content", None) or "") if message is not None else ""
        finish = getattr(choices[0], "finish_reason", None) or "stop"
    usage = getattr(completion, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None) if usage is not None else None
    done = getattr(usage, "completion_tokens", None) if usage is not None else None
    if not isinstance(prompt, int):
        prompt = sum(estimate_tokens(m["content"]) for m in messages)
    if not isinstance(done, int):
        done = estimate_tokens(content)
    return _Raw(content=content, finish_reason=finish, prompt_tokens=prompt, completion_tokens=done)


def _interpret(raw: _Raw, schema: dict[str, Any] | None) -> tuple[Any, str, tuple[str, ...]]:
    """(data, text, notes) from a raw answer, or _InvalidAnswer with a short reason.

    The answer is checked against the schema without its upper bounds, then cut to them.
    """
    if raw.finish_reason == "missing":
        raise _InvalidAnswer("the endpoint returned no answer (no choices)")
    if raw.finish_reason == "length":
        raise _InvalidAnswer("the answer was cut off at the token limit (finish_reason=length)")
    text = strip_think(raw.content)
    if schema is None:
        if not text:
            raise _InvalidAnswer("the answer was empty")
        return None, text, ()
    try:
        data = extract_json(text)
    except ValueError as exc:
        raise _InvalidAnswer(f"not JSON ({exc})") from None
    checked = answer_schema(schema)
    validator_cls = jsonschema.validators.validator_for(checked)
    error = jsonschema.exceptions.best_match(validator_cls(checked).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        detail = error.message if len(error.message) <= 200 else error.message[:197] + "..."
        raise _InvalidAnswer(f"at /{where}: {detail}" if where else detail)
    data, notes = clamp(data, schema)
    return data, text, notes


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error") or body
        return str(message)
    return str(body if body is not None else exc.message)


def _is_rejection(status: int, text: str) -> bool:
    """A response_format/schema rejection (400/422, or llama.cpp's HTTP 500)."""
    lowered = text.lower()
    return status in (400, 422, 500) and any(word in lowered for word in _REJECTION_WORDS)


def _unsupported_param(status: int, text: str, already: set[str]) -> str | None:
    """Reasoning models refuse ``temperature`` and ``max_tokens``; name the one to drop."""
    if status != 400:
        return None
    lowered = text.lower()
    if "unsupported" not in lowered and "not supported" not in lowered and "does not support" not in lowered:
        return None
    for param in ("temperature", "max_tokens"):
        if f"'{param}'" in lowered and param not in already:
            return param
    return None


def _describe(failure: BaseException) -> str:
    if isinstance(failure, TimeoutError):
        return "timed out"
    if isinstance(failure, openai.APIStatusError):
        return f"HTTP {failure.status_code} {_error_text(failure)[:200]}"
    cause = failure.__cause__
    if cause is not None:
        return f"{type(cause).__name__}: {cause}"
    return f"{type(failure).__name__}: {failure}"
