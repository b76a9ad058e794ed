"""What fits in a model's context window: a prompt and the answer it may write, together.

A server holds a prompt and its answer in one window (llama.cpp's ``--ctx-size``, Ollama's
``num_ctx``, a hosted model's context length). A prompt past it is refused ("Requested tokens
(9467) exceed context window of 8192"); a prompt that leaves too little room gets its answer cut
at the window's end; Ollama silently drops the start of the prompt. :class:`ContextBudget` says
how much room a prompt has beside its answer, in the estimate every stage uses
(:func:`~research_agent.text.passages.estimate_tokens`), scaled by what the server's own count
showed when it refused one. :func:`fit` trims what a prompt is built from until it fits: the
sources' passages first, then the prompt's other long part, then the answer's length.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..text.passages import estimate_tokens

__all__ = ["ContextBudget", "Trim", "fit", "prompt_estimate", "MIN_ANSWER_TOKENS"]

MARGIN = 0.05  # of the window, kept free: the estimate is not the server's tokenizer
TEMPLATE_TOKENS = 64  # the chat template's own tokens around the messages
MAX_SCALE = 4.0
MIN_ANSWER_TOKENS = 256  # an answer with less room than this is not worth asking for


def prompt_estimate(parts: tuple[str, ...] | list[str]) -> int:
    """Estimated tokens of a prompt made of ``parts`` (its messages' texts)."""
    return sum(estimate_tokens(part) + 4 for part in parts)


@dataclass(frozen=True)
class ContextBudget:
    """A context window of ``window`` tokens (prompt and answer together), where it came from
    (``source``: e.g. ``"llama.cpp /props"``, ``"setting context_tokens"``), and ``scale``: the
    server's tokens per estimated token, above 1 once the server counted a prompt higher than
    the estimate did."""

    window: int
    source: str = ""
    scale: float = 1.0

    @property
    def _usable(self) -> float:
        return self.window * (1 - MARGIN) - TEMPLATE_TOKENS

    def prompt_room(self, answer_tokens: int) -> int:
        """Estimated tokens a prompt may take beside an answer of ``answer_tokens``."""
        return max(0, int((self._usable - answer_tokens) / self.scale))

    def answer_room(self, estimated_prompt: int) -> int:
        """Tokens an answer has room for beside a prompt estimated at ``estimated_prompt``."""
        return max(0, int(self._usable - estimated_prompt * self.scale))

    def after_refusal(self, estimated: int, counted: int | None, window: int | None) -> ContextBudget:
        """The budget once the server refused a prompt estimated at ``estimated`` that it counted
        as ``counted`` tokens (None: it did not say), saying its window is ``window`` (None: not
        said): the scale its count shows (never below the one before), else a quarter more."""
        if counted and estimated > 4 * TEMPLATE_TOKENS:  # below that, the chat template's own tokens dominate
            scale = max(self.scale, (counted - TEMPLATE_TOKENS) / estimated * 1.05)  # the server's own count
        else:
            scale = self.scale * 1.25
        return replace(self, window=window or self.window, scale=min(scale, MAX_SCALE))


@dataclass(frozen=True)
class Trim:
    """What a writer's prompt is built with: ``passages`` tokens of each source, ``extra``
    characters of its other long part (revise: the review feedback; 0 when there is none), and
    ``answer``, the answer's ``max_tokens``."""

    passages: int
    extra: int
    answer: int


def fit(build: Callable[[Trim], tuple[str, ...]], start: Trim, budget: ContextBudget | None, floor: Trim) -> Trim:
    """The largest trim from ``start`` down to ``floor`` whose prompt (``build(trim)``, its texts)
    fits ``budget`` beside its answer: passages are cut first, then the extra part, then the
    answer. ``start`` when there is no budget or it fits; the smallest trim when nothing fits
    (the server then says so, and the caller asks again with a tighter budget)."""
    if budget is None:
        return start

    def fits(trim: Trim) -> bool:
        return prompt_estimate(build(trim)) <= budget.prompt_room(trim.answer)

    if fits(start):
        return start
    low, high = floor.passages, start.passages
    if not fits(replace(start, passages=low)):
        trim = replace(start, passages=low)
        while trim.extra > floor.extra:
            trim = replace(trim, extra=max(floor.extra, trim.extra // 2))
            if fits(trim):
                return trim
        room = budget.answer_room(prompt_estimate(build(trim)))
        return replace(trim, answer=max(floor.answer, min(trim.answer, room)))
    while high - low > max(8, low // 16):  # passages: the largest that fits, to within a few tokens
        middle = (low + high) // 2
        low, high = (middle, high) if fits(replace(start, passages=middle)) else (low, middle)
    return replace(start, passages=low)
