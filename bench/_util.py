"""Small helpers shared by the benchmark scripts."""

from __future__ import annotations

import json
import resource
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["peak_rss_mb", "generated_corpus", "labelled_texts", "Refusals", "refusals"]


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


def labelled_texts(path: Path) -> list[dict[str, str]]:
    """The rows of a JSON-lines file of labelled texts, blank lines passed over."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass(frozen=True)
class Refusals:
    """How a check that refuses texts did against their labels: counts and the texts it got wrong."""

    tp: int
    fp: int
    fn: int
    wrong: list[str]

    def line(self, digits: int, *, extra: str = "") -> str:
        """``precision recall (tp fp fn<extra>)``; an empty side counts as 1.0."""
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0
        counts = f"tp {self.tp}, fp {self.fp}, fn {self.fn}{extra}"
        return f"precision {precision:.{digits}f} recall {recall:.{digits}f} ({counts})"


def refusals(items: list[dict[str, str]], refuses: Callable[[dict[str, str]], bool], positive: str) -> Refusals:
    """Score ``refuses`` on ``items``: a text labelled ``positive`` is one it should refuse.

    A wrong text is listed as ``refused``/``accepted`` and its label, padded to the widest label.
    """
    tp = fp = fn = 0
    wrong = []
    width = max([len(positive), *(len(item["label"]) for item in items)])
    for item in items:
        refused, meant = refuses(item), item["label"] == positive
        tp += refused and meant
        fp += refused and not meant
        fn += meant and not refused
        if refused != meant:
            wrong.append(f"{'refused ' if refused else 'accepted'} {item['label']:<{width}} {item['text']!r}")
    return Refusals(tp, fp, fn, wrong)
