"""Debris is critical, stated by structure (issue 23): the issue's own debris and a set in other
shapes are both rejected, each piece by the rule it breaks, while real reports are left alone."""

from __future__ import annotations

import pytest

from research_agent.review.lint import lint_report
from research_agent.review.review import review_draft
from research_agent.text.debris import is_bare_number, is_url, real_words
from tests.support.debris import ISSUE_DEBRIS, OTHER_DEBRIS, Debris
from tests.support.review_reports import CLEAN_BODY, FRONT, line_of, long_body, report

BOTH = pytest.mark.parametrize("debris", [ISSUE_DEBRIS, OTHER_DEBRIS], ids=lambda d: d.name)


def critical_at(markdown: str) -> dict[int | None, set[str]]:
    """Critical issue types by line."""
    found: dict[int | None, set[str]] = {}
    for issue in lint_report(markdown, target_words=1200):
        if issue.severity == "critical":
            found.setdefault(issue.line, set()).add(issue.type)
    return found


@BOTH
def test_every_heading_finding_and_summary_without_real_words_is_critical_at_its_line(debris: Debris) -> None:
    md = debris.markdown()
    found = critical_at(md)
    lines = md.split("\n")
    wordless = [
        n for n, line in enumerate(lines, start=1)
        if line.startswith(("#", "- ")) and not real_words(line.lstrip("#- ")) and not is_url(line.lstrip("# "))
    ]  # fmt: skip
    wordless.append(line_of(md, debris.summary))
    assert len(wordless) >= 6
    for number in wordless:
        assert "debris" in found.get(number, set()), (number, lines[number - 1], found)


@BOTH
def test_a_heading_that_is_a_web_address_is_critical(debris: Debris) -> None:
    md = debris.markdown()
    urls = [h for h, _ in debris.sections if is_url(h)]
    assert urls
    for heading in urls:
        assert "url_heading" in critical_at(md)[line_of(md, f"## {heading}")]


@BOTH
def test_repeated_sections_and_paragraphs_are_critical(debris: Debris) -> None:
    md = debris.markdown()
    found = critical_at(md)
    repeats = {t for types in found.values() for t in types if t.startswith("duplicate_")}
    assert "duplicate_section" in repeats
    first_heading = line_of(md, f"## {debris.sections[0][0]}")
    copies = [n for n, types in found.items() if "duplicate_section" in types]
    assert copies and all(n > first_heading for n in copies)


def test_the_issues_twelve_copies_are_eleven_repeats_and_the_others_short_line_is_caught_too() -> None:
    issue = critical_at(ISSUE_DEBRIS.markdown())
    assert sum("duplicate_section" in types for types in issue.values()) == 11
    other = OTHER_DEBRIS.markdown()
    assert "duplicate_paragraph" in critical_at(other)[line_of(other, "## ftp://") + 2]  # "See above." again


def test_no_citation_at_all_with_sources_kept_is_critical_and_names_the_gate() -> None:
    for debris in (ISSUE_DEBRIS, OTHER_DEBRIS):
        issues = [i for i in lint_report(debris.markdown(), target_words=None) if i.type == "no_citation"]
        assert [(i.severity, i.matched) for i in issues] == [("critical", "gate_decision: full_report")]
    short = ISSUE_DEBRIS.markdown(gate_decision="short_report")
    assert "no_citation" in {i.type for i in lint_report(short, target_words=None)}
    # a report of a run that kept nothing says so instead: no citation is expected of it
    nothing = ISSUE_DEBRIS.markdown(gate_decision="insufficient_data")
    assert "no_citation" not in {i.type for i in lint_report(nothing, target_words=None)}


def test_the_skeptics_citations_do_not_stand_for_the_writers() -> None:
    body = "## Summary\nPumps work in the cold.\n\n## Adversarial Analysis\n- The claim lacks support [1].\n"
    assert "no_citation" in {i.type for i in lint_report(report(body), target_words=None)}


