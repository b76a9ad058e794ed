"""Reading and writing memory YAML without trusting it.

A critique or run record on disk may have been edited by hand, truncated by a crash,
or planted by someone else. Reading one therefore:

* refuses symlinks and anything that is not a regular file (``lstat``, then
  ``O_NOFOLLOW``), and, when ``within`` is given, any path resolving outside it;
* checks the size cap *before* reading, and never reads more than the cap;
* measures the nesting depth of the text before any parser sees it (libyaml's C
  composer recurses once per level and crashes the process at about 30,000 levels:
  see :mod:`research_agent.files.nesting`), unless the text has too few nesting
  indicators to nest even 1,000 levels;
* composes the document with the safe loader only, then rejects anchors/aliases
  (alias bombs), any tag outside the plain YAML core (``!!python/object`` and
  friends), duplicate keys, documents deeper or larger than a small bound;
* turns every problem into :class:`UnsafeYaml` with a one-line reason.

Writing produces block-style YAML a person can read, with keys in the order given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import yaml
from yaml.constructor import SafeConstructor

from ..errors import UnsafeYaml
from ..text.controls import one_line
from .nesting import MAX_NESTING, nesting_problem
from .safefile import UnsafeFile, read_text_capped

__all__ = ["UnsafeYaml", "read_capped", "load_yaml_text", "load_yaml_file", "dump_yaml"]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_CORE = "tag:yaml.org,2002:"
_STR = _CORE + "str"
_ALLOWED_TAGS = frozenset(_CORE + t for t in ("str", "int", "float", "bool", "null", "map", "seq"))
_TIMESTAMP = _CORE + "timestamp"

MAX_NODES = 20_000
MAX_DEPTH = 32
SAFE_TO_COMPOSE = 1_000  # levels: far below where libyaml's composer overflows its stack (~30,000)
_OPENERS = "-:?[{"


def read_capped(
    path: Path, *, max_bytes: int, within: Path | None = None, allow_symlink: bool = False
) -> str:
    """Read a UTF-8 file of at most ``max_bytes`` bytes, refusing links and foreign paths.

    ``within``: the folder the file must lie in, symlinks resolved (see
    :func:`research_agent.files.safefile.read_text_capped`).
    """
    try:
        return read_text_capped(path, max_bytes=max_bytes, inside=within, follow_symlinks=allow_symlink)
    except UnsafeFile as exc:
        raise UnsafeYaml(str(exc)) from None


def _where(node: yaml.Node) -> str:
    mark = node.start_mark
    return f"line {mark.line + 1}" if mark is not None else "somewhere"


_SAFE = SafeConstructor()
_PLAIN_FLOAT = frozenset("0123456789.eE+-")


def _int(node: yaml.ScalarNode) -> int:
    """A YAML 1.1 int; plain decimals (most of them) without PyYAML's general path."""
    value = node.value
    if value.isdigit() and value.isascii() and (value[0] != "0" or value == "0"):  # 012 is octal
        return int(value)
    return _SAFE.construct_yaml_int(node)


def _float(node: yaml.ScalarNode) -> float:
    """A YAML 1.1 float; plain decimals (most of them) without PyYAML's general path."""
    value = node.value
    if value and _PLAIN_FLOAT.issuperset(value):  # no _, no 1:30, no .inf/.nan
        return float(value)
    return _SAFE.construct_yaml_float(node)


_SCALARS: dict[str, Any] = {
    _STR: None,  # the text itself
    _TIMESTAMP: None,  # a date typed by hand stays the text it looks like
    _CORE + "int": _int,
    _CORE + "float": _float,
    _CORE + "bool": _SAFE.construct_yaml_bool,
    _CORE + "null": _SAFE.construct_yaml_null,
}
_COLLECTIONS: dict[type[yaml.Node], str] = {yaml.MappingNode: _CORE + "map", yaml.SequenceNode: _CORE + "seq"}


