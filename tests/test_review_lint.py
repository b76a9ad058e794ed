"""Deterministic lint: every check fires on a real problem and stays quiet on its near-miss."""

from __future__ import annotations

import pytest

from research_agent.config import MODES
from research_agent.review.checks.text import prose_word_count
from research_agent.review.issues import Issue
from research_agent.review.lint import lint_report
from research_agent.review.markdown import parse_front_matter, parse_report
from research_agent.review.rules import Rule
from tests.support.review_reports import CLEAN_BODY, FRONT, SOURCES, extra, line_of, long_body, report


def kinds(issues: list[Issue]) -> list[tuple[str, str, int | None]]:
    return [(i.type, i.severity, i.line) for i in issues]


def test_clean_report_has_no_issues() -> None:
    assert lint_report(report(CLEAN_BODY), target_words=None) == []


def test_every_issue_is_from_lint_with_full_confidence() -> None:
    md = extra("TODO write more. Sales rose 40% in 2022.")
    issues = lint_report(md, target_words=None)
    assert issues and all(i.origin == "lint" and i.confidence == 1.0 for i in issues)


# --- citations to sources that do not exist --------------------------------------------


def test_citation_to_missing_source_is_critical_with_its_line() -> None:
    md = extra("Heat pumps last long [4].")
    issues = lint_report(md, target_words=None)
    assert kinds(issues) == [("missing_source", "critical", line_of(md, "[4]"))]
    assert issues[0].matched == "[4]"
    assert "source 4" in issues[0].reason and "1-3" in issues[0].reason


def test_ranges_and_lists_of_valid_numbers_are_fine_but_a_range_past_the_end_is_not() -> None:
    ok = extra("All sources agree on this [1–3] and [1, 2].")
    assert lint_report(ok, target_words=None) == []
    bad = extra("All sources agree on this [2-4].")
    assert [i.reason.split(",")[0] for i in lint_report(bad, target_words=None)] == ["cites source 4"]


def test_markdown_links_and_code_are_not_citations() -> None:
    md = report(
        CLEAN_BODY + "\n## Extra\nSee [7](https://example.com) and the array `x[9]` for detail [1].\n"
    )
    assert lint_report(md, target_words=None) == []


def test_draft_without_sources_section_uses_the_given_source_numbers() -> None:
    md = report(CLEAN_BODY, sources="")
    assert lint_report(md, target_words=None, sources=[1, 2, 3]) == []
    issues = lint_report(md, target_words=None, sources=[1, 2])
    assert {i.matched for i in issues} == {"[3]", "[2, 3]", "[1-3]"}
    assert all(i.type == "missing_source" for i in issues)


def test_citations_without_any_sources_list_are_one_critical_issue() -> None:
    issues = lint_report(report(CLEAN_BODY, sources=""), target_words=None)
    assert len(issues) == 1
    assert issues[0].severity == "critical" and "no Sources section" in issues[0].reason


# --- the Sources list against the citations --------------------------------------------


def test_uncited_source_is_a_warning_and_a_duplicate_number_is_critical() -> None:
    sources = SOURCES + "3. Another survey — https://other.org/x\n4. Never used — https://unused.org\n"
    md = report(CLEAN_BODY, sources=sources)
    issues = lint_report(md, target_words=None)
    assert kinds(issues) == [
        ("sources_list", "critical", line_of(md, "Another survey")),
        ("sources_list", "warning", line_of(md, "Never used")),
    ]
    assert "listed twice" in issues[0].reason and "never cited" in issues[1].reason


def test_source_cited_only_through_a_range_counts_as_cited() -> None:
    body = CLEAN_BODY.replace("[3]", "[1]").replace("[2, 3]", "[2]")  # 3 is now cited only by [1-3]
    assert lint_report(report(body), target_words=None) == []


