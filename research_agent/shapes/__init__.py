"""Serialized shapes, stated once: a frozen dataclass is the shape of what is written or sent.

- ``plain.py``: :func:`plain` turns a dataclass (and what it holds) into the plain data of a file
  (YAML, JSON) or an answer (the MCP tools' structured content, ``--json``); where what is written
  differs from a field (another key, a rounded number, left out when it is the default, never
  written, spliced into its parent), the field's metadata says so (:func:`shape`). :class:`Plain`
  gives a dataclass its ``as_dict``; :func:`payload_fields` is the same reading of the metadata for
  whoever describes the payload (the MCP adapter derives its tools' output schemas from it).
"""

from .plain import PayloadField, Plain, Shape, payload_fields, plain, shape, written_by_hand

__all__ = ["Plain", "PayloadField", "Shape", "payload_fields", "plain", "shape", "written_by_hand"]
