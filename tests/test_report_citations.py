"""The final report cites only what it lists: one map for every part, invented numbers removed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from typer.testing import CliRunner

from research_agent.cli.review import app as review_app
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from research_agent.review.review import review_draft
from research_agent.sources import SearchHit
from tests.support.answers import as_markdown, scored_each
from tests.support.claims import answer_claims
from tests.support.pipeline import QUERY, settings_for
from tests.support.research_responder import ResearchResponder

CITATION_ISSUES = {"missing_source", "sources_list"}
WORDS = "vacuum reclaims dead tuples postgresql space table autovacuum bloat".split()


class TwelveDocs:
    """Twelve relevant files doc01.md .. doc12.md; every query finds all of them."""

    name = "local"

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.paths = []
        for i in range(1, 13):
            path = folder / f"doc{i:02d}.md"
            text = f"PostgreSQL VACUUM reclaims space from dead tuples, part {WORDS[i % len(WORDS)]}."
            path.write_text(f"# Doc {i:02d}\n\n{text}\n", encoding="utf-8")
            self.paths.append((path, f"Doc {i:02d}", text))

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        return [SearchHit(title=t, location=str(p), snippet=x, provider="local", text=x) for p, t, x in self.paths]


# Two sources cited, and an invented [99] in every sentence of every part; no other digits.
DRAFT = {
    "title": "Vacuum and dead tuples [99]",
    "executive_summary": "Dead tuples are reclaimed by vacuum [1][99]. Autovacuum runs it in the background [99].",
    "key_findings": ["Vacuum marks space reusable [2] [99].", "Long transactions block the cleanup [99]."],
    "sections": [
        {
            "heading": "How it works",
            "body": "Plain vacuum keeps the file size [1][99]. Full vacuum rewrites the table [2, 99]. "
            "Bloat grows without it [99].",
        }
    ],
    "limitations": ["Only documentation was read [99]."],
}
INVENTED_IN_DRAFT = 8  # every "99" above but the title's (the writer's title is not the report's)
FINDINGS = [
    {  # quotes the draft's numbers [3]-[6] and mentions "source 9": valid sources the body never cites
        "lens": "evidence",
        "severity": "concern",
        "claim": "Bloat grows without it [3]-[6]",
        "reason": "source 9 describes bloat differently [9]",
        "fix": "compare with [9]",
        "confidence": 0.5,
    },
    {  # stays in every revision: an unresolved critical finding quoting [2] and [9]
        "lens": "evidence",
        "severity": "critical",
        "claim": "Plain vacuum keeps the file size [1]",
        "reason": "the passage in [9] says it can shrink the file",
        "fix": "qualify the claim",
        "confidence": 0.9,
    },
    {  # quotes the invented number
        "lens": "scope",
        "severity": "observation",
        "claim": "Autovacuum runs it in the background [99]",
        "reason": "no source says so",
        "fix": "",
        "confidence": 0.6,
    },
]
INVENTED_IN_SKEPTIC = 1


def source_section(markdown: str) -> str:
    return markdown.split("\n## Sources\n", 1)[1].split("\n## ", 1)[0]


def entries(markdown: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^(\d+)\. (.*)$", source_section(markdown), re.M)}


def cited_numbers(markdown: str) -> list[int]:
    body = markdown.split("\n## Sources\n", 1)[0]
    return [int(n) for group in re.findall(r"\[([\d,\s-]+)\](?!\()", body) for n in re.split(r"[,\s]+", group) if n]


async def test_invented_and_skeptic_citations_are_renumbered_or_removed_through_one_map(tmp_path, scripted_model):
    responder = ResearchResponder()

    def use(request):
        return responder.answer(request.stage, request.system, request.user)

    scripted_model.enqueue("decompose", use)
    scripted_model.enqueue("relevance", scored_each({"score": 5, "reason": "on topic"}))  # one batched call
    scripted_model.enqueue("draft", as_markdown(DRAFT))
    # the claim check rides in the skeptic's call: every cited sentence supported
    scripted_model.enqueue("skeptic", lambda r: {"findings": FINDINGS, "viability": 80, "claims": answer_claims(r.user)})
    scripted_model.enqueue("revise", as_markdown(DRAFT), times=2)  # the model never stops inventing [99]
    provider = TwelveDocs(tmp_path / "docs")
    result = await research(
        QUERY, settings=settings_for(tmp_path), model=scripted_model, providers=[provider],
        lessons=lambda domain: LessonSelection.none(domain),
    )
    report = result.report_path.read_text(encoding="utf-8")
    assert [i.decision for i in result.iterations] == ["revise", "revise", "proceed"]

    # Sources: exactly the sources cited above it, numbered by first citation
    listed = entries(report)
    assert set(cited_numbers(report)) == set(listed) == set(range(1, 8))
    expected_docs = ["doc01", "doc02", "doc03", "doc04", "doc05", "doc06", "doc09"]
    for n, doc in enumerate(expected_docs, start=1):
        assert listed[n].endswith(f"<{(tmp_path / 'docs' / f'{doc}.md').as_uri()}>"), (n, listed[n])
    assert "[99]" not in report and "99" not in report.split("\n---\n", 1)[1]

    # the skeptic's numbers went through the same map
    adversarial = report.split("## Adversarial Analysis\n", 1)[1].split("\n## ", 1)[0]
    assert "\u201cBloat grows without it [3, 4, 5, 6]\u201d. source [7] describes bloat differently [7]" in adversarial
    assert "Response: compare with [7]" in adversarial
    limits = report.split("## Limitations & Gaps\n", 1)[1].split("\n## ", 1)[0]
    assert ': "Plain vacuum keeps the file size [1]": the passage in [7] says' in limits
    assert "it has" not in report and "not in the Sources list" not in report

    # invented numbers: removed, the sentence marked only when nothing else supports it
    assert "Dead tuples are reclaimed by vacuum [1]. Autovacuum runs it in the background (citation removed)." in report
    assert "Vacuum marks space reusable [2]." in report and "Full vacuum rewrites the table [2]." in report
    assert f"\n# {QUERY}\n" in report and "Vacuum and dead tuples" not in report  # the H1 is the question
    record = yaml.safe_load(result.run_record_path.read_text())
    assert record["citations_removed"] == INVENTED_IN_DRAFT + INVENTED_IN_SKEPTIC
    assert [s["n"] for s in record["sources"] if s["n"]] == list(range(1, 8))

    # the tool's own review finds no citation issue in the report it wrote
    review = review_draft(report, target_words=None)
    assert not [i for i in review.issues if i.type in CITATION_ISSUES], review.issues
    cli = CliRunner().invoke(review_app, [str(result.report_path), "--json"])
    issues = json.loads(cli.stdout)["issues"]
    assert not [i for i in issues if i["type"] in CITATION_ISSUES], issues
    # nothing critical left but what the run left open: the skeptic's finding it could not clear (its run
    # record keeps it) and the length of this short scripted draft
    assert [i["type"] for i in issues if i["severity"] == "critical"] == ["skeptic:evidence", "length"], issues


class HostileDocs:
    """Three files whose titles carry HTML, links and citation-like numbers."""

    name = "local"

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.hits = []
        for i, title in enumerate(
            ["<img src=x onerror=alert(1)> [click](javascript:alert(1))", "Sales rose 40% [3]", "<b>Bold</b> [99]"]
        ):
            path = folder / f"page{i}.md"
            path.write_text(f"# {title}\n\nUnrelated text about gardening.\n", encoding="utf-8")
            self.hits.append(SearchHit(title=title, location=str(path), snippet="gardening", provider="local",
                                       text="Unrelated text about gardening."))

    async def search(self, query: str, *, max_results: int) -> list[SearchHit]:
        return list(self.hits)


async def test_the_short_report_of_a_failed_run_passes_its_own_review(tmp_path, scripted_model):
    responder = ResearchResponder()

    def use(request):
        return responder.answer(request.stage, request.system, request.user)

    scripted_model.enqueue("decompose", use, times=3)
    scripted_model.enqueue("relevance", scored_each({"score": 1, "reason": "about <i>gardening</i> [2]"}))  # one batched call
    result = await research(
        QUERY, settings=settings_for(tmp_path), model=scripted_model, providers=[HostileDocs(tmp_path / "docs")],
        lessons=lambda domain: LessonSelection.none(domain),
    )
    assert result.gate_decision == "no_new_findings"
    body = result.report_markdown.split("\n---\n", 1)[1]
    assert "<img" not in body and "<b>" not in body and "<i>" not in body and "javascript:" not in body
    record = yaml.safe_load(result.run_record_path.read_text())
    assert record["citations_removed"] == 0
    cli = CliRunner().invoke(review_app, [str(result.report_path), "--json"])
    data = json.loads(cli.stdout)
    assert not [i for i in data["issues"] if i["type"] in CITATION_ISSUES], data["issues"]
    assert cli.exit_code == 0 and data["critical"] == 0, data["issues"]
