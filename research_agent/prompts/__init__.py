"""Prompt templates, one file per stage, shipped as package data.

A template file holds a ``[system]`` part and a ``[user]`` part. Placeholders use
``$name`` (string.Template), so JSON braces in a prompt need no escaping. Every
placeholder must be given: a missing one is a bug and raises KeyError.

A fragment (``_name.md``, no parts) is text that several prompts share or that a stage
adds only sometimes; :func:`fragment` fills it the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template

__all__ = ["Prompt", "render", "load", "fragment"]


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str


@cache
def load(name: str) -> tuple[Template, Template]:
    text = resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")
    head, sep, user = text.partition("\n[user]\n")
    if not sep or not head.lstrip().startswith("[system]"):
        raise ValueError(f"prompt {name}.md needs a [system] and a [user] part")
    system = head.lstrip()[len("[system]") :].strip("\n")
    return Template(system), Template(user.strip("\n"))


def render(name: str, **values: object) -> Prompt:
    """Fill the template ``name`` with ``values``."""
    system, user = load(name)
    strs = {k: str(v) for k, v in values.items()}
    return Prompt(system.substitute(strs), user.substitute(strs))


@cache
def _fragment_template(name: str) -> Template:
    return Template(resources.files(__package__).joinpath(f"_{name}.md").read_text(encoding="utf-8").strip("\n"))


def fragment_text(name: str) -> str:
    """The fragment ``_name.md`` as written, its ``$`` slots unfilled."""
    return _fragment_template(name).template


def fragment(name: str, **values: object) -> str:
    """The fragment ``_name.md`` filled with ``values``."""
    return _fragment_template(name).substitute({k: str(v) for k, v in values.items()})
