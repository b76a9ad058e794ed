"""The claim check's parts without a model: which sentences, their passages, quotes, marks, counts."""

from __future__ import annotations

import pytest

from research_agent.claims import (
    DISPUTED,
    SIMILAR,
    CitedClaim,
    ClaimCheck,
    ClaimVerdict,
    choose_claims,
    cited_claims,
    mark_unsupported,
    pack,
    quote_found,
    read_verdicts,
    similarity,
)
from research_agent.measures import ClaimFacts

VACUUM = (
    "PostgreSQL VACUUM reclaims storage occupied by dead tuples left behind by updates and deletes. "
    "Plain VACUUM marks the space as reusable within the table file without returning it to the operating system. "
    "VACUUM FULL rewrites the whole table into a new file and returns the freed space to the operating system."
)
MVCC = (
    "PostgreSQL uses multiversion concurrency control, so an update writes a new row version and leaves a dead tuple. "
    "Long running transactions can prevent VACUUM from reclaiming space because old row versions stay visible."
)
FILLER = " ".join(f"Unrelated sentence number {i} talks about other matters entirely." for i in range(60))
DRAFT = """## Summary

VACUUM reclaims storage occupied by dead tuples [1]. Plain VACUUM returns all space to the operating system [1].

- Long running transactions can prevent VACUUM from reclaiming space [2].
- [Disputed] VACUUM FULL compresses indexes nightly [1].

An uncited sentence stays out. Updates leave dead tuples behind [1, 2].
"""


def claim(number: int, *, weak: bool = False, words: int = 40, sources: tuple[int, ...] = (1,)) -> CitedClaim:
    passage = " ".join([f"word{number}"] * words)  # a passage of its own: none is shown twice
    return CitedClaim(number, f"Sentence {number}.", sources, tuple((n, passage) for n in sources), weak=weak)


def test_every_cited_sentence_is_paired_with_a_window_of_at_most_120_words_of_each_source():
    claims = cited_claims(DRAFT, [FILLER + " " + VACUUM + " " + FILLER, MVCC])
    assert [c.sentence for c in claims] == [
        "VACUUM reclaims storage occupied by dead tuples.",
        "Plain VACUUM returns all space to the operating system.",
        "Long running transactions can prevent VACUUM from reclaiming space.",
        "[Disputed] VACUUM FULL compresses indexes nightly.",
        "Updates leave dead tuples behind.",
    ]
    assert [c.number for c in claims] == [1, 2, 3, 4, 5]
    assert [c.sources for c in claims] == [(1,), (1,), (2,), (1,), (1, 2)]
    assert all(len(text.split()) <= 120 for c in claims for _, text in c.passages)
    assert "Plain VACUUM marks the space as reusable" in dict(claims[1].passages)[1]
    assert [c.disputed for c in claims] == [False, False, False, True, False]
    # the lexical check (the marker is no word of the claim): the passage says plain VACUUM does *not*
    # return space, says nothing of compressing indexes, and the second source lacks most of the last claim
    assert [c.weak for c in claims] == [False, True, False, True, True]


def test_a_sentence_citing_no_source_with_text_is_cited_but_cannot_be_checked():
    (only,) = cited_claims("A claim [3]. Another [1].", ["", "text"])[:1]
    assert only.sources == (3,) and not only.checkable


def test_quick_checks_none_deep_all_standard_the_weak_ones_and_a_seeded_sample():
    claims = [claim(n, weak=n in (2, 7)) for n in range(1, 11)]
    assert choose_claims(claims, policy="none", seed="run", budget=10_000) == ()
    assert choose_claims(claims, policy="all", seed="run", budget=10) == tuple(claims)
    budget = claims[0].tokens * 5
    chosen = choose_claims(claims, policy="sample", seed="run-a", budget=budget)
    assert [c.number for c in chosen[:2]] == [2, 7]  # every weak one, first
    assert len(chosen) == 5 and sum(c.tokens for c in chosen) <= budget
    assert choose_claims(claims, policy="sample", seed="run-a", budget=budget) == chosen  # seeded by the run id
    samples = {tuple(c.number for c in choose_claims(claims, policy="sample", seed=f"run-{i}", budget=budget))
               for i in range(20)}  # fmt: skip
    assert len(samples) > 1
    over = choose_claims(claims, policy="sample", seed="x", budget=1)  # weak ones even over the budget
    assert [c.number for c in over] == [2, 7]


def test_a_list_over_the_budget_is_split_across_the_slots_and_one_slot_caps_it():
    claims = [claim(n) for n in range(1, 8)]
    size = claims[0].tokens
    calls, left = pack(claims, budget=size * 3, slots=4)
    assert [[c.number for c in call] for call in calls] == [[1, 2, 3], [4, 5, 6], [7]] and left == 0
    calls, left = pack(claims, budget=size * 3, slots=1)
    assert [[c.number for c in call] for call in calls] == [[1, 2, 3]] and left == 4
    wanted_first = [claims[5], claims[0], claims[3]]
    calls, left = pack(wanted_first, budget=size * 2, slots=1)
    assert [[c.number for c in call] for call in calls] == [[1, 6]] and left == 1  # in draft order


@pytest.mark.parametrize(
    "quote",
    ["marks the space as reusable", "MARKS  the\nspace as reusable", "\u201cmarks the space as reusable\u201d",
     "Plain VACUUM marks the space \u2026 the operating system", "plain vacuum marks the space ... returning it",
     "reusable", "dead tuples"],
)  # fmt: skip
def test_a_quote_is_found_whatever_its_whitespace_quote_marks_case_and_ellipses(quote):
    assert quote_found(quote, VACUUM)


