"""Dataclasses as plain data: what a record, a summary or an answer is when written or sent.

:func:`plain` walks a value: a dataclass becomes a dict of its fields in declaration order, each
as its :class:`Shape` says; a tuple or a list becomes a list, a mapping a dict, a path its text;
anything else (text, numbers, booleans, None) stays as it is. A field without a shape is written
under its own name, as it is. The shape is declared on the field (:func:`shape`), so that the
dataclass is the one statement of what its files and answers hold, and the MCP adapter reads the
same declaration (:func:`payload_fields`) to describe them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import MISSING, dataclass
from pathlib import PurePath
from typing import Any

__all__ = ["Shape", "shape", "PayloadField", "payload_fields", "plain", "Plain", "written_by_hand"]

_META = "research_agent.shape"


@dataclass(frozen=True)
class Shape:
    """How one field is written.

    ``key``: under this key (default: the field's name). ``omit``: never written. ``digits``: a
    number, or each number of a sequence, rounded to this many places (None stays None).
    ``optional``: left out when it equals the field's default. ``none_if_empty``: an empty value
    written as null. ``mapping``: a sequence of (key, value) pairs written as a mapping.
    ``flatten``: a dataclass whose keys are written in its parent, in place of the field.
    ``without``: keys of the field's dataclass left out here.
    """

    key: str | None = None
    omit: bool = False
    digits: int | None = None
    optional: bool = False
    none_if_empty: bool = False
    mapping: bool = False
    flatten: bool = False
    without: tuple[str, ...] = ()


def shape(
    *,
    key: str | None = None,
    omit: bool = False,
    digits: int | None = None,
    optional: bool = False,
    none_if_empty: bool = False,
    mapping: bool = False,
    flatten: bool = False,
    without: tuple[str, ...] = (),
) -> dict[str, Shape]:
    """A field's ``metadata``: ``field(default=None, metadata=shape(optional=True))`` (see :class:`Shape`)."""
    return {_META: Shape(key, omit, digits, optional, none_if_empty, mapping, flatten, without)}


@dataclass(frozen=True)
class PayloadField:
    """One field as it is written: its ``name`` on the dataclass, its ``key`` in the payload, its
    :class:`Shape`, its declared ``type`` (as written, maybe a string) and its ``default``
    (``dataclasses.MISSING`` when it has none)."""

    name: str
    key: str
    shape: Shape
    type: Any
    default: Any


_FIELDS: dict[type, tuple[PayloadField, ...]] = {}  # by class, read once
_AS_WRITTEN = Shape()  # a field without a shape: written under its name, as it is


def payload_fields(cls: type) -> tuple[PayloadField, ...]:
    """The fields of dataclass ``cls`` that are written, in order (those shaped ``omit`` left out)."""
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(
            PayloadField(f.name, how.key or f.name, how, f.type,
                         f.default_factory() if f.default_factory is not MISSING else f.default)
            for f in dataclasses.fields(cls)
            if not (how := f.metadata.get(_META, _AS_WRITTEN)).omit
        )  # fmt: skip
    return found


def plain(value: Any) -> Any:
    """``value`` as plain data (see the module docstring). A dataclass with an ``as_dict`` of its
    own (:func:`written_by_hand`) is written as that method says."""
    kind = _KINDS.get(type(value)) or _kind(type(value))
    if kind is _AS_IS:
        return value
    if kind is _RECORD:
        return _record(value, ())
    if kind is _MAPPING:
        return {key: plain(item) for key, item in value.items()}
    if kind is _LIST:
        return [plain(item) for item in value]
    if kind is _BY_HAND:
        return value.as_dict()
    return str(value)  # a path


def written_by_hand(cls: type) -> bool:
    """Whether dataclass ``cls`` writes itself with an ``as_dict`` of its own (something it computes
    that no field's shape can say) rather than :class:`Plain`'s."""
    own = getattr(cls, "as_dict", None)
    return own is not None and own is not Plain.as_dict


# How a value of each type is written, found once per type (plain data is written often: every
# critique of the memory's index, every run record).
_AS_IS, _RECORD, _BY_HAND, _MAPPING, _LIST, _PATH = "as is", "record", "by hand", "mapping", "list", "path"
_KINDS: dict[type, str] = {str: _AS_IS, int: _AS_IS, float: _AS_IS, bool: _AS_IS, type(None): _AS_IS}


def _kind(cls: type) -> str:
    if dataclasses.is_dataclass(cls):
        kind = _BY_HAND if written_by_hand(cls) else _RECORD
    elif issubclass(cls, Mapping):
        kind = _MAPPING
    elif issubclass(cls, tuple | list):
        kind = _LIST
    else:
        kind = _PATH if issubclass(cls, PurePath) else _AS_IS
    _KINDS[cls] = kind
    return kind


_Step = tuple[str, str, "Shape | None", Any]  # a field's name, key, shape (None: as it is) and default
_STEPS: dict[tuple[type, tuple[str, ...]], tuple[_Step, ...]] = {}
_SCALARS = frozenset(cls for cls, kind in _KINDS.items() if kind is _AS_IS)


def _steps(cls: type, without: tuple[str, ...]) -> tuple[_Step, ...]:
    """How each field of ``cls`` is written, less the keys ``without``: found once per class."""
    found = _STEPS.get((cls, without))
    if found is None:
        found = _STEPS[(cls, without)] = tuple(
            (f.name, f.key, None if f.shape is _AS_WRITTEN else f.shape, f.default)
            for f in payload_fields(cls)
            if f.key not in without
        )  # fmt: skip
    return found


def _record(value: Any, without: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, key, how, default in _steps(type(value), without):
        item = getattr(value, name)
        if how is None:
            out[key] = item if type(item) in _SCALARS else plain(item)
        elif how.optional and item == default:
            continue
        elif how.flatten:
            out.update(_record(item, how.without))
        else:
            out[key] = _written(item, how)
    return out


def _written(item: Any, how: Shape) -> Any:
    if how.none_if_empty and not item:
        return None
    if item is None:
        return None
    if how.digits is not None:
        if isinstance(item, tuple | list):
            return [round(number, how.digits) for number in item]
        return round(item, how.digits)
    if how.mapping:
        return {key: plain(v) for key, v in item}
    if how.without:
        return _record(item, how.without)
    return plain(item)


class Plain:
    """Gives a dataclass ``as_dict``: :func:`plain` of it, its fields written as their shapes say."""

    __slots__ = ()

    def as_dict(self) -> dict[str, Any]:
        """The dataclass as plain data (:func:`plain`)."""
        return _record(self, ())
