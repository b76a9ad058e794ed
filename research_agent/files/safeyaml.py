"""Reading and writing memory YAML without trusting it.

A critique or run record on disk may have been edited by hand, truncated by a crash,
or planted by someone else. Reading one therefore:

* refuses symlinks and anything that is not a regular file (``lstat``, then
  ``O_NOFOLLOW``), and, when ``within`` is given, any path resolving outside it;
* checks the size cap *before* reading, and never reads more than the cap;
* measures the nesting depth of the text before any parser sees it (libyaml's C
  composer recurses once per level and crashes the process at about 30,000 levels:
  see :mod:`research_agent.files.nesting`);
* composes the document with the safe loader only, then rejects anchors/aliases
  (alias bombs), any tag outside the plain YAML core (``!!python/object`` and
  friends), duplicate keys, documents deeper or larger than a small bound;
* turns every problem into :class:`UnsafeYaml` with a one-line reason.

Writing produces block-style YAML a person can read, with keys in the order given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError
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


class UnsafeYaml(InputError):
    """A YAML file was refused or could not be read; the message says why, on one line."""


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


def _check_nodes(root: yaml.Node, *, max_nodes: int, max_depth: int) -> None:
    """Reject aliases, foreign tags, duplicate keys and oversize documents; fix timestamps."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            raise UnsafeYaml(f"YAML anchors/aliases are not allowed ({_where(node)})")
        seen.add(id(node))
        if len(seen) > max_nodes:
            raise UnsafeYaml(f"document too large (more than {max_nodes} YAML nodes)")
        if depth > max_depth:
            raise UnsafeYaml(f"document nested too deeply (more than {max_depth} levels)")
        tag = node.tag or ""
        if tag == _TIMESTAMP:
            node.tag = _STR  # a date typed by hand stays the text it looks like
        elif tag not in _ALLOWED_TAGS:
            shown = tag.replace(_CORE, "!!") if tag.startswith(_CORE) else tag
            raise UnsafeYaml(f"unsupported YAML tag {shown[:60]} ({_where(node)})")
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in keys:
                        raise UnsafeYaml(f"duplicate key {key.value[:40]!r} ({_where(key)})")
                    keys.add(key.value)
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)


def load_yaml_text(text: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one YAML document safely (see the module docstring); raise UnsafeYaml."""
    problem = nesting_problem(text, "yaml", limit=max(max_depth, MAX_NESTING))
    if problem is not None:
        raise UnsafeYaml(f"document {problem}")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_nodes(node, max_nodes=max_nodes, max_depth=max_depth)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
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
