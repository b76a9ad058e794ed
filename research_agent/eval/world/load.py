"""A world: a folder of pages and the questions they answer, read and refused before any model call.

``WORLD/pages/`` holds any corpus the tool reads (md, html, txt; pdf with the ``pdf`` extra), and
``WORLD/questions.yaml`` the questions, each with its checkpoints (the facts a good report states,
the pages that state them) and the values later pages replaced (``world.schema.json``, shipped
with the package, says every field). :func:`load_world` reads both without trusting them: the YAML
size-capped and checked, then the schema, then what a schema cannot say (unique ids, pages that
exist, an unanswerable question without checkpoints). Any problem is one :class:`InputError` line
naming the file and the problem (exit 2). The pages are read as the corpus reads them
(:func:`~research_agent.search.corpus_files.read_document`), so the grader sees the text the run saw.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

import jsonschema

from ...errors import InputError
from ...files.safeyaml import load_yaml_text, read_capped
from ...ids import slugify
from ...search.corpus_files import read_document, scan_corpus
from ...text.controls import one_line

__all__ = ["Checkpoint", "Superseded", "Question", "World", "load_world", "world_schema", "QUESTIONS_FILE", "PAGES_DIR"]

QUESTIONS_FILE = "questions.yaml"
PAGES_DIR = "pages"
MAX_QUESTIONS_BYTES = 4 * 1024 * 1024
MAX_QUESTIONS_NODES = 200_000
MAX_PAGE_BYTES = 5 * 1024 * 1024
MAX_PAGES = 20_000


@dataclass(frozen=True)
class Checkpoint:
    """A fact a good report on its question states: ``answer`` (or one of its ``aliases``), found
    on the ``sources`` pages (paths relative to ``pages/``)."""

    id: str
    answer: str
    sources: tuple[str, ...]
    aliases: tuple[str, ...] = ()

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.answer, *self.aliases)


@dataclass(frozen=True)
class Superseded:
    """A value a later page replaced (``answer``), and what replaced it (``by``)."""

    answer: str
    by: str


@dataclass(frozen=True)
class Question:
    """One question of a world. ``answerable`` False: the pages cannot answer it (no checkpoints)."""

    id: str
    question: str
    checkpoints: tuple[Checkpoint, ...] = ()
    superseded: tuple[Superseded, ...] = ()
    answerable: bool = True
    kind: str = ""


@dataclass(frozen=True, eq=False)
class World:
    """A world as read: its name, folder, questions, and each page's text by its path under ``pages/``."""

    name: str
    root: Path
    questions: tuple[Question, ...]
    pages: Mapping[str, str] = field(default_factory=dict)
    fingerprint: str = ""  # a hash of questions.yaml and every page's bytes: two evals of one world match
    seed: int | None = None

    @property
    def pages_dir(self) -> Path:
        return self.root / PAGES_DIR

    def question(self, question_id: str) -> Question:
        return next(q for q in self.questions if q.id == question_id)