def test_bracketed_source_entries_are_understood() -> None:
    sources = "## References\n[1] One — https://a.org\n[2] Two — https://b.org\n[3] Three — https://c.org\n"
    assert lint_report(report(CLEAN_BODY, sources=sources), target_words=None) == []
    bulleted = (
        "## Sources:\n- [1] One — https://a.org\n- [2]: Two — https://b.org\n* 3. Three — https://c.org\n"
    )
    assert lint_report(report(CLEAN_BODY, sources=bulleted), target_words=None) == []


# --- numeric claims without a citation ---------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "matched"),
    [
        ("Heat pumps cut energy use by 40% in trials.", "cut energy use by 40%"),
        ("The market reached $4.5 billion last year.", "The market reached $4.5 billion"),
        ("About 3 million homes now use one.", "About 3 million"),
        ("They are 3x more efficient than resistance heaters.", "They are 3x"),
        (
            "Bills dropped by twelve percentage points, or 12 percent overall.",
            "twelve percentage points, or 12 percent",
        ),
    ],
)
def test_uncited_percentages_money_and_magnitudes_are_critical(sentence: str, matched: str) -> None:
    md = extra(sentence)
    issues = lint_report(md, target_words=None)
    assert kinds(issues) == [("unsupported_claim", "critical", line_of(md, sentence))]
    assert issues[0].matched == matched


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("Installations tripled in 2022.", "date without a citation"),
        ("The law passed on March 3 after a long debate.", "date without a citation"),
        ("The model was run with Python 3.11 and default settings.", "number without a citation"),
        ("A survey of 250 installers was run.", "number without a citation"),
    ],
)
def test_uncited_years_dates_and_plain_numbers_are_warnings(sentence: str, reason: str) -> None:
    md = extra(sentence)
    issues = lint_report(md, target_words=None)
    assert kinds(issues) == [("unsupported_claim", "warning", line_of(md, sentence))]
    assert issues[0].reason == reason


@pytest.mark.parametrize(
    "text",
    [
        "Heat pumps cut energy use by 40% in trials [1].",
        "Heat pumps cut energy use by 40% in trials.[2]",
        "Heat pumps cut energy use by 40% in trials. [2]",
        "Sales tripled in 2022, according to installers [3].",
        "See Section 12 and Table 14 for the three options.",
        "There are 3 options and 2 caveats to weigh.",
        "COVID-19 slowed installs and CO2 rules sped them up; GPT-4 was not involved.",
        "The 21st century brought better compressors.",
        "The data is at https://example.com/2024/report-40 and in `config==2.31`.",
        "Per the U.S. government, e.g. in the 1990s, studies began; one found 25% savings [1].",
    ],
)
def test_numeric_near_misses_are_not_flagged(text: str) -> None:
    md = extra(text)
    issues = lint_report(md, target_words=None)
    # an address no source has is an issue of its own (issue 45): a warning in running text, never a number
    assert [(i.type, i.severity) for i in issues] == ([("unknown_address", "warning")] if "https://" in text else [])


def test_headings_list_ordinals_front_matter_sources_and_lessons_are_not_prose() -> None:
    body = CLEAN_BODY + (
        "\n## 2. Results for 2024\n1. First, sizing matters [3].\n10. Second, noise matters [3].\n"
    )
    lessons = "\n## Lessons Applied\n- Prefer sources from 2024 with 50% more sites (critiques: a1, b2)\n"
    md = report(body, sources=SOURCES + lessons)
    assert lint_report(md, target_words=None) == []


def test_one_issue_per_sentence_and_the_citation_of_one_sentence_does_not_cover_the_next() -> None:
    md = extra("Sales rose 40% [1]. In 2022 they fell 10% and 5% again.")
    issues = lint_report(md, target_words=None)
    assert [(i.type, i.severity, i.matched) for i in issues] == [
        ("unsupported_claim", "critical", "In 2022 they fell 10%")
    ]


def test_claim_line_is_the_line_of_the_figure_in_a_wrapped_paragraph() -> None:
    md = extra("The trials were long and careful,\nand cut bills by 30% overall.")
    issues = lint_report(md, target_words=None)
    assert kinds(issues) == [("unsupported_claim", "critical", line_of(md, "30%"))]


