"""Rendering: outside text never becomes live HTML or links, and every report passes its own lint."""

from __future__ import annotations

import re

from research_agent.review.lint import lint_report
from research_agent.review.markdown import parse_report
from research_agent.review.review import review_draft
from research_agent.run.report import ReportMeta, compose_report, render_insufficient
from research_agent.sources import Source
from research_agent.stages.skeptic import SkepticFinding, SkepticReport
from research_agent.stages.writing.synthesize import ReportDraft

CITATION_ISSUES = {"missing_source", "sources_list"}
REMOVED_MARK = "(citation removed)"
HOSTILE_TITLE = "<img src=x onerror=alert(1)> [click](javascript:alert(1)) Heat <b>pumps</b>"


def meta(gate: str = "full_report", query: str = "Do heat pumps work?") -> ReportMeta:
    return ReportMeta(query, "standard", "2026-01-01", "m", gate)


def source(n: int, *, title: str = "", location: str = "") -> Source:
    location = location or f"https://example.com/{n}"
    return Source(f"k{n}", title or f"Source {n}", location, f"site{n}", "text", "ddgs")


def draft(body: str = "Heat pumps work in the cold [1].", **changes) -> ReportDraft:
    data = dict(
        executive_summary="They work [1].",
        key_findings=("They keep working below freezing [1].",),
        sections=(("Evidence", body),),
        limitations=(),
    )
    data.update(changes)
    return ReportDraft(**data)


def render(*args, **kwargs) -> str:
    return compose_report(*args, **kwargs).markdown


def section(markdown: str, heading: str) -> str:
    return markdown.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def live_markup(markdown: str) -> list[str]:
    """HTML tags and links a renderer would act on (code spans and http(s)/file autolinks are inert)."""
    text = re.sub(r"(`+)(?:(?!\1).)+?\1", "", markdown)
    text = re.sub(r"<(?:https?|file)://[^\s<>]*>", "", text)
    found = re.findall(r"<[A-Za-z/!?][^<>]*>?", text)
    found += re.findall(r"(?<!\\)\]\((?!https?://|file://)[^)]*\)?", text)
    found += re.findall(r"(?<!\\)\]\[[^\]]*\]", text)
    return found


def assert_inert(text: str) -> None:
    assert live_markup(text) == []
    lowered = text.lower()
    assert "javascript:" not in lowered and "data:" not in lowered and "vbscript:" not in lowered
    assert not re.search(r"<(?!(?:https?|file)://)[a-z/!?]", lowered), text


# --- Sources ---------------------------------------------------------------------------------


def test_sources_strip_tags_and_links_from_titles_and_write_addresses_as_safe_autolinks(tmp_path) -> None:
    hostile_dir = tmp_path / "<img src=x onerror=alert(1)>"
    sources = [
        source(1, title=HOSTILE_TITLE),
        source(2, location="https://evil.example/a)](javascript:alert(1))"),
        source(3, title="Title `with` *stars* and [3]", location="data:text/html,<script>alert(1)</script>"),
        source(4, location=str(hostile_dir / "notes.md")),
        source(5, location="/home/me/docs/survey_2024.md"),
        source(6, location="javascript:alert(1)"),
        source(7, location="/usr/share/doc/python3.11/html/library/os.html"),
        source(8, location="/home/me/docs/a b#c?.md"),
    ]
    body = "Claims [1]. More [2]. Others [3][4]. Local [5]. Odd [6]. Plain [7]. Spaced [8]."
    md = render(draft(body), sources, meta=meta(), skeptic=None)
    listed = section(md, "Sources")
    assert_inert(listed)
    lines = listed.strip().splitlines()
    assert len(lines) == 8 and all(re.match(rf"{n}\. .+ \u2014 .+", line) for n, line in enumerate(lines, 1))
    assert lines[0].startswith("1. click Heat pumps \u2014 <https://example.com/1>")
    assert lines[1].endswith("\u2014 <https://evil.example/a)](javascript%3Aalert(1))>")
    assert "(address not shown" in lines[2] and "Title \\`with\\` \\*stars\\* and \\[3\\]" in lines[2]
    assert lines[3].endswith("notes.md>") and "<file:///" in lines[3] and "%3Cimg%20src%3Dx" in lines[3]
    assert lines[4] == "5. Source 5 \u2014 <file:///home/me/docs/survey_2024.md>"  # every path is a link alike
    assert "(address not shown" in lines[5]
    assert lines[6] == "7. Source 7 \u2014 <file:///usr/share/doc/python3.11/html/library/os.html>"
    assert lines[7] == "8. Source 8 \u2014 <file:///home/me/docs/a%20b%23c%3F.md>"
    # the lint still reads every entry, and every citation resolves
    assert [e.number for e in parse_report(md).sources] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert not [i for i in lint_report(md, target_words=None) if i.type in CITATION_ISSUES]


def test_skeptic_findings_and_limitations_are_inert_but_keep_their_citations() -> None:
    finding = SkepticFinding(
        "evidence", "critical", "They work [1] <script>alert(1)</script>",
        "see [here](javascript:alert(1)) and <img src=x onerror=alert(1)>", "![x](http://tracker.example/p.png)", 0.9,
    )  # fmt: skip
    md = render(
        draft(), [source(1)], meta=meta(), skeptic=SkepticReport((finding,), 70),
        limitations=["Provider said <iframe src=//evil>: [go](data:text/html,x) [1]"],
    )  # fmt: skip
    for heading in ("Adversarial Analysis", "Limitations & Gaps"):
        assert_inert(section(md, heading))
    assert "\u201cThey work [1] alert(1)\u201d. see here and" in md
    assert "Provider said : go [1]" in md


