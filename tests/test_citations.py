"""One renumbering for a whole report: first appearance order, invented numbers removed."""

from __future__ import annotations

from research_agent.stages.writing.draft_text import ReportDraft
from research_agent.text.citations import (
    REMOVED_MARK,
    find_citations,
    normalize_citations,
    renumber,
    strip_citations,
)


def test_numbers_follow_first_appearance_across_all_texts_and_uncited_sources_get_none() -> None:
    result = renumber(["B [5] and A [2].", "Again [5, 2]; also [3-4]."], 6)
    assert result.texts == ("B [1] and A [2].", "Again [1, 2]; also [3, 4].")
    assert result.order == (5, 2, 3, 4) and result.removed == 0


def test_an_invented_number_is_removed_and_marked_only_when_no_valid_citation_is_left() -> None:
    result = renumber(["One [1][99]. Two [99]. Three [1, 99] and more [98]. Four [0]."], 3)
    assert result.texts == (f"One [1]. Two {REMOVED_MARK}. Three [1] and more. Four {REMOVED_MARK}.",)
    assert result.removed == 5
    (text,) = renumber(["Lost [99] here and [98] there."], 3).texts
    assert text == f"Lost here and {REMOVED_MARK} there."  # one mark per sentence, never a number


def test_bracket_ranges_and_plain_mentions_of_sources_go_through_the_map() -> None:
    result = renumber(["Cited [7].", "Quoted [3]-[6]; source 9 and sources 7 and 8 disagree; open source 20 years."], 12)
    assert result.texts[1] == "Quoted [2, 3, 4, 5]; source [6] and sources [1, 7] disagree; open source 20 years."
    assert result.order == (7, 3, 4, 5, 6, 9, 8)


def test_a_draft_reads_its_plain_mentions_as_the_report_will_print_them() -> None:
    text = "The source 2 says so; sources 1 and 3 agree; source 9 is no source here.\n```\nsource 1\n```"
    once = normalize_citations(text, 3)
    assert once == "The source [2] says so; sources [1, 3] agree; source 9 is no source here.\n```\nsource 1\n```"
    assert normalize_citations(once, 3) == once and normalize_citations("Quoted [3]-[6].", 6) == "Quoted [3-6]."
    draft = ReportDraft("Per source 1, yes.", ("Source 2 agrees.",), (("Notes", "See source 3."),), ("Source 4 is old.",))
    cited = draft.citing(4)
    assert cited.texts == ("Per source [1], yes.", "Source [2] agrees.", "See source [3].")
    assert cited.limitations == ("Source [4] is old.",) and cited.citing(4) is cited


def test_code_links_and_urls_are_not_citations_and_are_left_alone() -> None:
    text = "Use `arr[99]` and [label](https://x.org/[99]) at https://x.org/a[99] [1].\n```\nx = y[99]\n```"
    result = renumber([text], 2)
    assert result.texts == (text,) and result.removed == 0 and result.order == (1,)


def test_headings_lose_their_citations() -> None:
    assert renumber(["### Results [1]\nBody [1]."], 1).texts == ("### Results\nBody [1].",)
    assert strip_citations("Heat pumps [2] [99]") == "Heat pumps"


def test_the_finder_agrees_with_the_lint_syntax() -> None:
    found = find_citations("A [1], B [2, 3], C [4-6], D [7](http://x) `[8]`")
    assert [c.numbers for c in found] == [(1,), (2, 3), (4, 5, 6)]