def test_numbers_in_code_blocks_are_ignored() -> None:
    md = extra("The setup is shown below [1].\n\n```\nratio = 40%\nTODO\n```")
    assert lint_report(md, target_words=None) == []


# --- empty sections -------------------------------------------------------------------------


def test_empty_section_is_critical_at_its_heading() -> None:
    md = report(CLEAN_BODY + "\n## Regional Differences\n\n## Costs\nCosts vary by region [2].\n")
    issues = lint_report(md, target_words=None)
    assert kinds(issues) == [("empty_section", "critical", line_of(md, "## Regional Differences"))]


def test_parent_heading_with_content_in_subsections_is_not_empty() -> None:
    md = report(
        CLEAN_BODY
        + "\n## Costs\n### Upfront\nUpfront costs vary [2].\n### Running\nRunning costs vary [3].\n"
    )
    assert lint_report(md, target_words=None) == []


def test_empty_last_section_before_sources_and_empty_sources_section_fire() -> None:
    md = report(CLEAN_BODY + "\n## Outlook\n", sources="## Sources\n")
    issues = lint_report(md, target_words=None, sources=[1, 2, 3])
    assert [(i.type, i.line) for i in issues if i.type == "empty_section"] == [
        ("empty_section", line_of(md, "## Outlook")),
        ("empty_section", line_of(md, "## Sources")),
    ]
    # an empty Sources list still governs: every citation now points nowhere
    assert {i.type for i in issues} == {"empty_section", "missing_source"}
    assert all("it is empty" in i.reason for i in issues if i.type == "missing_source")


# --- placeholders ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "TODO: add the cost comparison.",
        "Costs are TBD pending data.",
        "Lorem ipsum dolor sit amet.",
        "The figure is [insert figure here].",
        "Savings reach XXX per year.",
        "Prices are {{ price }} today.",
    ],
)
def test_placeholders_are_critical(text: str) -> None:
    md = extra(text)
    issues = [i for i in lint_report(md, target_words=None) if i.type == "placeholder"]
    assert kinds(issues) == [("placeholder", "critical", line_of(md, text))]


@pytest.mark.parametrize(
    "text",
    [
        "A todo list app helps installers track jobs [3].",
        "The XXXL units suit large homes [1].",
        "The schedule is to be decided by regulators [2].",
        "Run `TODO` markers through the checker [3].",
    ],
)
def test_placeholder_near_misses_are_not_flagged(text: str) -> None:
    assert lint_report(extra(text), target_words=None) == []


def test_placeholder_words_in_source_titles_are_not_flagged() -> None:
    sources = SOURCES.replace("Installer survey", "TODO apps for installers")
    assert lint_report(report(CLEAN_BODY, sources=sources), target_words=None) == []


# --- leaked prompt text -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Costs vary [2]. <<<END DATA>>>",
        "<<<DATA source 3>>> Costs vary [2].",
        "<|im_start|>assistant Costs vary [2].",
        "You are a research assistant. Costs vary [2].",
        "[system]",
        "<think>the user wants costs</think> Costs vary [2].",
    ],
)
def test_leaked_prompt_text_is_critical(text: str) -> None:
    md = extra(text)
    issues = lint_report(md, target_words=None)
    assert kinds(issues) == [("prompt_leak", "critical", line_of(md, text))]


@pytest.mark.parametrize(
    "text",
    [
        "If you are a researcher, the data set is open [1].",
        "The system prompt of a heat pump controller is its display [3].",
        "Markers such as `<<<END DATA>>>` appear in logs [2].",
    ],
)
def test_leak_near_misses_are_not_flagged(text: str) -> None:
    assert lint_report(extra(text), target_words=None) == []


# --- duplicated paragraphs ---------------------------------------------------------------------------

