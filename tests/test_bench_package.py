"""bench/ is a package run as ``python -m bench.X`` (issue 47 point 7): no script changes ``sys.path``
to find its imports, its helpers are imported one way (``bench._x``), and its README lists every script."""

from __future__ import annotations

import ast
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
# Run by GPT Researcher's own interpreter, by path: it cannot import this project.
RUN_BY_PATH = {"_gptr_run.py"}


def _modules() -> list[Path]:
    return sorted(p for p in BENCH.glob("*.py") if p.name not in RUN_BY_PATH)


def _touches_sys_path(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", None) == "sys":
            return True
    return False


def test_no_bench_module_changes_sys_path_or_silences_late_imports() -> None:
    offenders = []
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        if _touches_sys_path(ast.parse(text)) or "noqa: E402" in text:
            offenders.append(path.name)
    assert offenders == []


def test_bench_helpers_are_imported_as_bench_modules() -> None:
    helpers = {p.stem for p in BENCH.glob("_*.py")} - {"__init__"}
    bare = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            bare += [f"{path.name}: {name}" for name in names if name and name.split(".")[0] in helpers]
    assert bare == []


def test_the_readme_lists_every_script() -> None:
    readme = (BENCH / "README.md").read_text(encoding="utf-8")
    scripts = [p.name for p in BENCH.glob("*.py") if not p.name.startswith("_")]
    assert scripts, "no scripts found"
    assert [name for name in scripts if f"`{name}`" not in readme] == []