class _Builder:
    """Builds the Python value of a composed document in one walk, refusing as it goes:
    aliases (a node met twice), tags outside the plain YAML core, duplicate keys, and
    documents with more than ``max_nodes`` nodes or deeper than ``max_depth`` levels.

    One walk instead of a check and then PyYAML's general constructor: reading thousands
    of critique files is mostly this (see :mod:`research_agent.memory.store.index.summary`)."""

    def __init__(self, max_nodes: int, max_depth: int, *, aliases: bool = True) -> None:
        self.max_nodes, self.max_depth = max_nodes, max_depth
        self.seen: set[int] | None = set() if aliases else None  # None: the text has no alias (*)
        self.count = 0

    def value(self, node: yaml.Node, depth: int = 1) -> Any:
        if self.seen is not None:
            if id(node) in self.seen:
                raise UnsafeYaml(f"YAML anchors/aliases are not allowed ({_where(node)})")
            self.seen.add(id(node))
        self.count += 1
        if self.count > self.max_nodes:
            raise UnsafeYaml(f"document too large (more than {self.max_nodes} YAML nodes)")
        if depth > self.max_depth:
            raise UnsafeYaml(f"document nested too deeply (more than {self.max_depth} levels)")
        tag = node.tag or ""
        kind = type(node)
        if kind is yaml.ScalarNode and tag in _SCALARS:
            construct = _SCALARS[tag]
            return node.value if construct is None else construct(node)
        if _COLLECTIONS.get(kind) != tag:
            shown = tag.replace(_CORE, "!!") if tag.startswith(_CORE) else tag
            raise UnsafeYaml(f"unsupported YAML tag {shown[:60]} ({_where(node)})")
        if kind is yaml.SequenceNode:
            return [self.value(item, depth + 1) for item in node.value]
        return self.mapping(cast(yaml.MappingNode, node), depth)  # the tag check above leaves only a mapping

    def mapping(self, node: yaml.MappingNode, depth: int) -> dict[Any, Any]:
        built: dict[Any, Any] = {}
        keys: set[str] = set()
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in keys:
                    raise UnsafeYaml(f"duplicate key {key_node.value[:40]!r} ({_where(key_node)})")
                keys.add(key_node.value)
            key = self.value(key_node, depth + 1)
            if isinstance(key, list | dict):
                raise UnsafeYaml(f"found an unhashable key ({_where(key_node)})")
            built[key] = self.value(value_node, depth + 1)
        return built


def _could_nest_deeply(text: str) -> bool:
    """Whether ``text`` has enough nesting indicators to nest :data:`SAFE_TO_COMPOSE` levels.

    Every collection in a chain of nested ones opens with an indicator of its own (``-`` of
    a sequence entry, ``:`` or ``?`` of a mapping key, ``[`` or ``{``), so a text with fewer
    of them cannot nest that deep, and its depth is left to the build (``max_depth``). Counting
    them costs microseconds; the precise scan (:mod:`.nesting`) costs about a quarter of
    reading a critique file, so it runs only where the count cannot rule a deep text out."""
    return sum(map(text.count, _OPENERS)) >= SAFE_TO_COMPOSE


def load_yaml_text(text: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one YAML document safely (see the module docstring); raise UnsafeYaml."""
    if _could_nest_deeply(text):
        problem = nesting_problem(text, "yaml", limit=max(max_depth, MAX_NESTING))
        if problem is not None:
            raise UnsafeYaml(f"document {problem}")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        return _Builder(max_nodes, max_depth, aliases="*" in text).value(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = one_line(exc.problem or exc.context or "invalid YAML")
        raise UnsafeYaml(f"YAML syntax error{where}: {problem[:160]}") from None
    except yaml.YAMLError as exc:
        raise UnsafeYaml(f"invalid YAML: {' '.join(str(exc).split())[:160]}") from None
    except (TypeError, ValueError, RecursionError) as exc:
        raise UnsafeYaml(f"invalid YAML: {' '.join(str(exc).split())[:160]}") from None
    finally:
        loader.dispose()


def load_yaml_file(
    path: Path,
    *,
    max_bytes: int,
    within: Path | None = None,
    allow_symlink: bool = False,
) -> Any:
    """Read (see :func:`read_capped`) and parse (see :func:`load_yaml_text`) one file."""
    return load_yaml_text(read_capped(path, max_bytes=max_bytes, within=within, allow_symlink=allow_symlink))


def dump_yaml(data: Any) -> str:
    """Block-style YAML, keys in the order given, unicode kept, no Python tags."""
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=100,
        indent=2,
    )
