"""One exception tree for everything research-agent raises on purpose.

The CLI is the single place that turns these into a one-line message and an exit
code; library users catch :class:`ResearchError` (or a subclass) instead.

    ResearchError
    ├── ConfigError            bad settings, no endpoint configured, bad flags
    ├── InputError             bad query, missing corpus, unreadable rules file
    ├── LLMError               the model endpoint failed us
    │   ├── LLMUnavailable     cannot connect, or still failing after retries
    │   ├── LLMTimeout         a call took longer than the configured timeout
    │   ├── ModelNotFound      the endpoint does not know the model (HTTP 404)
    │   ├── UnreadableAnswer   HTTP 200, but not a chat completion that can be read
    │   ├── ContextExceeded    the prompt does not fit the model's context window
    │   └── InvalidModelOutput no answer validated, after all of a request's attempts
    ├── SearchError            every search provider failed, or the corpus is unusable
    ├── StorageError           a report, record or critique could not be written
    │   └── DiskFull           ENOSPC while writing
    ├── RunTimeout             the whole run passed its deadline
    └── Cancelled              the user pressed Ctrl-C
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .llm.usage import Usage

__all__ = [
    "ResearchError",
    "ConfigError",
    "InputError",
    "LLMError",
    "LLMUnavailable",
    "LLMTimeout",
    "ModelNotFound",
    "UnreadableAnswer",
    "ContextExceeded",
    "InvalidModelOutput",
    "SearchError",
    "StorageError",
    "DiskFull",
    "RunTimeout",
    "Cancelled",
    "error_message",
]


class ResearchError(Exception):
    """Base class. ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class ConfigError(ResearchError):
    exit_code = 2


class InputError(ResearchError):
    exit_code = 2


class LLMError(ResearchError):
    """``usage`` (a :class:`research_agent.llm.usage.Usage`, or None) is what the failed
    request spent before it was raised: answers that did not validate cost tokens too."""

    exit_code = 3
    usage: Usage | None = None


class LLMUnavailable(LLMError):
    pass


class EndpointUnreachable(LLMUnavailable):
    """The model endpoint could not be reached at all on a client's first call (connection
    refused, a host name that does not resolve, no route): a setting or a server to fix, so
    it is neither retried nor degraded into a fallback, and ends a run at once."""


class LLMTimeout(LLMError):
    pass


class ModelNotFound(LLMError):
    pass


class UnreadableAnswer(LLMError):
    """The endpoint answered (HTTP 200), but with a body that is not a chat completion that can
    be read: empty, not JSON or not UTF-8, no choices, null content, another vendor's shape, or
    larger than the answer size cap. Retried like a 5xx; then the stage degrades."""


class ContextExceeded(LLMError):
    """The server refused a prompt that, with its answer, does not fit the model's context window.
    ``window`` and ``prompt_tokens`` are the server's numbers when it said them (else None);
    ``estimated`` is what the prompt was estimated at when it was sent, ``answer_tokens`` the
    ``max_tokens`` sent beside it."""

    def __init__(
        self,
        message: str,
        *,
        window: int | None = None,
        prompt_tokens: int | None = None,
        estimated: int = 0,
        answer_tokens: int = 0,
    ) -> None:
        super().__init__(message)
        self.window = window
        self.prompt_tokens = prompt_tokens
        self.estimated = estimated
        self.answer_tokens = answer_tokens


class InvalidModelOutput(LLMError):
    """No answer of one request validated, after all its attempts (see llm.protocol.STRUCTURED_ATTEMPTS)."""

    def __init__(self, message: str, *, stage: str = "", model: str = "") -> None:
        super().__init__(message)
        self.stage = stage
        self.model = model


class SearchError(ResearchError):
    exit_code = 4


class StorageError(ResearchError):
    exit_code = 5


class DiskFull(StorageError):
    pass


class RunTimeout(ResearchError):
    exit_code = 6

    def __init__(self, message: str, *, stage: str = "") -> None:
        super().__init__(message)
        self.stage = stage


class Cancelled(ResearchError):
    exit_code = 130


def error_message(exc: BaseException) -> str:
    """What a front end tells the user about ``exc``, after ``error:``.

    A :class:`ResearchError` says what went wrong itself; anything else is unexpected and
    is named by its type. The CLI prints it on one line of stderr and the MCP server
    returns it as a tool error: both tell the same message.
    """
    if isinstance(exc, ResearchError):
        return str(exc)
    return f"unexpected {type(exc).__name__}: {exc} (run with -v for details)"
