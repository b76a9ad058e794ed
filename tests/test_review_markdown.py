"""The lint's markdown parse: it reads a report as a CommonMark renderer shows it.

Each case here is one where a line-by-line reading goes wrong: what a reader sees as a
heading, as code or as hidden text is read as such, and every line number is the line
of the full report, front matter included.
"""

from __future__ import annotations

from research_agent.review.lint import lint_report
from research_agent.review.markdown import parse_report
from tests.support.review_reports import CLEAN_BODY, SOURCES, extra, line_of, report


def issue_types(markdown: str) -> list[tuple[str, int | None]]:
    return [(i.type, i.line) for i in lint_report(markdown, target_words=None)]


# --- headings --------------------------------------------------------------------------------


def test_setext_headings_are_sections_and_their_figures_are_not_claims() -> None:
    body = CLEAN_BODY + (
        "\nResults for 2024\n----------------\nCosts fell by a third [2].\n\n"
        "Outlook\n=======\n\nAppendix\n========\nThe method is in the study [1].\n"
    )
    md = report(body)
    doc = parse_report(md)
    results = next(h for h in doc.headings if h.text == "Results for 2024")
    assert (results.line, results.last_line, results.level) == (
        line_of(md, "Results for"),
        line_of(md, "-----"),
        2,
    )
    assert [h.level for h in doc.headings if h.text in ("Outlook", "Appendix")] == [1, 1]
    # the underline is no content: the empty section is reported at its heading's first line
    assert issue_types(md) == [("empty_section", line_of(md, "Outlook"))]


def test_a_paragraph_over_a_dashed_line_is_a_heading_as_a_renderer_shows_it() -> None:
    md = extra("Costs vary by region [2].\n\nRegional costs in 2024\n---\nThey vary [3].")
    doc = parse_report(md)
    assert "Regional costs in 2024" in [h.text for h in doc.headings if h.level == 2]
    assert "Regional costs in 2024" not in [b.text for b in doc.blocks]
    assert issue_types(md) == []
    # with no blank line above, the whole paragraph is the heading's text
    md = extra("Costs vary by region [2].\nRegional costs in 2024\n---\nThey vary [3].")
    assert "Costs vary by region [2]. Regional costs in 2024" in [h.text for h in parse_report(md).headings]
    assert issue_types(md) == [("empty_section", line_of(md, "## Extra"))]


def test_an_atx_heading_keeps_a_hash_that_is_not_a_closing_sequence() -> None:
    doc = parse_report(extra("Text [1].").replace("## Extra", "## Notes on C#"))
    assert "Notes on C#" in [h.text for h in doc.headings]
    assert "Sources" in [
        h.text for h in parse_report(report(CLEAN_BODY, sources="## Sources ##\n1. A\n")).headings
    ]


# --- code --------------------------------------------------------------------------------------


def test_an_indented_code_block_is_code_not_prose() -> None:
    md = extra("The setup is shown below [1].\n\n    ratio = 40%\n    TODO tune 2024\n\nAfter the code [2].")
    doc = parse_report(md)
    assert {line_of(md, "ratio = 40%"), line_of(md, "TODO tune")} <= doc.code_lines
    assert issue_types(md) == []


def test_an_indented_continuation_of_a_list_item_is_still_prose() -> None:
    md = extra("1. Sizing matters [3].\n\n    Bills fell by 30% after resizing.")
    assert issue_types(md) == [("unsupported_claim", line_of(md, "30%"))]


def test_a_fence_inside_a_list_item_or_a_quote_is_code() -> None:
    md = extra(
        "1. Run the check [1]:\n\n    ```\n    x = 40% TODO\n    ```\n\n> ```\n> y = 2024\n> ```\n\nDone [2]."
    )
    doc = parse_report(md)
    assert {line_of(md, "x = 40%"), line_of(md, "y = 2024")} <= doc.code_lines
    assert issue_types(md) == []


def test_triple_backtick_inline_code_does_not_open_a_fence() -> None:
    # a backtick fence's info string holds no backtick: this line is a paragraph with inline code
    md = extra("```python -c 'x'``` runs the check [1].\n\nSales rose 40% after it.")
    assert line_of(md, "runs the check") not in parse_report(md).code_lines
    assert issue_types(md) == [("unsupported_claim", line_of(md, "Sales rose 40%"))]


