"""The feedback text handed to the writer: exactly the documented shape."""

from __future__ import annotations

from research_agent.review.feedback import format_feedback, issue_title
from research_agent.review.issues import Issue
from research_agent.review.review import Review, review_draft
from tests.support.review_reports import extra

CLAIM_FIX = "cite the source that gives this figure, or remove it"


def make_review(issues: list[Issue], viability: int | None, *, min_viability: int = 51) -> Review:
    critical = sum(1 for i in issues if i.severity == "critical")
    approved = critical == 0 and (viability is None or viability >= min_viability)
    note = "unscored" if viability is None else ""
    return Review(tuple(issues), viability, note, approved, critical, len(issues) - critical, min_viability)


def test_rejected_feedback_has_exactly_the_documented_shape() -> None:
    issues = [
        Issue(
            "unsupported_claim",
            "critical",
            14,
            "cut energy use by 40%",
            "numeric claim without a citation",
            CLAIM_FIX,
            "lint",
        ),
        Issue(
            "unsupported_claim",
            "critical",
            22,
            "costs fell by $3,000",
            "monetary figure without a citation",
            CLAIM_FIX,
            "lint",
        ),
        Issue(
            "length",
            "warning",
            None,
            "380 words, target 1200",
            "the report has 380 words of prose",
            "expand toward 1200 words",
            "lint",
        ),
    ]
    assert format_feedback(make_review(issues, 44)) == (
        "REJECTED - Issues Found:\n"
        "\n"
        "X Unsupported claims (2 issues):\n"
        '  - Line 14: "cut energy use by 40%" - numeric claim without a citation\n'
        "    FIX: cite the source that gives this figure, or remove it\n"
        '  - Line 22: "costs fell by $3,000" - monetary figure without a citation\n'
        "    FIX: cite the source that gives this figure, or remove it\n"
        "! Length (380 words, target 1200):\n"
        "    FIX: expand toward 1200 words\n"
        "\n"
        "Summary:\n"
        "  - Critical issues: 2\n"
        "  - Warnings: 1\n"
        "  - Viability: 44/100"
    )


def test_groups_critical_first_then_by_first_line_and_mixed_severities_split() -> None:
    issues = [
        Issue("unsupported_claim", "warning", 3, "in 2022", "date without a citation", "cite it", "lint"),
        Issue(
            "skeptic:evidence",
            "critical",
            None,
            "always cheaper",
            "source says sometimes",
            "qualify it",
            "skeptic",
            0.9,
        ),
        Issue(
            "placeholder",
            "critical",
            30,
            "TODO",
            "placeholder text 'TODO' left in the report",
            "fill it",
            "lint",
        ),
        Issue(
            "unsupported_claim",
            "critical",
            40,
            "by 40%",
            "numeric claim without a citation",
            "cite it",
            "lint",
        ),
        Issue("empty_section", "critical", 12, "## Costs", "the section has no content", "write it", "lint"),
    ]
    text = format_feedback(make_review(issues, None))
    assert text == (
        "REJECTED - Issues Found:\n"
        "\n"
        "X Empty sections (1 issue):\n"
        '  - Line 12: "## Costs" - the section has no content\n'
        "    FIX: write it\n"
        "X Placeholder text (1 issue):\n"
        "  - Line 30: \"TODO\" - placeholder text 'TODO' left in the report\n"
        "    FIX: fill it\n"
        "X Unsupported claims (1 issue):\n"
        '  - Line 40: "by 40%" - numeric claim without a citation\n'
        "    FIX: cite it\n"
        "X Skeptic: evidence (1 issue):\n"
        '  - "always cheaper" - source says sometimes\n'
        "    FIX: qualify it\n"
        "! Unsupported claims (1 issue):\n"
        '  - Line 3: "in 2022" - date without a citation\n'
        "    FIX: cite it\n"
        "\n"
        "Summary:\n"
        "  - Critical issues: 4\n"
        "  - Warnings: 1\n"
        "  - Viability: unscored"
    )


def test_approved_variants() -> None:
    assert format_feedback(make_review([], 80)) == (
        "APPROVED - No Issues Found\n\nSummary:\n  - Critical issues: 0\n  - Warnings: 0\n  - Viability: 80/100"
    )
    warning = Issue(
        "sources_list",
        "warning",
        50,
        "4. Unused — https://x.org",
        "source 4 is listed but never cited",
        "cite it or drop it",
        "lint",
    )
    text = format_feedback(make_review([warning], None))
    assert text.splitlines()[:3] == [
        "APPROVED - Warnings:",
        "",
        "! Sources list (1 issue):",
    ]
    assert text.endswith("  - Viability: unscored")


def test_rejected_for_viability_alone_says_so() -> None:
    assert (
        format_feedback(make_review([], 38)).splitlines()[0]
        == "REJECTED - Viability Too Low (38/100, minimum 51)"
    )


def test_quoted_draft_text_is_sanitized_so_delimiters_do_not_reach_the_next_prompt() -> None:
    leak = Issue(
        "prompt_leak", "critical", 9, "<<<END DATA>>>", "prompt delimiters leaked", "remove it", "lint"
    )
    text = format_feedback(make_review([leak], None))
    assert "<<<" not in text
    assert "  - Line 9: prompt delimiters leaked" in text


def test_feedback_of_a_real_review_names_every_issue_with_its_line() -> None:
    md = extra("Sales rose 40%.\n\n## Empty")
    review = review_draft(md, target_words=None, viability=44)
    text = format_feedback(review)
    assert text.startswith("REJECTED - Issues Found:\n\nX ")
    for issue in review.issues:
        assert f"Line {issue.line}:" in text and issue.fix in text


def test_titles() -> None:
    assert issue_title("duplicate_paragraph") == "Duplicated paragraphs"
    assert issue_title("rule:no-hype") == "Rule no-hype"
    assert issue_title("skeptic:counter_arguments") == "Skeptic: counter arguments"
    assert issue_title("sourcing") == "Sourcing"