PARA = "Installers say that careful sizing and good insulation matter more than the brand of the unit [3]."


def test_exact_duplicate_paragraph_is_critical_at_the_second_copy() -> None:
    other = "Installers add that cold snaps expose undersized units within a single winter season [3]."
    md = extra(f"{PARA}\n\n## More\n{other}\n\n{PARA.replace('[3]', '[2]')}")
    issues = lint_report(md, target_words=None)
    first, second = (n for n, line in enumerate(md.split("\n"), 1) if line.startswith("Installers say"))
    assert kinds(issues) == [("duplicate_paragraph", "critical", second)]
    assert issues[0].reason == f"repeats the paragraph at line {first}"


def test_near_duplicate_paragraph_is_a_warning() -> None:
    near = PARA.replace("careful", "correct")
    md = extra(f"{PARA}\n\n{near}")
    issues = lint_report(md, target_words=None)
    assert [(i.type, i.severity, i.reason.split(" the")[0]) for i in issues] == [
        ("duplicate_paragraph", "warning", "nearly repeats")
    ]


def test_short_repeats_are_critical_but_related_paragraphs_and_table_cells_are_not() -> None:
    other = "Installers add that cold snaps expose undersized units within a single winter season [3]."
    table = "| Unit | Works [1] |\n|---|---|\n| A | yes |\n| B | yes |\n"
    md = report(CLEAN_BODY + f"\n## Extra\n- Sizing [3].\n- Sizing [2].\n\n{PARA}\n\n{other}\n\n{table}")
    assert kinds(lint_report(md, target_words=None)) == [("duplicate_paragraph", "critical", line_of(md, "- Sizing [2]"))]


def test_a_repeated_section_is_one_critical_issue_at_its_heading() -> None:
    body = f"{PARA}\n\nA second paragraph on sizing and insulation [2]."
    md = report(CLEAN_BODY + f"\n## Sizing\n{body}\n\n## Sizing again\n{body}\n\n## Sizing once more\n{body}\n")
    issues = lint_report(md, target_words=None)
    first = line_of(md, "## Sizing")
    assert kinds(issues) == [
        ("duplicate_section", "critical", line_of(md, "## Sizing again")),
        ("duplicate_section", "critical", line_of(md, "## Sizing once more")),
    ]
    assert {i.reason for i in issues} == {f"repeats the section at line {first} word for word"}


# --- length ----------------------------------------------------------------------------------------------


