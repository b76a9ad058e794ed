"""The one error boundary of the MCP server: every tool body runs inside :func:`answered`; the
schema of its answer (:func:`payload_type`); and :func:`service_of`, the shared
:class:`~research_agent.service.Service` a call came to.

A tool body returns its answer as plain data (:func:`~research_agent.shapes.plain` of its
answer's dataclass, :mod:`.shapes`); the caller gets it as structured content, and as text a short
summary for a person (the tool's ``summary``, see :mod:`.summaries`). A
:class:`~research_agent.errors.ResearchError` (a bad argument, a missing endpoint, a provider
failure, busy) becomes a tool error (``isError``) whose text is the one line the CLI prints for
it; anything else becomes the CLI's "unexpected" line, its traceback only in the server's log
(``-v``). The server never dies of a tool, and no traceback reaches a client. Cancellation is not
an error: it passes through.

The output schema comes from the answer's dataclass: :func:`payload_type` describes its plain data
as a TypedDict, from the same fields and the same shapes (keys renamed, left out, written only when
set, null when empty, spliced into the parent: :func:`~research_agent.shapes.payload_fields`). The
SDK reads it with pydantic, as it reads any return annotation, for the tool's output schema, and
checks every answer against it. What a tool says it returns and what it returns are one declaration.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import inspect
import logging
import types
import typing
from collections.abc import Awaitable, Callable
from pathlib import PurePath
from typing import (
    Any,
    Literal,
    NotRequired,  # pydantic reads TypedDicts from here below Python 3.12
    ParamSpec,
    Union,
    cast,
    get_args,
    get_origin,
)

from mcp.types import CallToolResult, TextContent
from typing_extensions import TypedDict

from ..errors import ResearchError, error_message
from ..llm import Usage
from ..service import Service
from ..shapes import PayloadField, payload_fields, written_by_hand
from ..text.controls import one_line

__all__ = ["answered", "error_result", "data_result", "service_of", "payload_type"]

log = logging.getLogger(__name__)

P = ParamSpec("P")


def error_text(exc: BaseException) -> str:
    """``error: <message>`` on one line, as the CLI prints it."""
    return "error: " + one_line(error_message(exc))


def error_result(exc: BaseException) -> CallToolResult:
    """A tool error carrying :func:`error_text` of ``exc``."""
    return CallToolResult(content=[TextContent(type="text", text=error_text(exc))], is_error=True)


def data_result(data: Any, text: str) -> CallToolResult:
    """A tool's answer: ``data`` as structured content, ``text`` (its summary) as text content."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def answered(
    answer: type, *, summary: Callable[[Any], str]
) -> Callable[[Callable[P, Awaitable[Any]]], Callable[P, Awaitable[CallToolResult]]]:
    """Wrap a tool body in the boundary; ``answer`` is the dataclass whose plain form the body
    returns, ``summary(data)`` its answer's text content. The wrapper keeps the body's arguments
    and Context parameter, and returns the payload of ``answer``: the signature the SDK reads for
    the tool's schemas."""

    def wrap(body: Callable[P, Awaitable[Any]]) -> Callable[P, Awaitable[CallToolResult]]:
        @functools.wraps(body)
        async def tool(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
            try:
                data = await body(*args, **kwargs)
            except ResearchError as exc:
                log.info("tool %s: %s", body.__name__, error_text(exc))
                return error_result(exc)
            except Exception as exc:
                log.error("tool %s: %s", body.__name__, error_text(exc))
                log.debug("tool %s failed", body.__name__, exc_info=exc)
                return error_result(exc)
            return data_result(data, summary(data))

        cast(Any, tool).__signature__ = answer_signature(body, answer)
        return tool

    return wrap


def service_of(ctx: Any) -> Service:
    """The Service of the server a tool call came to (its lifespan hands it to every request)."""
    service = ctx.request_context.lifespan_context
    if not isinstance(service, Service):
        raise TypeError(f"the server's lifespan gave {type(service).__name__}, not a Service")
    return service


# Dataclasses that write themselves by hand (``as_dict``) and yet restate their fields as they are
# (keys, order, types): described by their fields. Usage rounds its cost to 6 places.
_RESTATED: frozenset[type] = frozenset({Usage})
_SEQUENCES = (tuple, list, collections.abc.Sequence, collections.abc.Collection)
_MAPPINGS = (dict, collections.abc.Mapping)
# The generic forms, used at run time on types built here (a type checker cannot follow them).
_TYPED_DICT, _NOT_REQUIRED, _LIST, _DICT = cast(Any, TypedDict), cast(Any, NotRequired), cast(Any, list), cast(Any, dict)


def payload_type(cls: type, without: tuple[str, ...] = (), name: str = "") -> Any:
    """The TypedDict that :func:`~research_agent.shapes.plain` of a ``cls`` is (less the keys
    ``without``; ``name``: its title then, else the class's name); TypeError for a class whose
    plain form its fields cannot say."""
    return _typed_dict(cls, tuple(without), name or cls.__name__)


@functools.cache
def _typed_dict(cls: type, without: tuple[str, ...], name: str) -> Any:
    typed = _TYPED_DICT(name, _keys(cls, without))
    typed.__doc__ = one_line(inspect.cleandoc(cls.__doc__ or "").split("\n\n")[0]) or None
    return typed


def _keys(cls: type, without: tuple[str, ...]) -> dict[str, Any]:
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is no dataclass")
    if written_by_hand(cls) and cls not in _RESTATED:
        raise TypeError(f"{cls.__name__} writes itself by hand (as_dict): its fields cannot say its payload")
    hints = typing.get_type_hints(cls)
    keys: dict[str, Any] = {}
    for field in payload_fields(cls):
        if field.key in without:
            continue
        hint = hints[field.name]
        if field.shape.flatten:
            keys.update(_keys(_dataclass_in(hint, cls, field), field.shape.without))
        else:
            keys[field.key] = _key_type(cls, field, hint)
    return keys


def _key_type(cls: type, field: PayloadField, hint: Any) -> Any:
    how = field.shape
    if how.without:
        inner = payload_type(_dataclass_in(hint, cls, field), how.without, f"{cls.__name__}{_title(field.name)}")
        written: Any = inner | None if _optional(hint) else inner
    elif how.mapping:
        key, value = get_args(get_args(_not_none(hint))[0])
        written = _DICT[_payload(key), _payload(value)]
        written = written | None if _optional(hint) else written
    else:
        written = _payload(hint)
    if how.none_if_empty:
        written = written | None
    return _NOT_REQUIRED[written] if how.optional else written


def _payload(hint: Any) -> Any:
    """The type of a value of type ``hint`` once it is plain data."""
    if isinstance(hint, type):
        if dataclasses.is_dataclass(hint):
            return payload_type(hint)
        return str if issubclass(hint, PurePath) else hint
    origin, args = get_origin(hint), get_args(hint)
    if origin is None or origin is Literal or hint is Any:
        return hint
    if origin in (Union, types.UnionType):
        return _union(_payload(arg) for arg in args)
    if origin in _MAPPINGS:
        return _DICT[_payload(args[0]), _payload(args[1])]
    if origin in _SEQUENCES:
        items = [arg for arg in args if arg is not Ellipsis]
        return _LIST[_union(_payload(arg) for arg in dict.fromkeys(items))]
    raise TypeError(f"no plain form for {hint!r}")


def _optional(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint)


def _not_none(hint: Any) -> Any:
    if not _optional(hint):
        return hint
    return _union(arg for arg in get_args(hint) if arg is not type(None))


def _union(hints: collections.abc.Iterable[Any]) -> Any:
    return functools.reduce(lambda a, b: a | b, hints)


def _dataclass_in(hint: Any, cls: type, field: PayloadField) -> type:
    inner = _not_none(hint)
    if not (isinstance(inner, type) and dataclasses.is_dataclass(inner)):
        raise TypeError(f"{cls.__name__}.{field.name}: a shape that reads a dataclass, on {hint!r}")
    return inner


def _title(name: str) -> str:
    return "".join(part.title() for part in name.split("_"))


def answer_signature(body: Any, answer: type) -> inspect.Signature:
    """``body``'s signature, its return the payload of ``answer``: what the SDK reads for the tool's
    input and output schemas."""
    return inspect.signature(body, eval_str=True).replace(return_annotation=payload_type(answer))
