"""The weak-support rule: a citation is weak when fewer than half of its sentence's key terms
occur in the text the writer received for the cited source."""

from __future__ import annotations

from research_agent.measures import CitationFacts, WeakPair
from research_agent.memory.critique.citation_support import citation_support, cited_sentence_count, key_terms

SOURCE = (
    "PostgreSQL VACUUM reclaims storage occupied by dead tuples. Plain VACUUM marks the space as "
    "reusable within the table file. VACUUM FULL rewrites the table and returns 25% of the space, "
    "about 1,200 pages in the 2019 benchmark by Crunchy Data."
)

REPORT = """\
---
title: VACUUM
---
# VACUUM

## Executive Summary

VACUUM reclaims storage held by dead tuples [1]. Autovacuum thresholds in Norway were lowered to 50 percent during 2021 by Oracle [1].

## Key Findings

- VACUUM FULL returned about 1200 pages in the Crunchy Data benchmark of 2019 [1, 2].
- The weather was nice [3].

A sentence without a citation mentions Kubernetes and 1999.

## Adversarial Analysis

- **concern** (evidence): \u201cAutovacuum thresholds in Norway were lowered [1]\u201d. Quoted back, never counted.

## Sources

1. Manual \u2014 https://www.postgresql.org/docs/current/sql-vacuum.html
2. Blog \u2014 https://blog.example.com/vacuum
"""


def test_a_supported_and_an_unsupported_citation() -> None:
    supported = "VACUUM reclaims storage held by dead tuples [1]."
    unsupported = "Autovacuum thresholds in Norway were lowered to 50 percent during 2021 by Oracle [1]."
    texts = {1: SOURCE}
    assert citation_support(supported, texts) == CitationFacts(1, 0, 0.0, ())
    assert citation_support(unsupported, texts) == CitationFacts(1, 1, 1.0, (WeakPair(1, 1),))


def test_key_terms_are_numbers_names_and_rare_words_without_the_citation_markers() -> None:
    terms = key_terms("Field trials by NRCan in Canada show a seasonal COP near 2.5 and 1,200 units [3].")
    # "Field" opens the sentence (not a name); "trials", "show" are short common words; [3] is no number
    assert terms == {"nrcan", "canada", "cop", "season", "2.5", "1200"}
    assert "3" not in key_terms("Dead tuples stay [3].")


def test_a_report_counts_cited_sentences_and_lists_weak_pairs_by_sentence_number() -> None:
    texts = {1: SOURCE, 2: "A blog post about something else entirely.", 3: "Sunny skies."}
    facts = citation_support(REPORT, texts)
    # sentences: 1 supported, 2 weak for [1], 3 fine for [1] but weak for [2], 4 weak for [3];
    # the uncited sentence 5 and the Adversarial Analysis are not judged
    assert facts == CitationFacts(
        sentences=4,
        weakly_supported=3,
        weakly_supported_share=0.75,
        weak_pairs=(WeakPair(2, 1), WeakPair(3, 2), WeakPair(4, 3)),
    )
    assert cited_sentence_count(REPORT) == 4


def test_a_source_whose_text_is_unknown_is_not_judged() -> None:
    facts = citation_support("Autovacuum thresholds in Norway were lowered in 2021 [4].", {1: SOURCE})
    assert facts == CitationFacts(1, 0, 0.0, ())


def test_at_most_five_weak_pairs_are_listed() -> None:
    report = " ".join(f"Zanzibar exported {n} tonnes of cloves [1]." for n in range(1, 9))
    facts = citation_support(report, {1: SOURCE})
    assert (facts.sentences, facts.weakly_supported) == (8, 8)
    assert facts.weak_pairs == tuple(WeakPair(n, 1) for n in range(1, 6))