@pytest.mark.parametrize(
    ("front", "limitation", "severity"),
    [
        (FRONT, "", "critical"),
        (FRONT.replace("full_report", "short_report"), "", "warning"),
        (FRONT, "- Short report: 2 relevant source(s) from 1 site(s).", "warning"),
        (FRONT.replace("full_report", "no_new_findings"), "", "warning"),
    ],
)
def test_far_too_short_is_critical_unless_the_report_says_why(front: str, limitation: str, severity: str) -> None:
    md = report(CLEAN_BODY + f"\n## Limitations\n{limitation or 'The sources are few [1].'}\n", front=front)
    (length,) = [i for i in lint_report(md, target_words=1200) if i.type == "length"]
    assert length.severity == severity


def test_the_programs_own_reason_for_a_short_draft_spares_it() -> None:
    md = report(CLEAN_BODY)
    assert [i.severity for i in lint_report(md, target_words=1200) if i.type == "length"] == ["critical"]
    cut = lint_report(md, target_words=1200, short_reason="the draft was cut at the token limit")
    assert [i.severity for i in cut if i.type == "length"] == ["warning"]
    # a quarter or more of the target is a warning as before
    assert [i.severity for i in lint_report(md, target_words=120) if i.type == "length"] == ["warning"]


@BOTH
def test_the_debris_report_is_rejected(debris: Debris) -> None:
    review = review_draft(debris.markdown(), target_words=1200)
    assert not review.approved and review.critical_count >= 10


def test_a_paragraph_that_loops_over_the_same_words_is_debris() -> None:
    md = OTHER_DEBRIS.markdown()
    (loop,) = [i for i in lint_report(md, target_words=None) if "over and over" in i.reason]
    assert loop.severity == "critical" and loop.line == line_of(md, "Dead tuples are reclaimed.")
    fine = report(long_body(400) + "\n## Loops\nVACUUM, VACUUM FULL and autovacuum each reclaim space [1].\n")
    assert not [i for i in lint_report(fine, target_words=None) if "over and over" in i.reason]


@pytest.mark.parametrize(
    "heading",
    [
        "Node.js and ASP.NET on one server",
        "Python list[int] annotations",
        "FAQ",
        "概要と結論",
        "Why socket.io reconnects",
        "Section 230 and liability",
        "Q&A with the maintainers of pg_repack",
    ],
)
def test_real_headings_are_not_debris(heading: str) -> None:
    md = report(long_body(400).replace("## Details", f"## {heading}"))
    assert [i for i in lint_report(md, target_words=1200) if i.severity == "critical"] == []


def test_tables_of_figures_and_disputed_claims_are_not_debris() -> None:
    table = "| Setting | Value [1] |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n| 5 | 5 |\n"
    disputed = "Autovacuum cut bloat by 40% in every test. [Disputed]"
    md = report(long_body(400) + f"\n## Figures\n{table}\n{disputed}\n")
    assert [i for i in lint_report(md, target_words=1200) if i.severity == "critical"] == []


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("https://www.postgresql-vacuum-guide.org/reclaim-space", True),
        ("ftp://files.example/guide.txt", True),
        ("www.example.org", True),
        ("docs.python.org", True),
        ("example.com", True),
        ("Example.com", True),
        ("pg-vacuum.example.net/how-to", True),
        ("<https://made.up/x>", True),
        ("[https://made.up/x](https://made.up/x)", True),
        ("Node.js", False),
        ("ASP.NET", False),
        ("socket.io", False),
        ("e.g.", False),
        ("The docs at https://x.org explain it", False),
    ],
)
def test_what_counts_as_a_web_address(text: str, url: bool) -> None:
    assert is_url(text) is url


@pytest.mark.parametrize(("text", "bare"), [("1", True), ("2.", True), ("- 3", True), ("(4)", True), ("42%", True),
                                            ("[1]", True), ("3.2.1", True), ("Step 1", False), ("type", False)])
def test_what_counts_as_a_bare_number(text: str, bare: bool) -> None:
    assert is_bare_number(text) is bare
