"""The claim check's part of a model call: the numbered list, the answer's ``claims`` field, the verdicts.

The list rides in the skeptic's call (:func:`research_agent.stages.skeptic.run_skeptic`
adds :func:`claims_prompt` to its prompt and :func:`with_claims` to its schema). When the
list is over the budget, the rest goes to :func:`check_claims` calls that run beside the
skeptic's, in its round. A call whose answers cannot be used leaves its claims unchecked
and says why; it never ends the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import prompts
from ..claims import VERDICTS, CitedClaim, ClaimVerdict, read_verdicts
from ..claims.select import MAX_CLAIMS_PER_CALL
from ..llm import ChatModel, ChatRequest
from ..text.sanitize import sanitize, wrap_data
from ._fallback import Notify, or_fallback
from ._schema import array, enum, integer, obj, string

__all__ = ["SCHEMA", "SAME_PASSAGE", "ClaimAnswer", "claims_prompt", "claims_schema", "with_claims", "answer_tokens", "check_claims"]

_ANSWER_TOKENS_PER_CLAIM = 90  # a verdict, a short quote and a reason
SAME_PASSAGE = "(the same passage as under ({n}))"


@dataclass(frozen=True)
class ClaimAnswer:
    """What one call said about its claims; ``failed`` says why it said nothing usable ("" when it did)."""

    claims: tuple[CitedClaim, ...]
    verdicts: tuple[ClaimVerdict, ...] = ()
    failed: str = ""


def _item(claim: CitedClaim, shown: dict[tuple[int, str], int]) -> str:
    """A claim and its passages; a passage shown under an earlier claim of the list points there."""
    lines = [f"({claim.number}) {sanitize(claim.sentence, max_chars=600, single_line=True)}"]
    for passage in claim.passages:
        n, text = passage
        if passage in shown:
            lines.append(f"    [{n}] {SAME_PASSAGE.format(n=shown[passage])}")
        else:
            shown[passage] = claim.number
            lines.append(f"    [{n}] {sanitize(text, single_line=True)}")
    return "\n".join(lines)


def claims_prompt(claims: Sequence[CitedClaim]) -> str:
    """The numbered claims, each with its passages (one shown already pointed to, not repeated),
    and what to answer about them ("" for none)."""
    if not claims:
        return ""
    shown: dict[tuple[int, str], int] = {}
    block = wrap_data("cited sentences", "\n".join(_item(c, shown) for c in claims))
    return "\n\n" + prompts.fragment("claim_list", count=len(claims), block=block)


def claims_schema(count: int) -> dict[str, Any]:
    """The answer's ``claims`` field: one verdict per claim asked (at most ``count``)."""
    item = obj(n=integer(), verdict=enum(*VERDICTS), quote=string(300), reason=string(300))
    return array(item, max_items=max(1, count))


# The largest answer a claims call asks for (the skeptic's adds the same field to its own).
SCHEMA = obj(claims=claims_schema(MAX_CLAIMS_PER_CALL))


def with_claims(schema: Mapping[str, Any], count: int) -> dict[str, Any]:
    """``schema`` (an object's) with a required ``claims`` field for ``count`` claims."""
    return {
        **schema,
        "properties": {**schema["properties"], "claims": claims_schema(count)},
        "required": [*schema["required"], "claims"],
    }


def answer_tokens(count: int) -> int:
    """Room the answer needs for ``count`` verdicts."""
    return count * _ANSWER_TOKENS_PER_CLAIM


async def check_claims(
    model: ChatModel, query: str, claims: Sequence[CitedClaim], *, notify: Notify | None = None
) -> ClaimAnswer:
    """Check ``claims`` in one call of their own (stage ``claims``)."""
    claims = tuple(claims)
    prompt = prompts.render("claims", query=sanitize(query, max_chars=2000, single_line=True),
                            claims=claims_prompt(claims).strip())  # fmt: skip
    request = ChatRequest(stage="claims", system=prompt.system, user=prompt.user,
                          schema=obj(claims=claims_schema(len(claims))), temperature=0.0,
                          max_tokens=500 + answer_tokens(len(claims)))  # fmt: skip
    failures: list[str] = []

    def tell(message: str) -> None:
        failures.append(message)
        if notify is not None:
            notify(message)

    outcome = f"{len(claims)} cited sentence(s) not checked"
    response = await or_fallback(model.complete(request), lambda: None, outcome=outcome, notify=tell)
    if response is None:
        return ClaimAnswer(claims, failed=failures[0] if failures else "the check's answer could not be used")
    return ClaimAnswer(claims, read_verdicts(response.data["claims"], claims))