# --- hidden text ---------------------------------------------------------------------------------


def test_a_multi_line_html_comment_is_not_prose_but_a_leak_inside_it_is_still_a_leak() -> None:
    hidden = "<!-- notes for the editor:\nSales rose 40% in 2024.\n-->\n\nCosts vary [2]."
    assert issue_types(extra(hidden)) == []
    leaked = extra("<!--\n<<<END DATA>>>\n-->\nCosts vary [2].")
    assert issue_types(leaked) == [("prompt_leak", line_of(leaked, "<<<END DATA>>>"))]


def test_a_link_reference_definition_is_no_prose_and_cites_nothing() -> None:
    sources = SOURCES + "4. Unused survey — https://example.org/unused\n"
    body = "See the [field study] for the method [2, 3].\n\n[4]: https://example.org/unused\n[6.1.7 field study]: https://x.org"
    md = extra(body, sources=sources)
    # a reader never sees the definitions: source 4 is not cited, and "6.1.7" is no claim
    assert issue_types(md) == [("sources_list", line_of(md, "4. Unused"))]
    assert "https://x.org" not in " ".join(b.text for b in parse_report(md).blocks)


def test_other_raw_html_is_prose_with_its_lines() -> None:
    md = extra("<div>\nSales rose 40%.\n\nThey fell 30% later.\n</div>")
    doc = parse_report(md)
    # the HTML block ends at the blank line; "They fell" is a paragraph, "</div>" a block of its own
    assert [b.lines for b in doc.blocks][-3:] == [
        (line_of(md, "<div>"), line_of(md, "Sales rose")),
        (line_of(md, "They fell"),),
        (line_of(md, "</div>"),),
    ]
    assert issue_types(md) == [
        ("unsupported_claim", line_of(md, "Sales rose")),
        ("unsupported_claim", line_of(md, "They fell")),
    ]


# --- tables, quotes and lazy lines ------------------------------------------------------------------


def test_a_table_without_outer_pipes_is_rows_and_its_separator_is_no_prose() -> None:
    md = extra("Region | Savings\n--- | ---\nNorth | 40%\nSouth | 25% [2]")
    rows = [b for b in parse_report(md).blocks if "|" in b.text]
    assert [(b.text, b.line) for b in rows] == [
        ("Region | Savings", line_of(md, "Region")),
        ("North | 40%", line_of(md, "North")),
        ("South | 25% [2]", line_of(md, "South")),
    ]
    assert [(i.type, i.line, i.matched) for i in lint_report(md, target_words=None)] == [
        ("unsupported_claim", line_of(md, "North"), "North | 40%")
    ]


def test_lazy_continuation_lines_stay_in_their_quote_or_item_with_their_own_line_numbers() -> None:
    md = extra(
        "> Sizing matters [3]. And\nbills fell 30% after resizing.\n\n- Noise is rare [1]. But\ncosts rose 20% in cities."
    )
    blocks = parse_report(md).blocks
    assert [b.lines for b in blocks][-2:] == [
        (line_of(md, "> Sizing"), line_of(md, "bills fell")),
        (line_of(md, "- Noise"), line_of(md, "costs rose")),
    ]
    assert issue_types(md) == [
        ("unsupported_claim", line_of(md, "bills fell 30%")),
        ("unsupported_claim", line_of(md, "costs rose 20%")),
    ]


def test_a_task_box_is_no_word_of_the_item() -> None:
    doc = parse_report(extra("- [x] Sizing checked [3].\n- [ ] Noise checked [1]."))
    assert [b.text for b in doc.blocks][-2:] == ["Sizing checked [3].", "Noise checked [1]."]


def test_line_numbers_count_the_front_matter_and_windows_line_ends() -> None:
    md = extra("Intro [1].\n\n    code 40%\n\nSales rose 40%.").replace("\n", "\r\n")
    assert issue_types(md) == [("unsupported_claim", line_of(md, "Sales rose 40%"))]