def test_writer_markdown_keeps_http_links_but_loses_html_images_and_other_schemes() -> None:
    body = (
        "Cold climate units work [1]. <script>alert(1)</script> ![pixel](http://tracker.example/p.png) "
        "[good](https://example.com/page) [bad](javascript:alert(1)) <javascript:alert(1)> <https://example.com/x>\n\n"
        "[ref]: javascript:alert(1)"
    )
    md = render(draft(body), [source(1)], meta=meta(), skeptic=None)
    text = section(md, "Evidence")
    assert "[good](https://example.com/page)" in text and "<https://example.com/x>" in text
    assert "bad" in text and "](javascript" not in text and "pixel" in text and "tracker" not in text
    assert "<script" not in text and "&lt;script>" in text and "&lt;javascript:" in text
    assert "\\[ref]: javascript" in text  # no longer a link definition


def test_headings_are_inert_hold_no_citations_and_never_pose_as_sources() -> None:
    d = draft(sections=(("Sources", "Pumps work [1]."), ("# <i>xylophones</i>", "They hum along [1].")))
    md = render(d, [source(1)], meta=meta(query="Do <b>heat</b> pumps\nwork [1]?"), skeptic=None)
    assert "\n# Do heat pumps work \\[1\\]?\n" in md  # the H1 is the question: one line, inert, no citation
    assert "\n## Sources (notes)\n" in md and "\n## \\# xylophones\n" in md
    assert [h.text for h in parse_report(md).headings].count("Sources") == 1
    assert review_draft(md, target_words=None).approved


# --- final renumbering --------------------------------------------------------------------------


def test_invented_numbers_are_removed_and_counted_and_the_sentence_marked_only_when_unsupported() -> None:
    d = draft(
        "Pumps work [2][99]. Costs fell [99]. Both [2, 98].",
        executive_summary="Summary [3].",
        key_findings=("Finding [99].",),
        limitations=("Few sites [0].",),
    )
    from research_agent.run.report import compose_report

    rendered = compose_report(d, [source(1), source(2), source(3)], meta=meta(), skeptic=None)
    md = rendered.markdown
    assert rendered.citations_removed == 5
    assert [s.key for s in rendered.cited] == ["k3", "k2"]
    assert "Summary [1]." in md and "Pumps work [2]. Costs fell (citation removed). Both [2]." in md
    assert f"- Finding {REMOVED_MARK}." in md and f"- Few sites {REMOVED_MARK}." in md
    assert "were removed" in section(md, "Limitations & Gaps")
    assert not [i for i in lint_report(md, target_words=None) if i.type in CITATION_ISSUES]


def test_a_draft_for_review_keeps_its_numbers_and_lists_every_source() -> None:
    from research_agent.run.report import compose_report

    rendered = compose_report(draft("Pumps [2][99]."), [source(1), source(2)], meta=meta(), skeptic=None, final=False)
    assert "Pumps [2][99]." in rendered.markdown and rendered.citations_removed == 0
    assert len(rendered.cited) == 2


def test_viability_line_is_not_an_uncited_number() -> None:
    md = render(draft(), [source(1)], meta=meta(), skeptic=SkepticReport((), 82))
    assert "Viability of the answer from these sources: 82/100." in md
    assert lint_report(md, target_words=None) == []


# --- the short report ---------------------------------------------------------------------------


def test_short_report_is_inert_and_passes_its_own_review(tmp_path) -> None:
    examined = [
        (source(1, title=HOSTILE_TITLE + " rose 40% [3]"), 2, "mentions [7] <img src=x onerror=alert(1)> 40%"),
        (source(2, location=str(tmp_path / "<svg onload=alert(1)>.md")), None, "unscored"),
    ]
    md = render_insufficient(
        meta=meta("no_new_findings", query="<img src=x onerror=alert(1)> heat pumps [2]"),
        reason="2 source(s) scored but only 0 reached relevance 3; at least 2 needed",
        sub_queries=["heat pumps <script>alert(1)</script> [5] 40%", "pumps `code` [click](javascript:x)"],
        examined=examined,
        failures=["ddgs: <b>blocked</b> [9]"],
    )
    assert_inert(md.split("\n---\n", 1)[1])  # the front matter is YAML data, not markdown
    assert "\n# No relevant findings: heat pumps \\[2\\]\n" in md
    assert "- `heat pumps alert(1) [5] 40%`" in md  # as code: never a citation or a claim
    assert "- ``pumps `code` click``" in md
    review = review_draft(md, target_words=None)
    assert review.approved, [i.as_dict() for i in review.issues]
    assert not [i for i in review.issues if i.type in CITATION_ISSUES]


def test_a_query_of_several_lines_cannot_end_the_front_matter_or_add_a_heading() -> None:
    md = render(draft(), [source(1)], meta=meta(query="pumps\n---\n# Injected\n\nmore"), skeptic=None)
    doc = parse_report(md)
    assert doc.front_matter["query"] == "pumps --- # Injected more" and doc.front_matter["mode"] == "standard"
    assert "Injected" not in [h.text for h in doc.headings]
