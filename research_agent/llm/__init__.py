"""The model layer: one protocol, the OpenAI-compatible implementation, and what it counts.

* :mod:`.protocol` - :class:`ChatRequest`, :class:`ChatResponse`, :class:`ChatModel` (what stages
  call) and :class:`ChatEndpoint` (what sends a request and returns the :class:`RawResponse`);
* :mod:`.checked` - :class:`CheckedModel`, the one layer between them: every answer read, validated,
  cut to its bounds, checked, asked again with its error, its usage added up;
* :mod:`.client` - the OpenAI-compatible client: :class:`OpenAIEndpoint` and :class:`OpenAIChatModel`
  over it (:mod:`.client.openai_compat`) and its retry loop (:mod:`.client.retry`); the answer read off the wire with a bound
  (:mod:`.client.answers`), streamed (:mod:`.client.streaming`) under an idle limit
  (:mod:`.client.idle`); what refusals mean (:mod:`.client.refusals`);
* :mod:`.structured` - the structured-output cascade, JSON extraction and validation of one answer;
* :mod:`.schema_bounds` - the bounds a server is sent and the ones kept locally;
* :mod:`.usage`, :mod:`.prices` - tokens and cost per stage; :mod:`.waiting` - how long
  a call has been waiting, for the progress line.

Every stage talks to a :class:`ChatModel`; tests pass a scripted one (a queue of raw answers under
the same :class:`CheckedModel`). :class:`OpenAIEndpoint` sends every request through the ``openai`` SDK over an httpx client that carries the project's
limits (loaded on first use: a command that only reads reports never needs them).
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from .checked import CheckedModel
from .client.retry import parse_retry_after
from .prices import Price, PriceTable
from .protocol import (
    STRUCTURED_ATTEMPTS,
    ChatEndpoint,
    ChatModel,
    ChatRequest,
    ChatResponse,
    RawResponse,
    TokenCallback,
)
from .schema_bounds import wire_schema
from .structured import OutputForm, extract_json, strip_think
from .usage import Usage, UsageRecorder

if TYPE_CHECKING:  # what the type checker sees of the lazy names below
    from .client.openai_compat import DEFAULT_TIMEOUT, NO_ENDPOINT_MESSAGE, OpenAIChatModel, OpenAIEndpoint

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "ChatModel",
    "ChatEndpoint",
    "RawResponse",
    "CheckedModel",
    "TokenCallback",
    "Usage",
    "UsageRecorder",
    "OpenAIChatModel",
    "OpenAIEndpoint",
    "OutputForm",
    "Price",
    "PriceTable",
    "strip_think",
    "extract_json",
    "parse_retry_after",
    "wire_schema",
    "STRUCTURED_ATTEMPTS",
    "DEFAULT_TIMEOUT",
    "NO_ENDPOINT_MESSAGE",
]

_LAZY = dict.fromkeys(("OpenAIChatModel", "OpenAIEndpoint", "DEFAULT_TIMEOUT", "NO_ENDPOINT_MESSAGE"),
                      "client.openai_compat")
__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
