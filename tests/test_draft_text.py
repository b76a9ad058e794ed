"""The writer answers in markdown: its structure is read by heading names, and a cut answer keeps
what is complete (issue 19, point 1 and 2)."""

from __future__ import annotations

import pytest

from research_agent.stages.draft_text import ReportDraft, complete_part, draft_markdown, read_draft, usable

ANSWER = """# Heat pumps in the cold: a title the writer made up

Heat pumps keep working in cold weather [1].

## KEY FINDINGS:

- Efficiency falls as the outdoor temperature drops [1].
- Cold-climate models hold their output
  down to minus 25 degrees [2].

## How they work

A heat pump moves heat instead of making it [1].

### Defrost cycles

Frost on the outdoor coil is melted every so often [2].

```
# not a heading: code
```

## Limitations and gaps

- Field data is scarce [2].

## Sources

1. Something the writer listed itself
"""


def test_headings_are_matched_by_name_and_the_h1_and_sources_are_left_out() -> None:
    draft = read_draft(ANSWER)
    assert draft.executive_summary == "Heat pumps keep working in cold weather [1]."  # text before the first section
    assert draft.key_findings == (
        "Efficiency falls as the outdoor temperature drops [1].",
        "Cold-climate models hold their output down to minus 25 degrees [2].",
    )
    ((heading, body),) = draft.sections
    assert heading == "How they work"
    assert "**Defrost cycles**" in body and "# not a heading: code" in body  # a sub-heading stays in its section
    assert draft.limitations == ("Field data is scarce [2].",)
    assert "made up" not in repr(draft) and "Something the writer listed" not in repr(draft)
    assert draft.cut == "" and usable(draft)


def test_a_named_summary_section_a_fenced_answer_and_h3_sections() -> None:
    fenced = "```markdown\n### Summary\nVacuum reclaims dead tuples in place [1].\n### Details\nMore [2].\n```"
    draft = read_draft(fenced)
    assert draft.executive_summary == "Vacuum reclaims dead tuples in place [1]."
    assert draft.sections == (("Details", "More [2]."),)


def test_findings_written_as_paragraphs_are_findings_too() -> None:
    draft = read_draft("Summary text here.\n\n## Findings\n\nOne finding [1].\n\nAnother finding [2].\n")
    assert draft.key_findings == ("One finding [1].", "Another finding [2].")


@pytest.mark.parametrize(
    ("arrived", "kept"),
    [
        ("First paragraph [1].\n\nSecond paragraph is cut mid-sen", "First paragraph [1]."),
        ("Intro.\n\n- item one [1]\n- item tw", "Intro.\n\n- item one [1]"),
        ("Para one.\n\n## Limi", "Para one."),
        ("Para one.\n\nPara two, first line\nand its second", "Para one."),
        ("Para one.\n\nPara two ends with a line break\n", "Para one."),  # its paragraph may go on
        ("Para one.\n\nPara two.\n\n", "Para one.\n\nPara two."),
        ("Only a start with no end", ""),
    ],
)
def test_an_answer_cut_short_keeps_its_complete_paragraphs_and_items(arrived: str, kept: str) -> None:
    assert complete_part(arrived) == kept


def test_a_draft_needs_a_real_paragraph_to_be_usable() -> None:
    assert not usable(read_draft(""))
    assert not usable(read_draft("# Title\n\n## Summary\n\nToo short.\n\n## Limitations\n\n- only gaps are listed here today"))
    assert usable(read_draft("## Summary\n\nVacuum reclaims the space of dead tuples [1]."))


def test_a_draft_written_back_reads_the_same() -> None:
    draft = ReportDraft("Summary [1].", ("One [1].", "Two [2]."), (("Body", "Para [1].\n\nMore [2]."),), ("Gap.",))
    assert read_draft(draft_markdown(draft)) == draft


def test_the_prompts_framing_echoed_back_is_dropped():
    # Seen from SmolLM2 on a real llama.cpp server: the writer copied a source's header line and
    # a data delimiter into its summary. Both are the tool's own text, never the writer's.
    answer = (
        "The event loop runs one callback at a time [1].\n"
        "[1] Policies — Python 3.11.2 documentation — /tmp/corpus/asyncio-policy.html\n"
        "<<<DATA source [2]>>\n\n"
        "## Key Findings\n\n"
        "- Tasks wrap coroutines and are scheduled on the loop [2].\n"
        "- [2] Transports — docs — https://docs.python.org/3/library/asyncio.html (search snippet only, page not read)\n"
        "- [3] says so — the path /etc/hosts is prose here, not a header line\n"
        "<<<END DATA>>>\n"
    )
    draft = read_draft(answer)
    assert draft.executive_summary == "The event loop runs one callback at a time [1]."
    assert draft.key_findings == (
        "Tasks wrap coroutines and are scheduled on the loop [2].",
        "[3] says so — the path /etc/hosts is prose here, not a header line",
    )


def test_an_echo_of_the_prompts_own_instructions_is_dropped() -> None:
    # Seen from SmolLM2 on a real llama.cpp server (issue 32): the prompt's last line, reworded,
    # became a Limitations bullet. Lines that only resemble an instruction stay.
    answer = (
        "The event loop runs one callback at a time [1].\n\n"
        "## Limitations\n\n"
        "- Writing no title and no list of sources: the report adds both.\n"
        "- Cite every factual claim with the number of its source in square brackets.\n"
        "- No source compares the loop with threads, and the report adds nothing on that.\n"
        "- Where the sources disagree on cancellation, the report says so [1, 2].\n"
    )
    draft = read_draft(answer)
    assert draft.limitations == (
        "No source compares the loop with threads, and the report adds nothing on that.",
        "Where the sources disagree on cancellation, the report says so [1, 2].",
    )
