"""The OpenAI-compatible :class:`~research_agent.llm.protocol.ChatModel`, built on ``openai``.

Any chat-completions endpoint works: OpenAI, Azure-compatible gateways, Ollama, vLLM,
llama.cpp's server, LM Studio, OpenRouter. This module holds the HTTP side: the client,
the retry loop (backoff with jitter, ``Retry-After``, one retry after a timeout; none when the
first call cannot connect at all), and what an endpoint's refusals mean. How a structured answer is asked for, read and
repaired is :mod:`research_agent.llm.structured`.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError, InvalidModelOutput, LLMError, ModelNotFound
from ..prices import PriceTable
from ..protocol import STRUCTURED_ATTEMPTS, ChatRequest, ChatResponse, TokenCallback
from ..structured import (
    FormMemory,
    InvalidAnswer,
    OutputForm,
    RawAnswer,
    SchemaRejected,
    ask_in_forms,
    build_messages,
    interpret,
    plain_schema,
    repair_messages,
)
from ..waiting import SystemTicker, Ticker
from .answers import (
    ACCEPT_ENCODING,
    MAX_ANSWER_BYTES,
    ConnectionLost,
    Unreadable,
    completion_answer,
    read_body,
)
from .refusals import (
    describe,
    error_text,
    final_error,
    is_rejection,
    unreachable,
    unreachable_error,
    unsupported_param,
)
from .retry import RETRYABLE_STATUS, RequestTally, backoff_delay, parse_retry_after
from .streaming import StreamReader

if TYPE_CHECKING:
    import openai

    from ...config import Settings
else:
    openai = None  # imported on first use: it costs half a second of start-up for every command


def import_openai() -> None:
    """Import the openai package now rather than when the first model is built."""
    global openai
    if openai is None:
        import openai as module

        openai = module


__all__ = [
    "OpenAIChatModel",
    "import_openai",
    "DEFAULT_TIMEOUT",
    "DEFAULT_BASE_URL",
    "NO_ENDPOINT_MESSAGE",
]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 180.0  # seconds per call: a slow CPU server still finishes a long draft

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_API_KEY = "sk-no-key-needed"  # local servers ignore the key, the client needs one
NO_ENDPOINT_MESSAGE = (
    "no model endpoint configured: set OPENAI_API_KEY (for OpenAI), or OPENAI_BASE_URL "
    "(e.g. http://localhost:11434/v1 for a local Ollama)"
)


class OpenAIChatModel:
    """A :class:`ChatModel` for any OpenAI-compatible chat-completions endpoint.

    Structured answers are asked for with ``response_format`` ``json_schema`` (strict),
    then ``json_object`` carrying the schema (llama.cpp's form), then instructions alone,
    remembering per (base_url, model) which form the endpoint accepted. The schema sent
    never carries a bound above 200 (grammar decoders crash on them); every answer is
    validated with jsonschema and cut to the real bounds. An invalid answer is asked again,
    showing the model its error, up to :data:`STRUCTURED_ATTEMPTS` answers in all.
    A first call that cannot connect at all (connection refused, a host name that does not
    resolve, no route) raises EndpointUnreachable at once: there is nothing to wait for.
    Transient failures (429, 5xx, connection errors) are retried up to ``max_retries``
    times with exponential backoff and jitter, honouring ``Retry-After``, sleeping through
    the injected ``sleep``; a timeout is retried once per request. An answer that cannot
    be read (:mod:`.answers`: not JSON, no choices, null content, over ``max_answer_bytes``)
    is retried like a 5xx, then raised as UnreadableAnswer. ``Usage.calls`` counts every
    answer received, ``Usage.retries`` the transient retries plus repair attempts; an
    LLMError raised carries the usage spent before it as ``.usage``.

    :meth:`stream` asks for plain text, streamed (:mod:`.streaming`): ``timeout`` is then an
    idle limit (no token for that long, on ``ticker``'s clock), and whatever arrived before
    a stall or the token limit is returned with its ``finish_reason``.
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
        ticker: Ticker | None = None,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
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
        self.max_answer_bytes = max(1, int(max_answer_bytes))
        self._ticker = ticker if ticker is not None else SystemTicker()
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        self._forms = FormMemory(form_cache)
        self._dropped_params: dict[tuple[str, str], set[str]] = {}
        self._reached = False  # set once the endpoint answered anything: a refused connect is then transient
        # ``limiter`` lets several models share one bound on calls in flight to an endpoint
        self._semaphore = limiter if limiter is not None else asyncio.Semaphore(max(1, int(concurrency)))
        import_openai()
        self._client = openai.AsyncOpenAI(
            api_key=api_key or PLACEHOLDER_API_KEY,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.timeout,
            http_client=http_client,
        )

    @classmethod
    def from_settings(
        cls, settings: Settings, *, http_client: Any = None, ticker: Ticker | None = None
    ) -> OpenAIChatModel:
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
            ticker=ticker,
            max_answer_bytes=settings.llm_max_answer_bytes,
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
        return self._forms.first((self.base_url, model))

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer one request; raises the LLMError family (with ``.usage``) or ConfigError (bad key)."""
        model = self.fast_model if request.tier == "fast" else self.model
        tally = RequestTally()
        try:
            return await self._answer(request, model, tally)
        except LLMError as exc:
            exc.usage = tally.usage(self.prices, model)
            raise

    async def stream(self, request: ChatRequest, on_tokens: TokenCallback | None = None) -> ChatResponse:
        """Answer a plain-text request as a stream; ``on_tokens(n, piece)`` hears each piece as it comes.

        Never raises for an answer that stalled or was cut: its ``finish_reason`` says so
        (``stalled``, ``length``, ``unfinished``) and ``text`` holds what arrived.
        """
        model = self.fast_model if request.tier == "fast" else self.model
        tally = RequestTally()
        reader = StreamReader(self._client, idle=self.timeout, ticker=self._ticker,
                              max_bytes=self.max_answer_bytes, on_tokens=on_tokens)  # fmt: skip
        try:
            raw = await self._call(request, model, build_messages(request, None), None, tally, read=reader.read)
        except LLMError as exc:
            exc.usage = tally.usage(self.prices, model)
            raise
        tally.answered(raw)
        return reader.response(raw, model, tally.usage(self.prices, model))

    async def _answer(self, request: ChatRequest, model: str, tally: RequestTally) -> ChatResponse:
        """Up to STRUCTURED_ATTEMPTS answers; each retry shows the model what was wrong."""
        schema = plain_schema(request.schema) if request.schema is not None else None
        repair: list[dict[str, str]] = []
        reason = ""
        for attempt in range(STRUCTURED_ATTEMPTS):
            tally.retries += 1 if attempt else 0
            if schema is None:
                raw = await self._call(request, model, build_messages(request, None) + repair, None, tally)
            else:
                raw = await self._call_structured(request, model, schema, repair, tally)
            tally.answered(raw)
            try:
                data, text, notes = interpret(raw, schema, request.check)
            except InvalidAnswer as exc:
                reason = str(exc)
                log.info("stage %s: invalid answer %d from %s (%s)", request.stage, attempt + 1, model, reason)
                repair = repair_messages(raw, reason, schema is not None)
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
        tally: RequestTally,
    ) -> RawAnswer:
        """One answer in the first structured-output form the endpoint accepts (remembered)."""
        key = (self.base_url, model)

        async def send(messages: list[dict[str, str]], response_format: dict[str, Any] | None) -> RawAnswer:
            return await self._call(request, model, messages, response_format, tally)

        raw, form = await ask_in_forms(send, request, schema, repair, self._forms.first(key))
        self._forms.remember(key, form)
        return raw

    async def _call(
        self,
        request: ChatRequest,
        model: str,
        messages: list[dict[str, str]],
        response_format: dict[str, Any] | None,
        tally: RequestTally,
        *,
        read: Callable[[dict[str, Any], list[dict[str, str]]], Awaitable[RawAnswer]] | None = None,
    ) -> RawAnswer:
        """One logical call (``read``: one attempt, streamed; by default a whole completion)
        with the retry loop; retries are added to ``tally``."""
        attempt = 0
        while True:
            kwargs = self._kwargs(request, model, messages, response_format, stream=read is not None)
            try:
                async with self._semaphore:
                    answer = await (read or self._read_completion)(kwargs, messages)
                self._reached = True
                return answer
            except (TimeoutError, openai.APITimeoutError):
                failure: BaseException = TimeoutError()
            except (openai.APIConnectionError, ConnectionLost, Unreadable) as exc:
                why = None if self._reached else unreachable(exc)
                if why is not None:  # nothing to wait for: a setting or a server to fix
                    raise unreachable_error(self.base_url, why) from None
                failure = exc
            except openai.APIStatusError as exc:
                self._reached = True
                if not self._retryable_status(exc, request, model, response_format):
                    continue  # a parameter the model refuses was dropped: send again at once
                failure = exc
            except openai.APIError as exc:  # a response the client could not read
                failure = exc
            if attempt >= self.max_retries or not tally.may_retry(failure):
                raise self._final_error(request, failure, attempt + 1) from None
            delay = self._delay(attempt, failure)
            attempt += 1
            tally.retries += 1
            log.info("stage %s: %s; retry %d/%d in %.1fs", request.stage, _describe(failure), attempt,
                     self.max_retries, delay)  # fmt: skip
            await self._sleep(delay)

    async def _read_completion(self, kwargs: dict[str, Any], messages: list[dict[str, str]]) -> RawAnswer:
        """One whole answer, read under the total-time limit and the size cap."""
        async with asyncio.timeout(self.timeout):
            async with self._client.chat.completions.with_streaming_response.create(**kwargs) as response:
                body = await read_body(response.http_response, self.max_answer_bytes)
        return completion_answer(body, messages)

    def _retryable_status(
        self, exc: openai.APIStatusError, request: ChatRequest, model: str, response_format: dict[str, Any] | None
    ) -> bool:
        """True for a transient status; False when a refused parameter was dropped; raises otherwise."""
        key = (self.base_url, model)
        text = error_text(exc)
        if response_format is not None and is_rejection(exc.status_code, text):
            raise SchemaRejected(f"{self.base_url} for {model}: HTTP {exc.status_code} {text[:200]}") from None
        dropped = unsupported_param(exc.status_code, text, self._dropped_params.get(key, set()))
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
        if exc.status_code not in RETRYABLE_STATUS:
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
        *,
        stream: bool = False,
    ) -> dict[str, Any]:
        dropped = self._dropped_params.get((self.base_url, model), set())
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "extra_headers": {"X-Research-Agent-Stage": request.stage, **ACCEPT_ENCODING},
            "timeout": self.timeout,
        }
        if "temperature" not in dropped:
            kwargs["temperature"] = request.temperature
        if request.max_tokens is not None:
            name = "max_completion_tokens" if "max_tokens" in dropped else "max_tokens"
            kwargs[name] = request.max_tokens
        if response_format is not None:
            kwargs["response_format"] = response_format
        if stream:
            kwargs["stream"] = True
            if "stream_options" not in dropped:  # the usage, in the stream's last event
                kwargs["stream_options"] = {"include_usage": True}
        return kwargs

    def _delay(self, attempt: int, failure: BaseException) -> float:
        asked = None
        if isinstance(failure, openai.APIStatusError):
            asked = parse_retry_after(dict(failure.response.headers))
        return backoff_delay(attempt, self._rng, asked)

    def _final_error(self, request: ChatRequest, failure: BaseException, attempts: int) -> LLMError:
        return final_error(failure, stage=request.stage, base_url=self.base_url, timeout=self.timeout, attempts=attempts,
                           status_error=openai.APIStatusError, connection_error=openai.APIConnectionError)  # fmt: skip


def _describe(failure: BaseException) -> str:
    return describe(failure, openai.APIStatusError)
