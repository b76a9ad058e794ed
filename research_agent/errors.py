"""One exception tree for everything research-agent raises on purpose.

Every class carries ``exit_code`` (what the CLI exits with) and ``http_status`` (what the workbench
answers a page with; the MCP server says "not found" for a 404): the front ends read these two
instead of naming classes. Library users catch :class:`ResearchError` (or a subclass).

                                  exit  HTTP
    ResearchError                    1   500  the base: a program catches this
    ├── ConfigError                  2   500  bad settings, no endpoint configured, bad flags
    ├── InputError                   2   400  bad query, missing corpus, unreadable rules file
    │   ├── UnsafeFile               2   400  a file or folder refused (a link, outside, too large)
    │   ├── UnsafeYaml               2   400  a YAML file refused or unreadable
    │   ├── InvalidCritique          2   400  a critique that does not satisfy its schema
    │   ├── UnknownRun               2   404  no run of the asked kind matches a reference
    │   ├── AmbiguousRun             2   400  a prefix that matches more than one run
    │   └── RequestRefused           2     *  a web request refused before any work (* its own status)
    ├── LLMError                     3   500  the model endpoint failed us
    │   ├── LLMUnavailable           3   500  cannot connect, or still failing after retries
    │   │   └── EndpointUnreachable  3   500  not reachable at all on a client's first call
    │   ├── LLMTimeout               3   500  a call took longer than the configured timeout
    │   ├── ModelNotFound            3   500  the endpoint does not know the model (HTTP 404)
    │   ├── UnreadableAnswer         3   500  HTTP 200, but not a chat completion that can be read
    │   ├── ContextExceeded          3   500  the prompt does not fit the model's context window
    │   └── InvalidModelOutput       3   500  no answer validated, after all of a request's attempts
    ├── SearchError                  4   500  every search provider failed, or the corpus is unusable
    │   └── ProviderError            4   500  one provider could not answer one query
    │       └── RateLimited          4   500  its API answered HTTP 429
    ├── StorageError                 5   500  a report, record or critique could not be written
    │   ├── DiskFull                 5   500  ENOSPC while writing
    │   ├── Locked                   5   500  another process holds a lock asked for without waiting
    │   ├── IndexBusy                5   500  the memory index stayed locked for all the time allowed
    │   └── BrowserTimeout           5   500  a headless browser ran past its time limit
    ├── RunTimeout                   6   500  the whole run passed its deadline
    ├── Cancelled                  130   500  the user pressed Ctrl-C
    ├── Busy                         1   503  every run slot is taken: try again later
    └── CpuWorkFailed                1   500  a call in a worker process crashed, timed out or raised

    Signal                        1   500  raised and caught inside the package: never reaches a caller
    ├── StopStream          a token listener ends a stream where it stands
    ├── FetchRefused        a fetch (or a reply, an answer) refused: a FetchFailure's reason
    ├── StatusError         the endpoint answered with an error status
    ├── ConnectionFailed    no answer came from the endpoint
    ├── ConnectionLost      the connection broke while an answer was read
    ├── RedirectRefused     the endpoint redirected to another origin
    ├── Unreadable          an answer that is not a readable chat completion
    ├── EmptyStream         a stream that ended without an event
    ├── IdleTimeout         nothing arrived for the idle limit
    ├── SchemaRejected      the endpoint refused the response_format sent
    ├── InvalidAnswer       an answer that did not parse or validate
    ├── Resting             a scholarly API's next turn is too far away
    └── RuleDeadline        the run's deadline passed inside a custom rule

A :class:`Signal` is turned into a ResearchError, a degraded stage or a failure note by the code
that catches it; should one ever escape, the front ends name it unexpected (exit 1, HTTP 500). An
exception class whose name starts with ``_`` is raised and caught inside its own module.
``docs/exceptions.md`` is generated from this tree (``tools/exceptions_reference.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .llm.usage import Usage

__all__ = [  # fmt: skip
    "ResearchError", "ConfigError", "InputError", "UnsafeFile", "UnsafeYaml", "InvalidCritique",
    "UnknownRun", "AmbiguousRun", "RequestRefused", "LLMError", "LLMUnavailable", "EndpointUnreachable",
    "LLMTimeout", "ModelNotFound", "UnreadableAnswer", "ContextExceeded", "InvalidModelOutput",
    "SearchError", "ProviderError", "RateLimited", "StorageError", "DiskFull", "Locked", "IndexBusy",
    "BrowserTimeout", "RunTimeout", "Cancelled", "Busy", "CpuWorkFailed", "Signal", "StopStream",
    "FetchRefused", "StatusError", "ConnectionFailed", "ConnectionLost", "RedirectRefused", "Unreadable",
    "EmptyStream", "IdleTimeout", "SchemaRejected", "InvalidAnswer", "Resting", "RuleDeadline",
    "error_message",
]


class ResearchError(Exception):
    """Base class. ``exit_code`` is what the CLI exits with, ``http_status`` what a page answers."""

    exit_code = 1
    http_status = 500


class ConfigError(ResearchError):
    """Bad settings, no endpoint configured, bad flags."""

    exit_code = 2


class InputError(ResearchError):
    """Bad input: a query, a corpus, a file, a reference, a form."""

    exit_code = 2
    http_status = 400


class UnsafeFile(InputError):
    """A file or folder was refused; the message says why, on one line."""


class UnsafeYaml(InputError):
    """A YAML file was refused or could not be read; the message says why, on one line."""


class InvalidCritique(InputError):
    """A critique does not satisfy the schema; the message lists each problem."""


class UnknownRun(InputError):
    """No run of the asked kind matches the reference."""

    http_status = 404


class AmbiguousRun(InputError):
    """A prefix matches more than one run; the message lists them."""


class RequestRefused(InputError):
    """A web request refused before any work: ``http_status`` (this refusal's own) and one line
    for the person (``message``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.http_status = status
        self.message = message


class LLMError(ResearchError):
    """The model endpoint failed us. ``usage`` (a :class:`research_agent.llm.usage.Usage`, or None)
    is what the failed request spent before it was raised: answers that did not validate cost tokens too."""

    exit_code = 3
    usage: Usage | None = None


class LLMUnavailable(LLMError):
    """The endpoint cannot be connected to, or still fails after the retries."""


class EndpointUnreachable(LLMUnavailable):
    """The model endpoint could not be reached at all on a client's first call (connection
    refused, a host name that does not resolve, no route): a setting or a server to fix, so
    it is neither retried nor degraded into a fallback, and ends a run at once."""


class LLMTimeout(LLMError):
    """A call took longer than the configured timeout."""


class ModelNotFound(LLMError):
    """The endpoint does not know the model (HTTP 404)."""


class UnreadableAnswer(LLMError):
    """The endpoint answered (HTTP 200), but with a body that is not a chat completion that can be
    read: empty, not JSON or not UTF-8, no choices, null content, another vendor's shape, or
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
    """Every search provider failed, or the corpus is unusable."""

    exit_code = 4


class ProviderError(SearchError):
    """One provider could not answer one query. ``reason`` is short and user-readable."""

    def __init__(self, provider: str, reason: str) -> None:
        super().__init__(f"{provider}: {reason}")
        self.provider = provider
        self.reason = reason


class RateLimited(ProviderError):
    """HTTP 429: ``retry_after`` is the seconds the API asked for (None when it did not say)."""

    def __init__(self, provider: str, retry_after: float | None) -> None:
        asked = f"; it asks to wait {retry_after:g}s" if retry_after is not None else ""
        super().__init__(provider, f"rate limited (HTTP 429{asked})")
        self.retry_after = retry_after


class StorageError(ResearchError):
    """A report, record or critique could not be written (or a store read)."""

    exit_code = 5


class DiskFull(StorageError):
    """ENOSPC while writing."""


class Locked(StorageError):
    """Another process holds the lock (only when asked not to wait for it)."""


class IndexBusy(StorageError):
    """The index stayed locked by another process for all the time the caller could wait."""


class BrowserTimeout(StorageError):
    """A headless launch ran past its time limit and was stopped."""


class RunTimeout(ResearchError):
    """The whole run passed its deadline; ``stage`` is where it was."""

    exit_code = 6

    def __init__(self, message: str, *, stage: str = "") -> None:
        super().__init__(message)
        self.stage = stage


class Cancelled(ResearchError):
    """The user pressed Ctrl-C."""

    exit_code = 130


class Busy(ResearchError):
    """Every run slot is taken: the caller should try again later (never queued)."""

    http_status = 503


class CpuWorkFailed(ResearchError):
    """A call in a worker process crashed, ran past its time limit, or raised."""


# --- signals: raised and caught inside the package ----------------------------------------


class Signal(Exception):
    """Base of the exceptions one part of the package raises for another to catch (see the module
    docstring); one that escaped would be a bug, which the front ends name unexpected."""

    exit_code = 1
    http_status = 500


class StopStream(Signal):
    """Raised by a :data:`~research_agent.llm.protocol.TokenCallback` to end a stream where it stands
    (the answer passed a bound its listener keeps): the model closes the stream and returns what
    arrived, ``finish_reason`` ``BOUNDED``. A model that lets it escape leaves the listener to keep what it heard."""


class FetchRefused(Signal):
    """A fetch refused for ``reason`` (one of ``fetch.outcome.FAILURE_REASONS``), with a short ``detail``."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


class StatusError(Signal):
    """The endpoint answered with an error status (4xx, 5xx, or any other that is not 2xx)."""

    def __init__(self, message: str, *, status_code: int, body: object, headers: Mapping[str, str]) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.body = body  # the JSON body's ``error`` object (else the body, parsed or as text; None if unread)
        self.headers = dict(headers)


class ConnectionFailed(Signal):
    """No answer came: the connection could not be made or broke before the headers (the cause says why)."""


class ConnectionLost(Signal):
    """The connection broke while the answer was being read (retried like a connection error)."""


class RedirectRefused(Signal):
    """The endpoint redirected a request to another scheme, host or port; nothing was sent there.
    ``target`` is that origin (``scheme://host:port``), or ``an unreadable address``."""

    def __init__(self, target: str) -> None:
        super().__init__(f"the endpoint redirected to another origin ({target}): not followed, nothing was sent there")
        self.target = target


class Unreadable(Signal):
    """An answer that is not a readable chat completion; ``str()`` is the reason."""


class EmptyStream(Signal):
    """The stream ended without a single event (a server that failed after sending its headers)."""


class IdleTimeout(Signal):
    """Nothing arrived for the idle limit; ``str()`` says how long."""


class SchemaRejected(Signal):
    """The endpoint refused the response_format we sent; try the next form."""


class InvalidAnswer(Signal):
    """The answer did not parse or validate; ``str()`` is the short reason."""


class Resting(Signal):
    """A scholarly provider's next turn is further away than a request may wait."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds


class RuleDeadline(Signal):
    """The run's deadline passed while custom rule ``rule`` was matching."""

    def __init__(self, rule: str) -> None:
        super().__init__(f"custom rule {rule!r} was still matching at the deadline")
        self.rule = rule


def error_message(exc: BaseException) -> str:
    """What a front end tells the user about ``exc``, after ``error:``.

    A :class:`ResearchError` says what went wrong itself; anything else is unexpected and
    is named by its type. The CLI prints it on one line of stderr and the MCP server
    returns it as a tool error: both tell the same message.
    """
    if isinstance(exc, ResearchError):
        return str(exc)
    return f"unexpected {type(exc).__name__}: {exc} (run with -v for details)"
