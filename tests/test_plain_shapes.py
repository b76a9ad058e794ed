"""One declaration per serialized shape: a dataclass's fields and their shapes say what it is written
as (:mod:`research_agent.shapes`), and the MCP adapter describes that same plain data for its tools'
output schemas (:func:`research_agent.mcp_server.answers.payload_type`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest
from pydantic import TypeAdapter, ValidationError

from research_agent.mcp_server.answers import payload_type
from research_agent.shapes import Plain, plain, shape


@dataclass(frozen=True)
class Part:
    n: int
    label: str = field(default="", metadata=shape(key="name"))
    hidden: int = field(default=0, metadata=shape(omit=True))


@dataclass(frozen=True)
class ByHand:
    n: int

    def as_dict(self) -> dict[str, int]:
        return {"count": self.n}


@dataclass(frozen=True)
class Whole(Plain):
    kind: Literal["a", "b"]
    share: float | None = field(metadata=shape(digits=2))
    span: tuple[float, float] | None = field(metadata=shape(digits=1))
    parts: tuple[Part, ...]
    part: Part = field(metadata=shape(flatten=True))
    brief: Part | None = field(default=None, metadata=shape(without=("n",)))
    where: Path | None = None
    ids: tuple[tuple[str, str], ...] = field(default=(), metadata=shape(optional=True, mapping=True))
    note: str = field(default="", metadata=shape(none_if_empty=True))
    extra: int | None = field(default=None, metadata=shape(optional=True))


WHOLE = Whole("a", 0.12345, (1.26, 2.0), (Part(1, "x", 9),), Part(2, "y"), Part(3, "z"), Path("/r/a.md"))


def test_a_dataclass_is_written_as_its_fields_and_their_shapes_say() -> None:
    assert WHOLE.as_dict() == {
        "kind": "a", "share": 0.12, "span": [1.3, 2.0], "parts": [{"n": 1, "name": "x"}],
        "n": 2, "name": "y",  # the flattened part, in its parent
        "brief": {"name": "z"}, "where": "/r/a.md", "note": None,
    }  # fmt: skip
    assert list(WHOLE.as_dict())[:5] == ["kind", "share", "span", "parts", "n"]  # the fields' order
    full = Whole("b", None, None, (), Part(0), ids=(("doi", "10.1/x"),), note="n", extra=0)
    assert plain(full) == {
        "kind": "b", "share": None, "span": None, "parts": [], "n": 0, "name": "", "brief": None, "where": None,
        "ids": {"doi": "10.1/x"}, "note": "n", "extra": 0,
    }  # fmt: skip


def test_a_dataclass_written_by_hand_is_written_as_its_method_says() -> None:
    assert plain({"k": (ByHand(2), Path("p"))}) == {"k": [{"count": 2}, "p"]}


def test_the_payload_type_accepts_the_plain_form_and_nothing_else() -> None:
    adapter = TypeAdapter(payload_type(Whole))
    adapter.validate_python(WHOLE.as_dict())
    adapter.validate_python(Whole("b", None, None, (), Part(0), ids=(("doi", "x"),), extra=4).as_dict())
    schema = adapter.json_schema()
    assert set(schema["properties"]) == {"kind", "share", "span", "parts", "n", "name", "brief", "where", "ids",
                                         "note", "extra"}  # fmt: skip
    assert set(schema["properties"]) - set(schema["required"]) == {"ids", "extra"}  # written only when set
    with pytest.raises(ValidationError):
        adapter.validate_python({**WHOLE.as_dict(), "brief": {"n": 3, "name": "z"}, "kind": "c"})
    with pytest.raises(ValidationError):
        adapter.validate_python({k: v for k, v in WHOLE.as_dict().items() if k != "name"})


def test_a_class_written_by_hand_has_no_payload_type() -> None:
    @dataclass(frozen=True)
    class Holder:
        inner: ByHand

    with pytest.raises(TypeError, match="ByHand writes itself by hand"):
        payload_type(Holder)
