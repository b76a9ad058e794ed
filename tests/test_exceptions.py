"""Issue 47.2: one exception tree. Every exception class the package defines is in
research_agent.errors (or private to its module), listed in its ``__all__`` and drawn in its
docstring with the exit code and HTTP status it carries; the package root exports every error;
docs/exceptions.md is what tools/exceptions_reference.py writes."""

from __future__ import annotations

import importlib
import pkgutil
import re

import research_agent
from research_agent import errors
from tools import exceptions_reference as ref


def _defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of the package, by ``module.Name``."""
    found = {}
    for info in pkgutil.walk_packages(research_agent.__path__, "research_agent."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == info.name:
                found[f"{info.name}.{name}"] = value
    return found


def _tree_classes() -> list[type[BaseException]]:
    return [value for name in errors.__all__ if isinstance(value := getattr(errors, name), type)]


def test_every_exception_class_lives_in_errors_unless_it_is_private_to_its_module() -> None:
    defined = _defined_exceptions()
    outside = sorted(name for name, cls in defined.items()
                     if cls.__module__ != "research_agent.errors" and not cls.__name__.startswith("_"))  # fmt: skip
    assert outside == [], "a public exception class outside research_agent/errors.py: move it there"
    in_errors = {cls for cls in defined.values() if cls.__module__ == "research_agent.errors"}
    assert in_errors == set(_tree_classes()), "every class of errors.py is in its __all__"
    assert len({cls.__name__ for cls in in_errors}) == len(in_errors)  # one name, one class (no two Refused)


def test_every_class_carries_an_exit_code_and_an_http_status() -> None:
    for cls in _tree_classes():
        assert issubclass(cls, errors.ResearchError | errors.Signal), cls
        assert isinstance(cls.exit_code, int) and cls.exit_code in (1, 2, 3, 4, 5, 6, 130), cls
        assert isinstance(cls.http_status, int) and 400 <= cls.http_status <= 599, cls
    assert (errors.UnknownRun.http_status, errors.Busy.http_status, errors.InputError.http_status) == (404, 503, 400)
    refused = errors.RequestRefused(413, "the form is too large")
    assert (refused.http_status, refused.message, str(refused)) == (413, "the form is too large", "the form is too large")
    assert errors.error_message(refused) == "the form is too large"


def test_the_docstring_draws_every_class_with_its_numbers() -> None:
    drawn = dict(re.findall(r"[─└├│ ]+ (\w+)\s+(\d+\s+(?:\d+|\*))\s", errors.__doc__ or ""))
    for cls in _tree_classes():
        if issubclass(cls, errors.ResearchError):
            status = "*" if ref.status(cls) == "its own" else str(cls.http_status)
            assert drawn.get(cls.__name__, "").split() == [str(cls.exit_code), status], cls.__name__
        else:
            assert re.search(rf"\b{cls.__name__}\b", errors.__doc__ or ""), cls.__name__


def test_the_package_root_exports_every_error() -> None:
    wanted = {cls.__name__ for cls in _tree_classes() if issubclass(cls, errors.ResearchError)}
    assert wanted <= set(research_agent.__all__)
    assert {"UnreadableAnswer", "ContextExceeded", "EndpointUnreachable"} <= wanted
    for name in wanted:
        assert getattr(research_agent, name) is getattr(errors, name)


def test_the_committed_page_is_what_the_script_writes() -> None:
    stale = "docs/exceptions.md is stale: run `python tools/exceptions_reference.py`"
    assert ref.PAGE.read_text(encoding="utf-8") == ref.render(), stale
    assert "| `Busy` | 1 | 503 |" in ref.render() and "| `RequestRefused` | 2 | its own |" in ref.render()