def test_length_far_from_target_is_a_warning_with_the_numbers() -> None:
    md = report(CLEAN_BODY)
    words = prose_word_count(parse_report(md))
    short = lint_report(md, target_words=words * 2 + 10)
    assert kinds(short) == [("length", "warning", None)]
    assert short[0].matched == f"{words} words, target {words * 2 + 10}"
    long = lint_report(md, target_words=words // 2 - 5)
    assert kinds(long) == [("length", "warning", None)] and "over twice" in long[0].reason


def test_length_within_half_to_double_or_without_target_is_fine() -> None:
    md = report(CLEAN_BODY)
    words = prose_word_count(parse_report(md))
    assert lint_report(md, target_words=int(words / 0.6)) == []
    assert lint_report(md, target_words=int(words / 1.9)) == []
    assert lint_report(md, target_words=None) == []


def test_word_count_leaves_out_front_matter_headings_sources_and_citations() -> None:
    md = report("## Summary\nOne two three [1].\n\n- Four five [2, 3].\n")
    assert prose_word_count(parse_report(md)) == 5


# --- custom rules and ordering -----------------------------------------------------------------------------


def test_custom_rule_matches_with_its_severity_line_and_text() -> None:
    rule = Rule(
        "no-hype", r"\brevolutionary\b", "hype word", "say what changed instead", "warning", ("ignorecase",)
    )
    md = extra("A Revolutionary compressor design emerged [1].")
    issues = lint_report(md, target_words=None, rules=[rule])
    assert issues == [
        Issue(
            "rule:no-hype",
            "warning",
            line_of(md, "Revolutionary"),
            "Revolutionary",
            "hype word",
            "say what changed instead",
            "lint",
            1.0,
        )
    ]
    assert lint_report(report(CLEAN_BODY), target_words=None, rules=[rule]) == []


def test_custom_rule_does_not_look_at_front_matter() -> None:
    rule = Rule("no-gpt", r"gpt-4o", "names the model", "remove it", "critical", type="style")
    assert lint_report(report(CLEAN_BODY), target_words=None, rules=[rule]) == []


def test_issues_are_ordered_critical_first_then_by_line() -> None:
    body = CLEAN_BODY + "\n## Extra\nIn 2022 sales fell.\n\nTODO finish.\n\nSales rose 40%.\n"
    md = report(body)
    issues = lint_report(md, target_words=None)
    assert kinds(issues) == [
        ("placeholder", "critical", line_of(md, "TODO finish")),
        ("unsupported_claim", "critical", line_of(md, "Sales rose 40%")),
        ("unsupported_claim", "warning", line_of(md, "In 2022")),
    ]


def test_front_matter_is_parsed_and_bad_front_matter_is_empty() -> None:
    assert parse_front_matter(report(CLEAN_BODY))["mode"] == "standard"
    assert parse_front_matter("---\n: [bad\n---\n# T\n") == {}
    assert parse_front_matter("# No front matter\n") == {}


def test_uncited_negative_number_is_flagged_but_ranges_and_codes_are_read_right() -> None:
    md = extra("Units kept working at -25 °C.")
    assert [i.matched for i in lint_report(md, target_words=None)] == ["Units kept working at -25"]
    md = extra("Most units run 10-20 years [2].")
    assert lint_report(md, target_words=None) == []


def test_third_copy_points_at_the_first_and_many_paragraphs_stay_cheap() -> None:
    md = extra(f"{PARA}\n\n{PARA}\n\n{PARA}")
    issues = lint_report(md, target_words=None)
    first = line_of(md, "Installers say")
    assert [i.reason for i in issues] == [f"repeats the paragraph at line {first}"] * 2
    # 400 paragraphs in 8 patterns that differ only in a number: every paragraph after the
    # first eight nearly repeats one of them, found through the index of shared word triples.
    vocab = ["heat", "pump", "grid", "cost", "home", "winter", "duct", "noise"]
    paragraphs = [" ".join(vocab[(i * 7 + j * j) % 8] for j in range(30)) + f" {i} [1]." for i in range(400)]
    issues = lint_report(report("\n\n".join(paragraphs)), target_words=None)
    assert sum(i.type == "duplicate_paragraph" for i in issues) == 392


@pytest.mark.parametrize(
    ("markdown", "reasons"),
    [
        ("", ["the report is empty"]),
        ("  \n\n", ["the report is empty"]),
        (FRONT, ["the report is empty"]),
        ("hello", ["the report has no sections", "the report has no Sources list"]),
        ("# Title\n\n## Intro\n", ["the report has no body text", "the report has no Sources list"]),
        ("## Findings\nHeat pumps work well in most homes.\n", ["the report has no Sources list"]),
        ("Pumps work [1].\n\n## Sources\n1. A study — https://example.com\n", ["the report has no sections"]),
    ],
)
def test_an_empty_or_unstructured_file_is_no_report(markdown: str, reasons: list[str]) -> None:
    issues = [i for i in lint_report(markdown, target_words=None) if i.type == "structure"]
    assert [i.reason for i in issues] == reasons
    assert all(i.severity == "critical" for i in issues)


def test_a_structured_report_or_a_draft_with_given_sources_has_no_structure_issue() -> None:
    assert lint_report(report(CLEAN_BODY), target_words=None) == []
    draft = "# Pumps\n\n## Findings\nHeat pumps work well in most homes [1].\n"
    assert lint_report(draft, target_words=None, sources=[1]) == []
    # citations without a Sources list are one issue, not two
    assert [i.type for i in lint_report(draft, target_words=None)] == ["missing_source"]


def test_the_reports_own_viability_scores_are_not_uncited_numbers() -> None:
    body = CLEAN_BODY.replace(
        "## Limitations & Gaps\n",
        "Viability of the answer from these sources: 82/100.\n\n## Limitations & Gaps\n"
        "- The skeptic rated viability 30/100, below the threshold of 51, after 3 plan(s): treat it as tentative.\n",
    )
    assert lint_report(report(body), target_words=None) == []
    assert [i.matched for i in lint_report(report(body + "\n## Extra\nThe plant scored 82/100.\n"), target_words=None)] == [
        "The plant scored 82"
    ]


def test_sources_examined_is_a_sources_section_not_prose() -> None:
    examined = "## Sources Examined\n- Sales rose 40% \\[3\\] — https://x.org (relevance 2/5)\n"
    front = FRONT.replace("full_report", "no_new_findings")
    md = report("## Summary\nNothing relevant was found.\n", sources=examined, front=front)
    doc = parse_report(md)
    assert doc.sources_heading is not None and doc.sources_heading.text == "Sources Examined"
    assert lint_report(md, target_words=None) == []


@pytest.mark.parametrize(
    "reason",
    [
        "only 0 source(s) could be found and scored; at least 2 needed",
        "16 source(s) scored but only 0 reached relevance 3; at least 1 needed",
        "3 relevant source(s) from 1 site(s); a full report needs 4 from 2",
    ],
)
def test_the_short_reports_own_gate_counts_are_not_uncited_numbers(reason: str) -> None:
    from research_agent.run.report import ReportMeta, render_insufficient

    meta = ReportMeta("How do heat pumps work?", "standard", "2026-11-22", "m", "no_new_findings")
    markdown = render_insufficient(meta=meta, reason=reason, sub_queries=["heat pumps"], examined=[])
    assert [i.type for i in lint_report(markdown, target_words=None)] == []


# --- near copies that loop (issue 32 point 4) ----------------------------------------------------

NEAR = PARA.replace("careful sizing", "careful unit sizing")  # 90% of the words in order


def test_exact_copies_of_a_near_copy_are_repeats_of_one_paragraph_and_all_critical() -> None:
    # one paragraph, then 12 exact copies of a 90%-similar variant: approved before, a loop now
    body = long_body(MODES["standard"].target_words) + "\n## Loop\n" + "\n\n".join([PARA] + [NEAR] * 13) + "\n"
    md = report(body)
    issues = [i for i in lint_report(md, target_words=None) if i.type == "duplicate_paragraph"]
    first = line_of(md, PARA[:30])
    variant = line_of(md, NEAR[:40])
    assert len(issues) == 13 and {i.severity for i in issues} == {"critical"}
    assert issues[0].line == variant
    assert issues[0].reason == f"nearly repeats the paragraph at line {first}; the paragraph at line {first} is repeated 13 times"
    assert {i.reason for i in issues[1:]} == {f"repeats the paragraph at line {variant}"}


def test_near_copies_are_critical_from_the_third_repeat_or_past_a_quarter_of_the_text() -> None:
    long = long_body(MODES["standard"].target_words)
    variants = [PARA.replace("careful", word) for word in ("correct", "proper", "precise")]

    def severities(body: str) -> list[str]:
        return [i.severity for i in lint_report(report(body), target_words=None) if i.type == "duplicate_paragraph"]

    assert severities(long + "\n## Loop\n" + "\n\n".join([PARA, *variants[:2]]) + "\n") == ["warning"] * 2
    assert severities(long + "\n## Loop\n" + "\n\n".join([PARA, *variants]) + "\n") == ["critical"] * 3
    # one near copy, in a short text that it makes more than a quarter of
    assert severities(f"## Summary\n{PARA}\n\n{variants[0]}\n\nHeat pumps need sizing [1].\n") == ["critical"]
