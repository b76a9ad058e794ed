"""Small helpers shared by the benchmark scripts."""

from __future__ import annotations

import resource
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["peak_rss_mb", "generated_corpus"]


def peak_rss_mb(*, children: bool = False) -> float:
    """Peak resident set size of this process (or of its waited-for children) in MB.

    ``ru_maxrss`` is kilobytes on Linux and bytes on macOS.
    """
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    peak = resource.getrusage(who).ru_maxrss
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    return peak / scale


def generated_corpus(folder: Path, *, topics: Sequence[str], sentence: str, files: int, paragraphs: int) -> Path:
    """Write ``files`` markdown notes on ``topics`` into ``folder``.

    ``sentence`` is a format string with ``{topic}``, ``{i}`` and ``{j}`` (file and
    paragraph number), so every paragraph is distinct and searchable.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        topic = topics[i % len(topics)]
        body = "\n\n".join(sentence.format(topic=topic, i=i, j=j) for j in range(paragraphs))
        (folder / f"note{i:04d}.md").write_text(f"# {topic.title()} {i}\n\n{body}\n", encoding="utf-8")
    return folder
