"""A deterministic corpus of prose notes on one question, for runs that score 12 sources.

Each note has a title and several paragraphs of plain sentences (no digits, so the
research responder's writer quotes them). Notes differ by subject and by the facet they
dwell on, so search, relevance and citations behave as on real documents. A note's body names
what it is about (the asyncio event loop), as a real note's does: its title is not in its text.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PROSE_QUESTION", "write_prose_corpus"]

PROSE_QUESTION = "How does the asyncio event loop schedule coroutines and tasks?"

# Each subject with the words only it uses: its notes' sentences and titles differ by more than a
# word or two, so the writer's paragraphs from them are no near copies of each other.
_SUBJECTS = (
    ("the event loop", "run", "one run call drives each job that waits"),
    ("coroutines", "await", "a new one does no work until it is awaited"),
    ("tasks", "spawn", "to spawn one hands it to the loop at once"),
    ("futures", "result", "each holds a result or an error set just once"),
    ("callbacks", "soon", "a call made soon goes to the back of the line"),
    ("the scheduler", "turns", "fair turns keep busy code from starving the rest"),
    ("cancellation", "error", "the error climbs up the stack unless code eats it"),
    ("timeouts", "limits", "a limit wraps the work and stops it when time is up"),
    ("executors", "pools", "a pool of threads takes the work that would block"),
    ("streams", "bytes", "a reader keeps bytes in a buffer until asked"),
    ("subprocesses", "pipes", "child programs start with their output on pipes"),
    ("synchronization primitives", "locks", "locks and events let code take turns with no threads"),
    ("queues", "items", "one side puts items in while the other side waits"),
    ("signals", "handlers", "a handler for a Unix signal runs inside the loop"),
    ("debug mode", "warnings", "it warns of slow steps and work never awaited"),
    ("task groups", "groups", "a group stops its other members once one fails"),
    ("context variables", "context", "a value set in one task follows it past each await"),
    ("sockets", "reads", "reads and writes wait for the socket with no thread"),
)  # fmt: skip
_FACETS = (
    "{s} decide when a coroutine resumes after it awaits a future or a sleeping timer",
    "the loop keeps a ready queue of callbacks and runs each of them once per iteration",
    "a task wraps a coroutine and schedules its next step whenever the awaited future completes",
    "blocking calls stall every other task, so long computations belong in an executor thread",
    "cancelling a task raises an exception inside the coroutine at the point where it awaits",
    "timers are kept in a heap ordered by deadline and move to the ready queue when they expire",
    "selectors report which sockets are ready, and the loop turns those events into callbacks",
    "{s} interact with the loop only through futures, callbacks and the ready queue",
)
# What a note dwells on: the words a planner's sub-queries ask for ("overview", "evidence"...).
_THEMES = (
    "an overview", "evidence and measurements", "limitations and criticism",
    "practical guidance", "the history of the design", "alternatives and their costs",
)  # fmt: skip
_SENTENCES = (
    "In practice {facet}, and {detail}.",
    "This note on the asyncio event loop gives {theme} for {s} in long running services.",
    "Those who study {s} learn that {facet}.",
    "A common mistake with {s} is to forget that {facet}.",
    "Seen as {theme}, {s} show that {detail}.",
)


def _paragraph(subject: tuple[str, str, str], theme: str, note: int, paragraph: int) -> str:
    name, _, detail = subject
    sentences = []
    for k, template in enumerate(_SENTENCES):
        facet = _FACETS[(note + paragraph + k) % len(_FACETS)].format(s=name)
        sentences.append(template.format(facet=facet, s=name, theme=theme, detail=detail))
    return " ".join(sentences)


def write_prose_corpus(folder: Path, *, notes: int = 36, paragraphs: int = 6) -> Path:
    """Write ``notes`` markdown notes into ``folder`` (created) and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(notes):
        subject = _SUBJECTS[i % len(_SUBJECTS)]
        theme = _THEMES[i % len(_THEMES)]
        body = "\n\n".join(_paragraph(subject, theme, i, j) for j in range(paragraphs))
        title = f"Asyncio {subject[0]} and {subject[1]}: {theme}"
        (folder / f"note-{i:02d}.md").write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    return folder