@pytest.mark.parametrize(
    "quote",
    ["marks the space as free", "", "..", "the operating system ... Plain VACUUM",
     "tab", "a \u2026 e \u2026 i", "Plain VACUUM marks \u2026 the operating system", "reclaims ... dead ... table",
     "mark the space", "VACUUM FULL rewrites table"],
)  # fmt: skip
def test_a_quote_that_is_not_in_the_passage_is_not_found(quote):
    assert not quote_found(quote, VACUUM)


def test_verdicts_are_read_and_a_quote_not_in_the_passage_makes_supported_partial():
    claims = cited_claims(DRAFT, [VACUUM, MVCC])
    items = [
        {"n": 1, "verdict": "supported", "quote": "reclaims storage occupied by dead tuples", "reason": "stated"},
        {"n": 2, "verdict": "supported", "quote": "returns all space to the operating system", "reason": "said"},
        {"n": 3, "verdict": "partial", "quote": "", "reason": "only partly"},
        {"n": 4, "verdict": "unsupported", "quote": "", "reason": "not instant"},
        {"n": 4, "verdict": "supported", "quote": "VACUUM FULL rewrites", "reason": "a second answer"},
        {"n": 99, "verdict": "supported", "quote": "x", "reason": "not asked"},
        {"n": 5, "verdict": "maybe", "quote": "", "reason": "no such verdict"},
        {"n": 5, "verdict": "supported", "quote": "leaves a dead tuple", "reason": "in the second source"},
    ]
    verdicts = {v.number: v for v in read_verdicts(items, claims)}
    assert {n: v.verdict for n, v in verdicts.items()} == {
        1: "supported", 2: "partial", 3: "partial", 4: "unsupported", 5: "supported",
    }  # fmt: skip
    assert verdicts[2].note == "the quote is not in the passage"
    assert verdicts[3].note == "no quote from the passage was given"
    assert verdicts[5].source == 2  # the source whose passage holds the quote
    assert verdicts[1].quote == "reclaims storage occupied by dead tuples" and verdicts[1].source == 1


def unsupported(number: int, sentence: str, sources: tuple[int, ...] = (1,)) -> ClaimVerdict:
    return ClaimVerdict(number, sentence, sources, "unsupported", reason="not stated")


def test_a_slightly_reworded_claim_that_keeps_its_citation_is_marked_disputed():
    before = "Plain VACUUM returns all space to the operating system at once."
    after = "Plain VACUUM returns all the space to the operating system at once"
    assert similarity(before, after) >= SIMILAR
    texts = [f"Intro sentence here [2]. {after} [1]. Closing words [2].", f"- {after} [1, 3]"]
    marked = mark_unsupported(texts, [unsupported(2, before)])
    assert marked.texts == (
        f"Intro sentence here [2]. {DISPUTED} {after} [1]. Closing words [2].",
        f"- {DISPUTED} {after} [1, 3]",
    )
    assert marked.marked == 2 and marked.outcomes == {2: "disputed"}


def test_a_claim_already_marked_is_left_as_it_is_and_counts_as_disputed():
    text = "[Disputed] Plain VACUUM returns all space to the operating system [1], the sources disagree."
    marked = mark_unsupported([text], [unsupported(1, "Plain VACUUM returns all space to the operating system.")])
    assert marked.texts == (text,) and marked.marked == 0 and marked.outcomes == {1: "disputed"}


def test_a_claim_removed_or_recited_elsewhere_is_not_marked():
    claims = [unsupported(1, "Plain VACUUM returns all space to the operating system."),
              unsupported(2, "VACUUM FULL is instant on every table.")]  # fmt: skip
    texts = ["Plain VACUUM returns all space to the operating system [4].", "Something else entirely [1]."]
    marked = mark_unsupported(texts, claims)
    assert marked.texts == tuple(texts) and marked.marked == 0
    assert marked.outcomes == {1: "recited", 2: "removed"}


def test_an_unlike_sentence_citing_the_same_source_is_not_marked():
    text = "Plain VACUUM keeps the file size while freeing space inside it [1]."
    marked = mark_unsupported([text], [unsupported(1, "Plain VACUUM returns all space to the operating system.")])
    assert marked.texts == (text,) and marked.outcomes == {1: "removed"}


def verdict(number: int, kind: str, outcome: str = "") -> ClaimVerdict:
    return ClaimVerdict(number, f"Sentence {number}.", (1,), kind, outcome=outcome)


def test_the_limitations_line_and_the_facts_count_every_verdict():
    check = ClaimCheck(
        52,
        (*(verdict(n, "supported") for n in range(1, 37)), *(verdict(n, "partial") for n in range(37, 40)),
         verdict(40, "unsupported", "disputed"), verdict(41, "unsupported", "disputed"),
         *(verdict(n, "unsupported", "removed") for n in range(42, 46))),
    )  # fmt: skip
    assert check.limitations_line() == (
        "Claims checked against their sources: 45 of 52 cited sentences; 36 supported, 3 partly, "
        "2 marked disputed, 4 removed in revision."
    )
    assert check.facts() == ClaimFacts(45, 36, 3, 6, 0.13)
    assert ClaimCheck.from_dict(check.as_dict()) == check


def test_a_check_that_did_not_run_says_why_and_has_no_share():
    check = ClaimCheck.not_run("the skeptic gave no usable answer (timed out)", 12)
    assert check.limitations_line() == "Claims not checked: the skeptic gave no usable answer (timed out)."
    assert check.facts() == ClaimFacts(0, 0, 0, 0, None)
