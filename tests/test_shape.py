"""The shape limits the code keeps: modules <= 400 lines, functions <= 60, packages <= 12 modules,
no import cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import research_agent

PACKAGE = Path(research_agent.__file__).parent
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
MAX_PACKAGE_MODULES = 12  # past a dozen, a package is grouped by job into subpackages

# Packages not (yet) grouped, each held at its count today so that it cannot grow further.
# Lower a number when a package is grouped; remove its line once it is at or under the limit.
PACKAGE_ALLOWANCE = {
    # The public surface (__init__, __main__, config, modes, errors, pipeline, results, version,
    # lazy) and the shared vocabulary that nearly every package imports and no one job owns
    # (sources, progress, measures, run_refs, ids, domains, interrupts): any package home for
    # these makes an import cycle (fetch, search, stages, record, claims and memory all sit
    # below the run; the CLI and the critique both run their coroutines through interrupts).
    "research_agent": 16,
    "research_agent.cli": 17,
}


def _modules() -> dict[str, ast.Module]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return out


def _is_package(name: str) -> bool:
    return (PACKAGE.parent / name.replace(".", "/") / "__init__.py").exists()


def _imports(name: str, tree: ast.Module, known: set[str]) -> set[str]:
    """Modules of the package that ``name`` imports when it is loaded (not inside functions
    and not under ``if TYPE_CHECKING``)."""
    base = name if _is_package(name) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for sub in ast.walk(node) if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else ():
            if isinstance(sub, ast.ImportFrom):
                parent = base
                for _ in range(max(sub.level - 1, 0)):
                    parent = parent.rpartition(".")[0]
                target = f"{parent}.{sub.module}" if sub.level and sub.module else (sub.module or parent)
                for alias in sub.names:
                    full = f"{target}.{alias.name}"
                    found.add(full if full in known else target)
            elif isinstance(sub, ast.Import):
                found.update(alias.name for alias in sub.names)
    return {m for m in found if m in known and m != name}


def test_modules_and_functions_stay_small() -> None:
    too_long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            too_long.append(f"{path.name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{path.name}:{node.name}: {length} lines")
    assert too_long == []


def test_packages_stay_small() -> None:
    """A package holds at most a dozen modules (``__init__`` counted), or its allowance above."""
    too_big = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        name = ".".join(init.parent.relative_to(PACKAGE.parent).parts)
        count = len(list(init.parent.glob("*.py")))
        if count > PACKAGE_ALLOWANCE.get(name, MAX_PACKAGE_MODULES):
            too_big.append(f"{name}: {count} modules")
        elif name in PACKAGE_ALLOWANCE and count < PACKAGE_ALLOWANCE[name]:
            fix = "remove its allowance" if count <= MAX_PACKAGE_MODULES else f"lower its allowance to {count}"
            too_big.append(f"{name}: {count} modules now; {fix}")
    assert too_big == []


def _module_graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph = {name: _imports(name, tree, known) for name, tree in modules.items()}
    # A package's __init__ re-exporting its own modules is not a cycle of jobs.
    return {
        name: {m for m in imported if not (_is_package(m) and name.startswith(m + "."))}
        for name, imported in graph.items()
    }


def _unit(module: str) -> str:
    """The package a module belongs to (``memory`` for ``research_agent.memory.store.files``), or
    the module itself for one at the root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and _is_package(module)) else module


def test_no_import_cycles_between_modules() -> None:
    assert _cycles(_module_graph()) == []


def test_no_import_cycles_between_packages() -> None:
    units: dict[str, set[str]] = {}
    for name, imported in _module_graph().items():
        units.setdefault(_unit(name), set()).update(_unit(m) for m in imported if _unit(m) != _unit(name))
    assert _cycles(units) == []


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    cycles: list[str] = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt not in state and nxt in graph:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return cycles


MEMORY_FLOORS = ("store", "critique", "effects", "lessons")  # bottom to top


def test_memory_floors_import_only_those_below() -> None:
    """memory/ is grouped by job into four floors; a floor imports only the floors below it."""

    def floor(module: str) -> int | None:
        parts = module.split(".")
        if len(parts) > 2 and parts[1] == "memory" and parts[2] in MEMORY_FLOORS:
            return MEMORY_FLOORS.index(parts[2])
        return None

    upward = [
        f"{name} -> {imported}"
        for name, imports in _module_graph().items()
        for imported in imports
        if floor(name) is not None and floor(imported) is not None and floor(imported) > floor(name)
    ]
    assert upward == []


FRONT_ENDS = ("cli", "mcp_server", "web")
LAUNCHER = "research_agent.cli.servers"  # starts the servers: the one place a front end names another


def _every_import(name: str, tree: ast.Module, known: set[str]) -> set[str]:
    """Modules of the package that ``name`` imports anywhere: at load time, inside functions, and
    under ``if TYPE_CHECKING`` (an import deferred into a function still ties the two modules)."""
    base = name if _is_package(name) else name.rpartition(".")[0]
    found: set[str] = set()
    for sub in ast.walk(tree):
        if isinstance(sub, ast.ImportFrom):
            parent = base
            for _ in range(max(sub.level - 1, 0)):
                parent = parent.rpartition(".")[0]
            target = f"{parent}.{sub.module}" if sub.level and sub.module else (sub.module or parent)
            found.update(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target for alias in sub.names)
        elif isinstance(sub, ast.Import):
            found.update(alias.name for alias in sub.names)
    return {m for m in found if m in known and m != name}


def test_the_workbench_has_no_import_cycle_even_through_imports_inside_functions() -> None:
    """Issue 44 point 4: app <-> pages <-> memory_pages went round through imports inside functions."""
    modules = _modules()
    known = set(modules)
    web = {name: tree for name, tree in modules.items() if name.startswith("research_agent.web")}
    graph = {
        name: {m for m in _every_import(name, tree, known) if m in web and not (_is_package(m) and name.startswith(m + "."))}
        for name, tree in web.items()
    }
    assert _cycles(graph) == []


def test_no_front_end_imports_another() -> None:
    """Anything two front ends need lives in service/ or below; only the CLI's server launcher names them."""
    modules = _modules()
    known = set(modules)
    crossing = []
    for name, tree in modules.items():
        unit = _unit(name)
        if unit not in FRONT_ENDS or name == LAUNCHER:
            continue
        crossing += [f"{name} -> {m}" for m in sorted(_every_import(name, tree, known)) if _unit(m) in FRONT_ENDS and _unit(m) != unit]
    assert crossing == []
