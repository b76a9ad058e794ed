"""The OpenAI-compatible endpoint (:class:`OpenAIEndpoint`), built on the openai SDK, and the
product's :class:`~research_agent.llm.protocol.ChatModel` over it (:class:`OpenAIChatModel`).

Any chat-completions endpoint works: OpenAI, Azure-compatible gateways, Ollama, vLLM, llama.cpp's
server, LM Studio, OpenRouter. This module holds the retry loop (backoff with jitter,
``Retry-After``, one retry after a timeout; none when the first call cannot connect at all), and
what an endpoint's refusals mean; each request goes through ``openai.AsyncOpenAI`` (:mod:`.sdk`)
over an httpx client that carries the project's limits (:mod:`.transport`). How a structured
answer is asked for is :mod:`research_agent.llm.structured`; how it is read, validated and asked
again is :class:`~research_agent.llm.checked.CheckedModel`'s, above the endpoint.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import httpx

from ...errors import ConfigError, ContextExceeded, LLMError
from ..budget import ContextBudget
from ..checked import CheckedModel
from ..prices import PriceTable
from ..protocol import ChatRequest, RawResponse, TokenCallback, Turn
from ..structured import FormMemory, OutputForm, RawAnswer, ask_in_forms, build_messages, plain_schema
from ..waiting import SystemTicker, Ticker
from .answers import MAX_ANSWER_BYTES, ConnectionLost, Unreadable, completion_answer, read_body
from .fitting import WindowFit
from .refusals import (
    describe,
    error_text,
    final_error,
    redirect_error,
    status_verdict,
    unreachable,
    unreachable_error,
)
from .retry import RequestTally, backoff_delay, parse_retry_after, request_kwargs
from .sdk import ConnectionFailed, SdkSender, StatusError
from .streaming import EmptyStream, StreamReader
from .transport import RedirectRefused, model_http_client
from .window import refusal

if TYPE_CHECKING:
    from ...config import Settings

__all__ = ["OpenAIChatModel", "OpenAIEndpoint", "DEFAULT_TIMEOUT", "DEFAULT_BASE_URL", "NO_ENDPOINT_MESSAGE"]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 180.0  # seconds per call: a slow CPU server still finishes a long draft
DEFAULT_PROMPT_RATE = 20.0  # prompt tokens a second a CPU server reads: the first token's allowance

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_API_KEY = "sk-no-key-needed"  # local servers ignore the key, the client needs one
NO_ENDPOINT_MESSAGE = (
    "no model endpoint configured: set OPENAI_API_KEY (for OpenAI), or OPENAI_BASE_URL "
    "(e.g. http://localhost:11434/v1 for a local Ollama)"
)


class OpenAIEndpoint:
    """A :class:`~research_agent.llm.protocol.ChatEndpoint` for any OpenAI-compatible
    chat-completions endpoint: it sends, and returns each answer as it came.

    Structured answers are asked for with ``response_format`` ``json_schema`` (strict),
    then ``json_object`` carrying the schema (llama.cpp's form), then instructions alone,
    remembering per (base_url, model) which form the endpoint accepted. The schema sent
    never carries a bound above 200 (grammar decoders crash on them). A first call that cannot
    connect at all (connection refused, a host name that does not resolve, no route) raises
    EndpointUnreachable at once: there is nothing to wait for. Transient failures (429, 5xx,
    connection errors) are retried up to ``max_retries`` times with exponential backoff and
    jitter, honouring ``Retry-After``, sleeping through the injected ``sleep``; a timeout is
    retried once per send (one answer asked for). An answer that cannot
    be read (:mod:`.answers`: not JSON, no choices, null content, over ``max_answer_bytes``)
    is retried like a 5xx, then raised as UnreadableAnswer. An answer's ``Usage.calls`` counts it,
    ``Usage.retries`` the transient retries it took; an LLMError raised carries the usage this send
    spent before it as ``.usage``.

    :meth:`send_streamed` asks for plain text, streamed (:mod:`.streaming`): ``timeout`` is then an
    idle limit (no token for that long, on ``ticker``'s clock), after a first token that may take
    ``timeout`` plus the prompt read at ``prompt_rate`` tokens a second; whatever arrived before
    a stall or the token limit is returned with its ``finish_reason``. A stream that ends with no
    event is asked once more without streaming, so that the server's own error can be read.

    The context window (:mod:`.fitting`): ``context_tokens`` (a setting) and, with
    ``ask_window``, what the server says (asked once per model); an answer's ``max_tokens`` is
    lowered to fit beside its prompt, and a refusal for size is asked again once, with the room
    the server's numbers leave, when that is a smaller answer: never the same request twice.
    Requests go through the openai SDK (:mod:`.sdk`, its own retries off: this loop is the one
    policy) over ``http_client`` (an ``httpx.AsyncClient`` from :func:`.transport.model_http_client`,
    closed with the model) or a client of the model's own built there. A redirect to another
    scheme, host or port is refused (ConfigError), never followed.
    """

    streams = True

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
        http_client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        *,
        rng: random.Random | None = None,
        form_cache: dict[tuple[str, str], OutputForm] | None = None,
        limiter: asyncio.Semaphore | None = None,
        ticker: Ticker | None = None,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        context_tokens: int | None = None,
        ask_window: bool = False,
        prompt_rate: float = DEFAULT_PROMPT_RATE,
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
        self.prompt_rate = float(prompt_rate)
        self._ticker = ticker if ticker is not None else SystemTicker()
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        self._forms = FormMemory(form_cache)
        self._dropped_params: dict[tuple[str, str], set[str]] = {}
        self._reached = False  # set once the endpoint answered anything: a refused connect is then transient
        # ``limiter`` lets several models share one bound on calls in flight to an endpoint
        self._semaphore = limiter if limiter is not None else asyncio.Semaphore(max(1, int(concurrency)))
        key = api_key or PLACEHOLDER_API_KEY
        http = http_client or model_http_client(self.timeout, max_bytes=self.max_answer_bytes)
        self._sender = SdkSender(self.base_url, key, http, timeout=self.timeout)
        self._fit = WindowFit(self.base_url, key, context_tokens, http, ask=ask_window)

    @classmethod
    def from_settings(
        cls, settings: Settings, *, http_client: httpx.AsyncClient | None = None, ticker: Ticker | None = None
    ) -> OpenAIEndpoint:
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
            context_tokens=settings.context_tokens,
            ask_window=bool(settings.base_url),  # a hosted default endpoint's windows are far larger
            prompt_rate=settings.llm_prompt_rate,
        )

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._sender.aclose()

    async def context_budget(self, tier: Literal["main", "fast"] = "main") -> ContextBudget | None:
        """The context window of the ``tier``'s model: what its server says (asked once), else the setting."""
        return await self._fit.budget(self.fast_model if tier == "fast" else self.model)

    def form_for(self, model: str) -> OutputForm:
        """The structured-output form this endpoint is known to accept for ``model``."""
        return self._forms.first((self.base_url, model))

    async def send(self, request: ChatRequest, repair: Sequence[Turn] = ()) -> RawResponse:
        """One answer to ``request`` (``repair``: the turns that ask it again); raises the LLMError
        family (with ``.usage``) or ConfigError (bad key)."""
        model = self.fast_model if request.tier == "fast" else self.model
        tally = RequestTally()

        async def answer(asked: ChatRequest) -> RawResponse:
            schema = plain_schema(asked.schema) if asked.schema is not None else None
            if schema is None:
                raw = await self._call(asked, model, build_messages(asked, None) + list(repair), None, tally)
            else:
                raw = await self._call_structured(asked, model, schema, list(repair), tally)
            tally.answered(raw)
            return RawResponse(raw.content, model, tally.usage(self.prices, model), raw.finish_reason)

        return await self._fitted(request, model, tally, answer)

    async def send_streamed(self, request: ChatRequest, on_tokens: TokenCallback | None = None) -> RawResponse:
        """A plain-text answer, streamed; ``on_tokens(n, piece)`` hears each piece as it comes.

        Never raises for an answer that stalled or was cut: its ``finish_reason`` says so
        (``stalled``, ``no_first_token``, ``length``, ``unfinished``, ``bounded``) and ``content``
        holds what arrived.
        """
        model = self.fast_model if request.tier == "fast" else self.model
        tally = RequestTally()
        reader = StreamReader(self._sender.send, idle=self.timeout, ticker=self._ticker, max_bytes=self.max_answer_bytes,
                              on_tokens=on_tokens, prompt_rate=self.prompt_rate)  # fmt: skip

        async def answer(asked: ChatRequest) -> RawResponse:
            raw = await self._streamed(asked, model, build_messages(asked, None), tally, reader)
            tally.answered(raw)
            return reader.response(raw, model, tally.usage(self.prices, model))

        return await self._fitted(request, model, tally, answer)

    async def _fitted(
        self,
        request: ChatRequest,
        model: str,
        tally: RequestTally,
        answer: Callable[[ChatRequest], Awaitable[RawResponse]],
    ) -> RawResponse:
        """``answer(request)`` within the model's context window: asked again once, with a smaller
        answer, after a refusal for size when that can help. An LLMError raised carries the usage spent."""
        await self._fit.budget(model)
        try:
            try:
                return await answer(request)
            except ContextExceeded as exc:
                smaller = self._fit.again_smaller(request, model, exc)
                tally.retries += 1
                return await answer(smaller)
        except LLMError as exc:
            exc.usage = tally.usage(self.prices, model)
            raise

    async def _streamed(
        self, request: ChatRequest, model: str, messages: list[dict[str, str]], tally: RequestTally, reader: StreamReader
    ) -> RawAnswer:
        """One streamed answer; a stream that ended with no event is asked once more, whole."""
        try:
            return await self._call(request, model, messages, None, tally, read=reader.read)
        except EmptyStream:
            log.info("stage %s: the stream ended with no event; asking once more without streaming", request.stage)
            tally.retries += 1
            reader.quirk("empty_stream")
            return await self._call(request, model, messages, None, tally)

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
        await self._sender.ready()  # the SDK loaded, before any time limit starts
        attempt = 0
        while True:
            kwargs = self._kwargs(request, model, messages, response_format, stream=read is not None)
            try:
                async with self._semaphore:
                    answer = await (read or self._read_completion)(kwargs, messages)
                self._reached = True
                return answer
            except TimeoutError:
                failure: BaseException = TimeoutError()
            except RedirectRefused as exc:
                raise redirect_error(self.base_url, exc) from None
            except (ConnectionFailed, ConnectionLost, Unreadable) as exc:
                why = None if self._reached else unreachable(exc)
                if why is not None:  # nothing to wait for: a setting or a server to fix
                    raise unreachable_error(self.base_url, why) from None
                failure = exc
            except StatusError as exc:
                self._reached = True
                if not self._retryable_status(exc, request, model, response_format):
                    continue  # a parameter the model refuses was dropped: send again at once
                failure = exc
            if attempt >= self.max_retries or not tally.may_retry(failure):
                raise self._final_error(request, failure, attempt + 1) from None
            delay = self._delay(attempt, failure)
            attempt += 1
            tally.retries += 1
            log.info("stage %s: %s; retry %d/%d in %.1fs", request.stage, describe(failure), attempt,
                     self.max_retries, delay)  # fmt: skip
            await self._sleep(delay)

    async def _read_completion(self, kwargs: dict[str, Any], messages: list[dict[str, str]]) -> RawAnswer:
        """One whole answer, read under the total-time limit and the size cap."""
        async with asyncio.timeout(self.timeout):
            async with self._sender.send(kwargs) as response:
                body = await read_body(response, self.max_answer_bytes)
        return completion_answer(body, messages)

    def _retryable_status(
        self, exc: StatusError, request: ChatRequest, model: str, response_format: dict[str, Any] | None
    ) -> bool:
        """True for a transient status; False when a refused parameter was dropped; raises otherwise
        (a refusal for size as ContextExceeded)."""
        text = error_text(exc)
        refused = refusal(exc.status_code, text, exc.body)
        if refused is not None:
            raise self._fit.exceeded(request, model, refused, text) from None
        return status_verdict(exc.status_code, text, stage=request.stage, base_url=self.base_url, model=model,
                              main_model=self.model, structured=response_format is not None,
                              dropped=self._dropped_params.setdefault((self.base_url, model), set()))  # fmt: skip

    def _kwargs(
        self, request: ChatRequest, model: str, messages: list[dict[str, str]], response_format: dict[str, Any] | None,
        *, stream: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        answer = self._fit.answer_tokens(model, messages, request.max_tokens) if request.max_tokens else None
        return request_kwargs(request, model, messages, response_format, timeout=self.timeout, answer_tokens=answer,
                              dropped=self._dropped_params.get((self.base_url, model), set()), stream=stream)  # fmt: skip

    def _delay(self, attempt: int, failure: BaseException) -> float:
        retry_after = parse_retry_after(failure.headers) if isinstance(failure, StatusError) else None
        return backoff_delay(attempt, self._rng, retry_after)

    def _final_error(self, request: ChatRequest, failure: BaseException, attempts: int) -> LLMError:
        return final_error(failure, stage=request.stage, base_url=self.base_url, timeout=self.timeout, attempts=attempts)


class OpenAIChatModel(CheckedModel):
    """The product's ChatModel: :class:`~research_agent.llm.checked.CheckedModel` over an
    :class:`OpenAIEndpoint`, built from the endpoint's own arguments (or given one as ``endpoint``).

    Every answer is validated with jsonschema and cut to the real bounds; an invalid answer is
    asked again, showing the model its error, up to
    :data:`~research_agent.llm.protocol.STRUCTURED_ATTEMPTS` answers in all. ``Usage.calls``
    counts every answer received, ``Usage.retries`` the transient retries plus those attempts.
    """

    endpoint: OpenAIEndpoint

    def __init__(self, *args: Any, endpoint: OpenAIEndpoint | None = None, **kwargs: Any) -> None:
        super().__init__(endpoint if endpoint is not None else OpenAIEndpoint(*args, **kwargs))

    @classmethod
    def from_settings(
        cls, settings: Settings, *, http_client: httpx.AsyncClient | None = None, ticker: Ticker | None = None
    ) -> OpenAIChatModel:
        """Build from Settings; ConfigError when neither an API key nor a base URL is set."""
        return cls(endpoint=OpenAIEndpoint.from_settings(settings, http_client=http_client, ticker=ticker))

    @property
    def timeout(self) -> float:
        """Seconds a call may take (a stream: with no token)."""
        return self.endpoint.timeout

    def form_for(self, model: str) -> OutputForm:
        """The structured-output form the endpoint is known to accept for ``model``."""
        return self.endpoint.form_for(model)

    async def __aenter__(self) -> OpenAIChatModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
