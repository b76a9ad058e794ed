"""Worlds: folders of pages and the questions they answer, and the built-in fictional one.

* :mod:`.load`     the world format (``pages/`` and ``questions.yaml``, checked against the JSON
  Schema shipped beside it), refused before any model call with one line naming the problem
* :mod:`.builtin`  the built-in world, generated from a seed (:func:`~.builtin.write_world`)
* :mod:`.fiction`  what a generated world is made of: invented names, pages in md, html and txt
* :mod:`.sample`   the sample corpus of ``run --sample``: the built-in world of a fixed seed, written
  into the cache folder where ``eval run`` writes it (:func:`~.sample.write_sample`)
"""

from .builtin import DEFAULT_SEED, KINDS, builtin_name, generate, write_world
from .load import PAGES_DIR, QUESTIONS_FILE, Checkpoint, Question, Superseded, World, load_world, world_schema

__all__ = [
    "Checkpoint", "Question", "Superseded", "World", "load_world", "write_world", "generate", "builtin_name",
    "world_schema", "DEFAULT_SEED", "KINDS", "PAGES_DIR", "QUESTIONS_FILE",
]  # fmt: skip
