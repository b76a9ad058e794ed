"""Markers are read as a reader sees them (issue 31, point 4).

"[Disputed]" takes a claim out of the open unsupported ones, so it counts only where a reader of
the rendered report sees it: not in an HTML comment, inline code, a link (its label or target), a
tag or a link definition. The spoofs the attack used (``<!-- [Disputed] -->``,
``[[disputed]](#x)``, `` `[DISPUTED]` ``) each took an unsupported claim off the count in 0.3.0.
"""

from __future__ import annotations

import pytest

from research_agent.claims import ClaimCheck, ClaimVerdict, cited_claims, is_disputed, mark_unsupported
from research_agent.review.review import review_draft
from research_agent.run.claims.on_report import ReportClaims

SPOOFS = [
    "<!-- [Disputed] -->",
    "[[disputed]](#x)",
    "`[DISPUTED]`",
    "[see [Disputed] notes](https://example.org/n)",
    "<span title='[Disputed]'></span>",
    '<abbr title="x [Disputed]">',
    "![[Disputed]](https://example.org/x.png)",
]
SHOWN = ["[Disputed]", "[DISPUTED]", "**[Disputed]**", "_[disputed]_", "[Disputed] <!-- a note -->"]
CLAIM = "Plain VACUUM returns all space to the operating system [1]."
SOURCE = "Plain VACUUM marks the space as reusable within the table file."


@pytest.mark.parametrize("spoof", SPOOFS)
def test_a_marker_no_reader_sees_does_not_dispute_the_sentence(spoof: str) -> None:
    assert not is_disputed(f"{CLAIM} {spoof}")
    assert not is_disputed(f"{spoof} {CLAIM}")
    (claim,) = cited_claims(f"{spoof} {CLAIM}\n", [SOURCE])
    assert not claim.disputed and "disputed" not in claim.sentence.lower()  # no hidden word reaches the model


@pytest.mark.parametrize("shown", SHOWN)
def test_a_marker_a_reader_sees_disputes_it(shown: str) -> None:
    assert is_disputed(f"{shown} {CLAIM}")
    (claim,) = cited_claims(f"{shown} {CLAIM}\n", [SOURCE])
    assert claim.disputed


def test_a_comment_across_lines_hides_its_marker_too() -> None:
    text = f"<!-- a note\n[Disputed] {CLAIM}\n-->\n\nVisible text [1].\n"
    claims = cited_claims(text, [SOURCE])
    assert [c.disputed for c in claims] == [False, False]


def test_seen_text_keeps_offsets_and_blanks_only_what_is_unseen() -> None:
    from research_agent.text.masking import seen_text  # new in 0.4: imported here, so the rest runs on 0.3.0

    text = "A <!-- c --> b `code` [label](https://x.org) <i>it</i> [1] www.example.org end."
    seen = seen_text(text)
    assert len(seen) == len(text)
    assert seen.split() == ["A", "b", "it", "[1]", "end."]


def _verdict(number: int, sentence: str) -> ClaimVerdict:
    return ClaimVerdict(number, sentence, (1,), "unsupported", reason="the passage does not say so")


def test_the_open_unsupported_count_ignores_spoofed_markers() -> None:
    sentences = [f"{spoof} {CLAIM}" for spoof in SPOOFS[:3]] + [f"[Disputed] {CLAIM}"]
    verdicts = tuple(_verdict(n, s) for n, s in enumerate(sentences, start=1))
    check = ClaimCheck(cited=4, verdicts=verdicts)
    claims = ReportClaims("run", check)
    assert len(claims.open_unsupported) == 3  # 0.3.0: 0
    assert "(1 of them marked [Disputed])" in claims.summary()


@pytest.mark.parametrize("spoof", SPOOFS[:3])
def test_the_pass_after_revision_marks_a_claim_whose_only_marker_is_hidden(spoof: str) -> None:
    line = f"{spoof} {CLAIM}"
    marked = mark_unsupported([line], [_verdict(1, CLAIM)])
    assert marked.marked == 1 and marked.outcomes == {1: "disputed"}
    assert is_disputed(marked.texts[0]) and spoof in marked.texts[0]


@pytest.mark.parametrize("spoof", SPOOFS[:3])
def test_the_lint_reads_an_uncited_figure_beside_a_hidden_marker_as_a_claim(spoof: str) -> None:
    body = (
        "# Report\n\n## Findings\n\n"
        f"Nightly VACUUM FULL shrinks tables by 73% on busy systems. {spoof}\n\n"
        "Plain VACUUM marks space as reusable [1].\n\n## Sources\n\n1. Manual \u2014 https://example.org/m\n"
    )
    issues = [i for i in review_draft(body, target_words=None).issues if i.type == "unsupported_claim"]
    assert issues and "73%" in issues[0].matched
    shown = body.replace(spoof, "[Disputed]")
    assert not [i for i in review_draft(shown, target_words=None).issues if i.type == "unsupported_claim"]
