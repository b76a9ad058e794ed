"""When a failed model call is tried again, and how long to wait first.

Transient failures (429, 5xx, connection errors) are retried with exponential backoff
and jitter, unless the endpoint says how long to wait (``Retry-After``, capped at a
minute). A timeout is retried once per request: a second one is final. A
:class:`RequestTally` carries what one request has spent, so that an error raised in the
end still says what it cost.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..prices import PriceTable
from ..protocol import ChatRequest
from ..structured import RawAnswer
from ..usage import Usage

__all__ = ["RETRYABLE_STATUS", "RequestTally", "parse_retry_after", "backoff_delay", "request_kwargs"]

log = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
TIMEOUT_RETRIES = 1  # per request: a second timeout is final (other transient errors keep theirs)
_BACKOFF_BASE = 0.25  # transient 5xx clear fast; 429s usually say how long to wait
_BACKOFF_CAP = 30.0
_RETRY_AFTER_CAP = 60.0


@dataclass
class RequestTally:
    """What one request has spent so far, and how many retries after a timeout it has left."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    retries: int = 0
    timeout_retries: int = TIMEOUT_RETRIES

    def answered(self, raw: RawAnswer) -> None:
        self.prompt_tokens += raw.prompt_tokens
        self.completion_tokens += raw.completion_tokens
        self.calls += 1

    def usage(self, prices: PriceTable, model: str) -> Usage:
        cost = prices.cost(model, self.prompt_tokens, self.completion_tokens)
        return Usage(self.prompt_tokens, self.completion_tokens, self.calls, self.retries, cost)

    def may_retry(self, failure: BaseException) -> bool:
        """Whether a retry is left for ``failure``: a timeout spends the request's only one."""
        if not isinstance(failure, TimeoutError):
            return True
        if self.timeout_retries <= 0:
            return False
        self.timeout_retries -= 1
        return True


def backoff_delay(attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
    """Seconds before retry ``attempt + 1``: what the server asked for, else exponential with jitter."""
    if retry_after is not None:
        return retry_after
    ceiling = min(_BACKOFF_CAP, _BACKOFF_BASE * 2**attempt)
    return ceiling * (0.5 + 0.5 * rng.random())


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


def request_kwargs(
    request: ChatRequest,
    model: str,
    messages: list[dict[str, str]],
    response_format: dict[str, Any] | None,
    *,
    timeout: float,
    answer_tokens: int | None,
    dropped: set[str],
    stream: bool,
) -> dict[str, Any]:
    """What one attempt sends (:meth:`.sdk.SdkSender.send`): without the parameters the model
    refused (``dropped``), ``answer_tokens`` as its ``max_tokens``, asking a stream for its usage."""
    from .answers import ACCEPT_ENCODING

    kwargs: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "extra_headers": {"X-Research-Agent-Stage": request.stage, **ACCEPT_ENCODING},
        "timeout": timeout,
    }
    if "temperature" not in dropped:
        kwargs["temperature"] = request.temperature
    if answer_tokens is not None:
        kwargs["max_completion_tokens" if "max_tokens" in dropped else "max_tokens"] = answer_tokens
    if response_format is not None:
        kwargs["response_format"] = response_format
    if stream:
        kwargs["stream"] = True
        if "stream_options" not in dropped:  # the usage, in the stream's last event
            kwargs["stream_options"] = {"include_usage": True}
    return kwargs
