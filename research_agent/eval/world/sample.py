"""The sample corpus ``research-agent run --sample`` researches: the built-in world of a fixed seed.

The eval's own generator (:func:`.builtin.write_world`) writes it on first use into the cache folder,
in the same place ``research-agent eval run`` writes that world (:func:`builtin_world_dir`), rather
than the package shipping the pages as data: one generator and one copy, so the sample cannot drift
from what the generator makes for its seed, there is nothing to regenerate when the generator
changes, and the wheel and an editable install behave alike. Writing it takes milliseconds, and a
file whose content is unchanged is left alone (the corpus index of the sample stays valid).

Every firm, town, person and number in it is invented, so no model can answer its questions from
memory: a report on it is as good as what the run read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...files.atomic import ensure_writable_dir
from .builtin import DEFAULT_SEED, builtin_name, generate, write_world
from .load import PAGES_DIR, QUESTIONS_FILE

__all__ = ["SAMPLE_SEED", "Sample", "builtin_world_dir", "write_sample"]

SAMPLE_SEED = DEFAULT_SEED


@dataclass(frozen=True)
class Sample:
    """The sample as written: its world folder, how many pages it has, and the question ``run
    --sample`` asks when given none (the world's first)."""

    folder: Path
    pages: int
    question: str

    @property
    def corpus(self) -> Path:
        """The folder of pages a run reads (``pages/``)."""
        return self.folder / PAGES_DIR

    @property
    def questions_file(self) -> Path:
        """``questions.yaml``: every question of the world, with the facts that answer it."""
        return self.folder / QUESTIONS_FILE


def builtin_world_dir(cache_dir: Path, seed: int) -> Path:
    """Where the built-in world of ``seed`` is written: ``<cache>/eval-worlds/builtin-<seed>``."""
    return Path(cache_dir).expanduser() / "eval-worlds" / builtin_name(seed)


def write_sample(cache_dir: Path) -> Sample:
    """Write the sample into the cache folder (only the files that differ) and return it.

    Raises StorageError when the folder cannot be written.
    """
    folder = ensure_writable_dir(builtin_world_dir(cache_dir, SAMPLE_SEED))
    write_world(folder, SAMPLE_SEED)
    pages, questions = generate(SAMPLE_SEED)  # pure and quick: what write_world has just written
    return Sample(folder, len(pages), questions["questions"][0]["question"])
