"""An eval's progress on stderr: the batch's bar and running questions, and the scorecard so far.

Each run is graded as it ends (:class:`~research_agent.eval.session.Grades`). On a terminal the
live block shows, under the bar, the fact recall so far and a table of the newest graded runs;
without one, one line per run that ends, with its grade.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ...batch.state import Entry
from ...eval.graded import GradedRun
from ...eval.scorecard import recall_of
from ...eval.session import Grades
from ..batch.view import BatchView, short_question

__all__ = ["EvalView", "grade_words"]

SHOWN_ROWS = 10


def grade_words(run: GradedRun) -> str:
    g = run.grade
    found = f"found {g.found}/{len(g.checkpoints)}, cited {g.cited}" if g.checkpoints else "unanswerable"
    declined = ", declined" if g.declined else ""
    stale = f", stale: {', '.join(g.stale)}" if g.stale else ""
    return f"{found}, unsupported {len(g.unsupported)}{stale}{declined}"


@dataclass
class EvalView(BatchView):
    """A BatchWatcher drawing an eval's progress (see the module docstring)."""

    grades: Grades | None = None
    graded: list[GradedRun] = field(default_factory=list)

    def ended(self, entry: Entry) -> None:
        run = self.grades.of(entry.key) if self.grades is not None and entry.state == "done" else None
        if run is not None:
            self.graded.append(run)
        super().ended(entry)

    def ended_line(self, entry: Entry) -> str:
        head = f"{entry.row.get('id', entry.line)} (round {entry.row.get('round', 1)}) {short_question(entry.question)}"
        if entry.state != "done":
            return f"{head}: failed: {entry.error}"
        run = self.grades.of(entry.key) if self.grades is not None else None
        return f"{head}: {grade_words(run) if run is not None else 'not graded (its files cannot be read)'}"

    def _render(self) -> RenderableType:
        recall = recall_of(self.graded)
        table = Table(box=None, padding=(0, 1), show_edge=False)
        for column in ("question", "round", "found", "cited", "unsupported", "declined"):
            table.add_column(column)
        for run in self.graded[-SHOWN_ROWS:]:
            g = run.grade
            table.add_row(run.question.id, str(run.round), f"{g.found}/{len(g.checkpoints)}", str(g.cited),
                          str(len(g.unsupported)), "yes" if g.declined else "-")  # fmt: skip
        shown = "-" if recall is None else f"{recall:.2f}"
        line = Text(f"fact recall so far {shown} over {len(self.graded)} graded run(s)")
        return Group(super()._render(), line, table) if self.graded else Group(super()._render(), line)
