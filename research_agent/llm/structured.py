"""Structured output: how an answer in JSON is asked for, read and checked.

A schema is asked for in the first form the endpoint accepts, in this order:
``response_format`` ``json_schema`` (strict), ``json_object`` carrying the schema
(llama.cpp's form), then the schema in the system message alone (``instructions``).
:class:`FormMemory` remembers per (base_url, model) which form worked. An answer is
read by :func:`interpret`: reasoning stripped (:func:`strip_think`), the JSON found
(:func:`extract_json`), validated with jsonschema against the schema without its upper
bounds, then cut to them (:func:`~research_agent.llm.schema_bounds.clamp`). An invalid
answer is asked again (by :class:`~research_agent.llm.checked.CheckedModel`) with
:func:`repair_messages`, which show the model its error.
"""

from __future__ import annotations

import atexit
import json
import logging
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import InvalidAnswer, SchemaRejected
from ..text.masking import cut_blocks
from .protocol import ChatRequest, RawResponse
from .schema_bounds import answer_schema, clamp, wire_schema

__all__ = [
    "OutputForm",
    "FORMS",
    "FormMemory",
    "RawAnswer",
    "InvalidAnswer",
    "SchemaRejected",
    "strip_think",
    "extract_json",
    "plain_schema",
    "build_messages",
    "response_format",
    "ask_in_forms",
    "interpret",
    "repair_messages",
]

log = logging.getLogger(__name__)

OutputForm = Literal["json_schema", "json_object", "instructions"]
FORMS: tuple[OutputForm, ...] = ("json_schema", "json_object", "instructions")

_MAX_ECHO_CHARS = 8000  # how much of a bad answer is sent back in the repair message
_MAX_JSON_STARTS = 500  # bound on the prose scan for an embedded JSON value

_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
# Possessive: backtracking into the language name would rescan the whole answer once per letter.
_FENCE = re.compile(r"```[A-Za-z0-9_-]*+[ \t]*+\n?(.*?)```", re.DOTALL)
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]+")

# Which form worked, per (base_url, model); shared by every model built without its own
# memory, so later runs in one process go straight to the form the endpoint accepts.
_SHARED_FORMS: dict[tuple[str, str], OutputForm] = {}


@dataclass(frozen=True)
class RawAnswer:
    """One answer as received, before it is read: text, finish reason and token counts."""

    content: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int


class FormMemory:
    """Which structured-output form each (base_url, model) accepted.

    ``known`` is the dict behind it: by default one shared by the whole process; a test
    passes its own.
    """

    def __init__(self, known: dict[tuple[str, str], OutputForm] | None = None) -> None:
        self.known = _SHARED_FORMS if known is None else known

    def first(self, key: tuple[str, str]) -> OutputForm:
        """The form to try first: the one that worked last, else ``json_schema``."""
        return self.known.get(key, "json_schema")

    def remember(self, key: tuple[str, str], form: OutputForm) -> None:
        if self.known.get(key) != form:
            self.known[key] = form


def strip_think(text: str) -> str:
    """Remove reasoning: ``<think>...</think>`` blocks, everything before an orphan
    ``</think>``, and an unterminated leading ``<think>`` with all that follows it."""
    text = cut_blocks(text, _THINK_OPEN, _THINK_CLOSE)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:  # the opening tag was in the prompt template (DeepSeek-R1 style)
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened is not None and not text[: opened.start()].strip():
        text = ""  # reasoning that never ended: the answer was cut off inside it
    return text.strip()


# Small local models put raw newlines and tabs inside JSON strings; strict JSON refuses them.
_LENIENT = json.JSONDecoder(strict=False)


def extract_json(text: str) -> Any:
    """The JSON value in a model's answer: the whole text, a fenced block, or the largest
    JSON object/array embedded in prose. Raises ValueError when there is none, or when
    the answer nests so deeply that parsing it would exhaust the stack."""
    text = text.strip()
    if not text:
        raise ValueError("the answer was empty")
    try:
        return _find_json(text)
    except RecursionError:
        raise ValueError("the answer nests too deeply to be read") from None


def _find_json(text: str) -> Any:
    try:
        return _LENIENT.decode(text)
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            return _LENIENT.decode(block.strip())
        except ValueError:
            continue
    best = _largest_embedded_json(text)
    if best is None:
        raise ValueError("no JSON object or array found in the answer")
    return best[1]


def _largest_embedded_json(text: str) -> tuple[int, Any] | None:
    """(length, value) of the longest JSON object or array that starts inside ``text``."""
    decoder = _LENIENT
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
    return best


def plain_schema(value: Any) -> Any:
    """A JSON-ready copy of a schema built from any Mappings/sequences."""
    return json.loads(json.dumps(value, default=dict))


def _schema_instruction(schema: dict[str, Any]) -> str:
    return (
        "Answer with only one JSON value that matches this JSON Schema, with no prose and no "
        "code fences:\n" + json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
    )


