"""What an endpoint's refusals and failures say, read from the errors of :mod:`.sdk`.

A refused ``response_format`` (the structured-output cascade then tries the next form), a
parameter a model does not accept (sent again without it), a one-line description of
any failure for the log, and the error a call raises once its retries are spent.
"""

from __future__ import annotations

import errno
import logging
import socket

from ...errors import (
    ConfigError,
    EndpointUnreachable,
    LLMError,
    LLMTimeout,
    LLMUnavailable,
    ModelNotFound,
    UnreadableAnswer,
)
from ..structured import SchemaRejected
from .answers import Unreadable
from .retry import RETRYABLE_STATUS
from .sdk import ConnectionFailed, StatusError
from .transport import RedirectRefused

__all__ = [
    "error_text",
    "is_rejection",
    "unsupported_param",
    "status_verdict",
    "describe",
    "final_error",
    "unreachable",
    "unreachable_error",
    "redirect_error",
    "DROPPABLE_PARAMS",
]

log = logging.getLogger(__name__)

_REJECTION_WORDS = ("response_format", "json_schema", "schema", "grammar")
# Parameters some models or servers refuse; each is dropped for that model once refused.
DROPPABLE_PARAMS = ("temperature", "max_tokens", "stream_options")


def error_text(exc: StatusError) -> str:
    """The message of a :class:`~.sdk.StatusError`: the body's message when it has one."""
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error") or body
        return str(message)
    return str(body if body is not None else exc.message)


def is_rejection(status: int, text: str) -> bool:
    """A response_format/schema rejection (400/422, or llama.cpp's HTTP 500)."""
    lowered = text.lower()
    return status in (400, 422, 500) and any(word in lowered for word in _REJECTION_WORDS)


def unsupported_param(status: int, text: str, already: set[str]) -> str | None:
    """Reasoning models refuse ``temperature`` and ``max_tokens``, some servers
    ``stream_options``: name the one to drop."""
    if status not in (400, 422):
        return None
    lowered = text.lower()
    refused = ("unsupported", "not supported", "does not support", "unrecognized", "extra inputs", "unknown")
    if not any(word in lowered for word in refused):
        return None
    for param in DROPPABLE_PARAMS:
        quoted = f"'{param}'" in lowered or f'"{param}"' in lowered
        if quoted and param not in already:
            return param
    return None


_UNREACHABLE = {
    errno.ECONNREFUSED: "connection refused",
    errno.ENETUNREACH: "network unreachable",
    errno.EHOSTUNREACH: "no route to the host",
}


def unreachable(failure: BaseException) -> str | None:
    """Why no connection could be made at all, from the causes of a failed connect (``connection
    refused``, ``the host name does not resolve``, no route); None for any other failure."""
    seen: set[int] = set()
    cause: BaseException | None = failure
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, socket.gaierror):
            return "the host name does not resolve"
        if isinstance(cause, OSError) and cause.errno in _UNREACHABLE:
            return _UNREACHABLE[cause.errno]
        cause = cause.__cause__ or cause.__context__
    return None


def unreachable_error(base_url: str, why: str) -> EndpointUnreachable:
    """The one line a first call that could not connect at all ends with."""
    return EndpointUnreachable(f"cannot reach the model endpoint at {base_url} ({why}); run `research-agent doctor`")


def redirect_error(base_url: str, refused: RedirectRefused) -> ConfigError:
    """The one line a redirect to another origin ends a call with (never retried: the endpoint's
    address is a setting to fix, and the other address is never asked)."""
    return ConfigError(f"the model endpoint at {base_url} redirected the request to another origin "
                       f"({refused.target}); it was not followed and nothing was sent there: set "
                       "OPENAI_BASE_URL to the address that answers")  # fmt: skip


def status_verdict(
    status: int, text: str, *, stage: str, base_url: str, model: str, main_model: str, structured: bool, dropped: set[str]
) -> bool:
    """What an error status means for a call: True to retry it (transient), False to send it again
    at once without a parameter the model refused (added to ``dropped``); else the error is raised
    (a refused schema, a refused key, an unknown model, any other refusal)."""
    if structured and is_rejection(status, text):
        raise SchemaRejected(f"{base_url} for {model}: HTTP {status} {text[:200]}") from None
    refused = unsupported_param(status, text, dropped)
    if refused is not None:
        log.info("model %s does not accept %s; sending without it", model, refused)
        dropped.add(refused)
        return False
    if status in (401, 403):
        raise ConfigError(f"the model endpoint {base_url} refused the API key (HTTP {status}): check OPENAI_API_KEY") from None
    if status == 404:
        which = "RESEARCH_AGENT_FAST_MODEL / --fast-model" if model != main_model else "RESEARCH_AGENT_MODEL / --model"
        raise ModelNotFound(f"model '{model}' not found at {base_url}; check {which}") from None
    if status not in RETRYABLE_STATUS:
        raise LLMError(f"model endpoint {base_url} rejected the {stage} request: HTTP {status} {text[:200]}") from None
    return True


def describe(failure: BaseException) -> str:
    """One line for a failed call: ``timed out``, ``HTTP 503 overloaded``, or the cause."""
    if isinstance(failure, TimeoutError):
        return "timed out"
    if isinstance(failure, StatusError):
        return f"HTTP {failure.status_code} {error_text(failure)[:200]}"
    cause = failure.__cause__
    if cause is not None:
        return f"{type(cause).__name__}: {cause}"
    return f"{type(failure).__name__}: {failure}"


def final_error(
    failure: BaseException,
    *,
    stage: str,
    base_url: str,
    timeout: float,
    attempts: int,
) -> LLMError:
    """The error of a call whose last attempt failed with ``failure``."""
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if isinstance(failure, TimeoutError):
        return LLMTimeout(f"model call for stage {stage} timed out after {timeout:g}s ({tries})")
    if isinstance(failure, Unreadable):
        return UnreadableAnswer(f"model endpoint {base_url} gave an unreadable answer for stage {stage}: {failure} ({tries})")
    cause = failure.__cause__
    if isinstance(failure, ConnectionFailed) and cause is not None and type(cause).__name__ == "ConnectError":
        return LLMUnavailable(f"cannot reach the model endpoint at {base_url}: {cause} ({tries})")
    return LLMUnavailable(f"model endpoint {base_url} kept failing: {describe(failure)} ({tries})")