@functools.cache
def world_schema() -> dict[str, Any]:
    """The JSON Schema of ``questions.yaml`` (package data)."""
    text = resources.files("research_agent.eval.world").joinpath("world.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def _refuse(path: Path, problem: str) -> InputError:
    return InputError(f"{path}: {' '.join(problem.split())[:300]}")


def _schema_problem(data: Any) -> str | None:
    """The first problem the schema finds, located (``questions[2].checkpoints[0]: ...``), or None."""
    validator = jsonschema.Draft202012Validator(world_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    message = error.message if len(error.message) <= 160 else error.message[:157] + "..."
    return f"{where}: {message}" if where else message


def _inside_pages(source: str) -> bool:
    parts = PurePosixPath(source).parts
    return bool(parts) and not source.startswith("/") and ".." not in parts and "\\" not in source


def _question(data: dict[str, Any], where: str, pages: Mapping[str, str], skipped: Mapping[str, str]) -> Question:
    answerable = data.get("answerable", True)
    checkpoints = []
    seen: set[str] = set()
    for n, item in enumerate(data.get("checkpoints", ())):
        here = f"{where}.checkpoints[{n}]"
        if item["id"] in seen:
            raise ValueError(f"{here}: duplicate checkpoint id {item['id']!r}")
        seen.add(item["id"])
        for k, source in enumerate(item["sources"]):
            if not _inside_pages(source):
                raise ValueError(f"{here}.sources[{k}]: {source!r} is not a path inside pages/")
            if source in skipped:
                raise ValueError(f"{here}.sources[{k}]: page {source} cannot be read ({skipped[source]})")
            if source not in pages:
                raise ValueError(f"{here}.sources[{k}]: page {source} does not exist in pages/")
        checkpoints.append(Checkpoint(item["id"], item["answer"], tuple(item["sources"]), tuple(item.get("aliases", ()))))
    if not answerable and checkpoints:
        raise ValueError(f"{where}: an unanswerable question (answerable: false) has no checkpoints")
    if answerable and not checkpoints:
        raise ValueError(f"{where}: no checkpoints (mark a question the pages cannot answer with answerable: false)")
    superseded = tuple(Superseded(s["answer"], s["by"]) for s in data.get("superseded", ()))
    return Question(data["id"], one_line(data["question"]), tuple(checkpoints), superseded, answerable,
                    data.get("kind", ""))  # fmt: skip


def _questions(data: dict[str, Any], pages: Mapping[str, str], skipped: Mapping[str, str]) -> tuple[Question, ...]:
    out: list[Question] = []
    ids: set[str] = set()
    for n, item in enumerate(data["questions"]):
        if item["id"] in ids:
            raise ValueError(f"questions[{n}]: duplicate question id {item['id']!r}")
        ids.add(item["id"])
        out.append(_question(item, f"questions[{n}]", pages, skipped))
    return tuple(out)


def _read_pages(folder: Path) -> tuple[dict[str, str], dict[str, str], str]:
    """Every page's text (title first) by its path under ``folder``, the pages that cannot be
    read with why, and a hash of their bytes."""
    scan = scan_corpus(folder.resolve())
    if len(scan.files) > MAX_PAGES:
        raise InputError(f"{folder}: more than {MAX_PAGES} pages")
    pages: dict[str, str] = {}
    skipped = dict(scan.skips)
    digest = hashlib.sha256()
    for rel, (path, info) in sorted(scan.files.items()):
        document = read_document(path, info, max_bytes=MAX_PAGE_BYTES)
        if isinstance(document, str):
            skipped[rel] = document
            continue
        pages[rel] = f"{document.title}\n\n{document.text}"
        digest.update(rel.encode("utf-8") + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return pages, skipped, digest.hexdigest()


def load_world(folder: Path) -> World:
    """The world in ``folder`` (see the module docstring); InputError (one line) when it is not one."""
    root = Path(folder).expanduser()
    questions_path, pages_dir = root / QUESTIONS_FILE, root / PAGES_DIR
    if not root.is_dir():
        raise InputError(f"{root}: no such folder (a world is a folder with pages/ and {QUESTIONS_FILE})")
    if not questions_path.exists():
        raise _refuse(questions_path, f"no such file (a world is a folder with pages/ and {QUESTIONS_FILE})")
    if not pages_dir.is_dir():
        raise _refuse(pages_dir, "no such folder (a world's pages go in pages/)")
    try:
        text = read_capped(questions_path, max_bytes=MAX_QUESTIONS_BYTES)
        data = load_yaml_text(text, max_nodes=MAX_QUESTIONS_NODES)
    except InputError as exc:
        raise _refuse(questions_path, str(exc)) from None
    problem = "empty file (a world lists its questions under questions:)" if data is None else _schema_problem(data)
    if problem is not None:
        raise _refuse(questions_path, problem)
    pages, skipped, digest = _read_pages(pages_dir)
    if not pages:
        raise _refuse(pages_dir, "no page the corpus can read (md, html, txt; pdf with the pdf extra)")
    try:
        questions = _questions(data, pages, skipped)
    except ValueError as exc:
        raise _refuse(questions_path, str(exc)) from None
    fingerprint = hashlib.sha256(text.encode("utf-8") + digest.encode("ascii")).hexdigest()[:16]
    name = data.get("name") or slugify(root.resolve().name, max_len=40)
    return World(name, root.resolve(), questions, pages, fingerprint, data.get("seed"))