def build_messages(request: ChatRequest, schema_in_system: dict[str, Any] | None) -> list[dict[str, str]]:
    """The system and user messages of ``request``, the schema appended to the system one if given."""
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


def response_format(form: OutputForm, stage: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` parameter of ``form`` (None for ``instructions``)."""
    if form == "json_schema":
        name = _SCHEMA_NAME.sub("_", stage).strip("_")[:64] or "answer"
        strict = wire_schema(schema, strict=True)
        return {"type": "json_schema", "json_schema": {"name": name, "schema": strict, "strict": True}}
    if form == "json_object":
        return {"type": "json_object", "schema": wire_schema(schema)}
    return None


SendForm = Callable[[list[dict[str, str]], dict[str, Any] | None], Awaitable[RawAnswer]]


async def ask_in_forms(
    send: SendForm,
    request: ChatRequest,
    schema: dict[str, Any],
    repair: list[dict[str, str]],
    first: OutputForm,
) -> tuple[RawAnswer, OutputForm]:
    """Send ``request`` in each form from ``first`` on until the endpoint accepts one.

    ``send(messages, response_format)`` raises :class:`SchemaRejected` when the endpoint
    refuses the format. Returns the answer and the form that was accepted.
    """
    _load_validator_meanwhile()
    for form in FORMS[FORMS.index(first) :]:
        in_system = wire_schema(schema) if form != "json_schema" else None
        messages = build_messages(request, in_system) + repair
        try:
            return await send(messages, response_format(form, request.stage, schema)), form
        except SchemaRejected as exc:
            log.info("stage %s: the endpoint rejected response_format %s: %s", request.stage, form, exc)
    raise AssertionError("unreachable: the instructions form sends no response_format")


_load_once = threading.Lock()  # taken for good by the first caller


def _load_validator_meanwhile() -> None:
    """Import jsonschema in a thread while the first structured request is out.

    The import takes 70-100 ms of CPU; nothing needs it before the first answer comes back,
    and the process waits for that answer anyway. The thread first waits for the model SDK's
    import (:func:`.client.sdk.wait_for_sdk`): the first request goes out when that is done, and
    the two imports side by side would only share one interpreter lock. Once per process;
    :func:`interpret` simply imports it (waiting for this import if it is under way).
    """
    if "jsonschema" in sys.modules or not _load_once.acquire(blocking=False):
        return
    loading = threading.Thread(target=_import_jsonschema, name="load-jsonschema", daemon=True)
    loading.start()
    atexit.register(loading.join)  # a daemon thread still importing at shutdown crashes the process


def _import_jsonschema() -> None:
    from .client.sdk import wait_for_sdk

    wait_for_sdk()
    try:
        import jsonschema  # noqa: F401
    except Exception:  # interpret() will raise it where it can be reported
        log.debug("loading jsonschema ahead failed", exc_info=True)


def interpret(
    raw: RawAnswer | RawResponse, schema: dict[str, Any] | None, check: Callable[[Any], str | None] | None = None
) -> tuple[Any, str, tuple[str, ...]]:
    """(data, text, notes) from a raw answer, or InvalidAnswer with a short reason.

    The answer is checked against the schema without its upper bounds, then cut to them,
    then read by ``check`` (which returns why it is unusable, or None).
    """
    if raw.finish_reason == "missing":
        raise InvalidAnswer("the endpoint returned no answer (no choices)")
    if raw.finish_reason == "length":
        raise InvalidAnswer("the answer was cut off at the token limit (finish_reason=length)")
    text = strip_think(raw.content)
    if schema is None:
        if not text:
            raise InvalidAnswer("the answer was empty")
        return None, text, ()
    try:
        data = extract_json(text)
    except ValueError as exc:
        raise InvalidAnswer(f"not JSON ({exc})") from None
    import jsonschema

    checked = answer_schema(schema)
    validator_cls = jsonschema.validators.validator_for(checked)
    error = jsonschema.exceptions.best_match(validator_cls(checked).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        detail = error.message if len(error.message) <= 200 else error.message[:197] + "..."
        raise InvalidAnswer(f"at /{where}: {detail}" if where else detail)
    data, notes = clamp(data, schema)
    problem = check(data) if check is not None else None
    if problem:
        raise InvalidAnswer(problem)
    return data, text, notes


def repair_messages(raw: RawAnswer | RawResponse, reason: str, structured: bool) -> list[dict[str, str]]:
    """The turn that asks again: the bad answer (capped), then what was wrong with it."""
    if structured:
        ask = f"Your previous answer was invalid: {reason}. Answer again with only JSON matching the schema."
    else:
        ask = f"Your previous answer was unusable: {reason}. Answer again."
    return [
        {"role": "assistant", "content": raw.content[:_MAX_ECHO_CHARS]},
        {"role": "user", "content": ask},
    ]
