"""A replan only when new sources could help (issue 32, points 3, 4 and 7): a viability with no
finding behind it, a plan that fell back to the question itself, a draft whose writing is the
problem, and findings about the draft's own claims all revise instead (or publish rejected), and
say so in the run record and the report's Limitations."""

from __future__ import annotations

import json
from dataclasses import replace

from typer.testing import CliRunner

from research_agent.cli.review import app as review_app
from research_agent.stages._sub_queries import Screened, answer_problem
from tests.support.debris import ISSUE_DEBRIS, DebrisResponder
from tests.support.pipeline import CRITICAL, DOCS, GAP, DocsProvider, queue, record_of, run, script, use
from tests.support.research_responder import ResearchResponder

FELL_BACK = "Not replanned: the sub-queries fell back to the question itself, so another plan would search the same."


def limitations(markdown: str) -> str:
    return markdown.split("## Limitations & Gaps", 1)[1].split("## Sources", 1)[0]


def adversarial(markdown: str) -> str:
    return markdown.split("## Adversarial Analysis", 1)[1].split("## Limitations & Gaps", 1)[0]


async def test_a_low_viability_with_no_finding_behind_it_is_set_aside(tmp_path, scripted_model) -> None:
    script(scripted_model, ResearchResponder(viability=10))
    result = await run(tmp_path, scripted_model)

    assert [i.decision for i in result.iterations] == ["proceed"] and len(scripted_model.calls("decompose")) == 1
    assert result.iterations[0].reason.endswith("; not replanned: the viability had no finding behind it")
    said = [w for w in result.warnings if "not credible" in w]
    assert said == ["the skeptic's viability 10 is below 51 with no finding behind it: not credible, set aside "
                    "(no replan)"]  # fmt: skip
    shown = adversarial(result.report_markdown)
    assert "10/100 without naming a problem behind the score" in shown
    assert "found no problems" not in shown and "Viability of the answer" not in shown
    assert "set aside, and decided no replan" in limitations(result.report_markdown)
    assert "treat the conclusions as tentative" not in result.report_markdown
    assert "not credible, set aside" in record_of(result)["skeptic"]["viability_note"]


async def test_a_finding_about_the_sources_still_replans(tmp_path, scripted_model) -> None:
    script(scripted_model, ResearchResponder(viability=[30, 80], findings=[GAP]), plans=2, drafts=2, skeptics=2)
    result = await run(tmp_path, scripted_model)
    assert [i.decision for i in result.iterations] == ["replan", "proceed"]
    assert "Not replanned" not in result.report_markdown


async def test_findings_about_the_drafts_own_claims_revise_instead_of_replanning(tmp_path, scripted_model) -> None:
    script(scripted_model, ResearchResponder(viability=30, findings=[CRITICAL]), revisions=1)
    result = await run(tmp_path, scripted_model)

    assert [i.decision for i in result.iterations] == ["revise", "proceed"]
    assert len(scripted_model.calls("draft")) == 1
    reason = "not replanned: the sources were not the problem: the skeptic's findings are about the draft's own claims"
    assert result.iterations[0].reason.endswith(reason)
    assert f"N{reason[1:]}." in limitations(result.report_markdown)
    assert reason in record_of(result)["warnings"]


async def test_a_debris_draft_is_revised_never_replanned_whatever_the_skeptic_blames(tmp_path, scripted_model) -> None:
    # the skeptic rates the debris 10/100 and blames the sources: the lint says the writing is the problem
    responder = DebrisResponder(replace(ISSUE_DEBRIS, viability=10))
    responder._skeptic = lambda system, user: {"findings": [GAP], "viability": 10}
    queue(scripted_model, responder, revise=[use(responder)] * 2)
    result = await run(tmp_path, scripted_model)

    assert [i.decision for i in result.iterations] == ["revise", "revise", "proceed"]
    assert len(scripted_model.calls("draft")) == 1 and len(scripted_model.calls("decompose")) == 1
    shown = limitations(result.report_markdown)
    assert "Not replanned: the sources were not the problem: the draft's writing was (" in shown
    assert "repeated sections" in shown.split("Not replanned:", 1)[1].split("\n", 1)[0]


async def test_no_replan_after_sub_queries_that_fell_back_to_the_question(tmp_path, scripted_model) -> None:
    bad = {"domain": "technology", "sub_queries": ["] } {", "type="]}
    queue(scripted_model, ResearchResponder(viability=30, findings=[GAP]), decompose=[bad] * 3)
    provider = DocsProvider(tmp_path)
    result = await run(tmp_path, scripted_model, provider=provider)

    assert provider.calls == [result.run_record.query] and len(scripted_model.calls("draft")) == 1
    assert [i.decision for i in result.iterations] == ["proceed"]
    assert FELL_BACK in limitations(result.report_markdown)


async def test_a_gate_short_of_sources_gives_up_rather_than_search_the_same_again(tmp_path, scripted_model) -> None:
    one = dict(list(DOCS.items())[:1])
    bad = {"domain": "technology", "sub_queries": ["] } {"]}
    responder = ResearchResponder()
    queue(scripted_model, responder, decompose=[bad] * 3, relevance=[use(responder)], draft=[], skeptic=[])
    result = await run(tmp_path, scripted_model, provider=DocsProvider(tmp_path, one))

    assert [i.decision for i in result.iterations] == ["give_up"]
    assert f"not replanned: {FELL_BACK.split(': ', 1)[1][:-1]}" in record_of(result)["warnings"]


def test_the_sub_query_message_reads_right_with_none_given() -> None:
    message = answer_problem(Screened((), ()))
    assert message.startswith("the answer gave no sub-query.") and "0 of 0" not in message


# --- a near-copy loop is debris in the run and in `review` alike -----------------------------------

_LOOPED = "The table access method has been implemented to support different types of data in the storage layer"


class LoopingWriter(ResearchResponder):
    """A sound draft, then one paragraph looped through near copies under its own heading."""

    def _draft(self, system: str, user: str) -> str:
        copies = [f"{_LOOPED} [1]."] + [f"{_LOOPED.replace('different', 'many different')} [1]."] * 12
        return super()._draft(system, user) + "\n## Storage\n\n" + "\n\n".join(copies) + "\n"


async def test_near_copies_are_critical_in_the_run_and_in_review(tmp_path, scripted_model) -> None:
    writer = LoopingWriter(fix_on_revise=False)
    queue(scripted_model, writer, revise=[lambda request: writer._draft(request.system, request.user)] * 2)
    result = await run(tmp_path, scripted_model, check_claims=False)

    assert result.run_record.review.status == "rejected"
    assert "duplicated paragraphs" in result.run_record.review.reasons
    checked = CliRunner().invoke(review_app, [str(result.report_path), "--json"])
    assert checked.exit_code == 1
    critical = [i for i in json.loads(checked.stdout)["issues"] if i["severity"] == "critical"]
    assert sum(i["type"] == "duplicate_paragraph" for i in critical) == 12


# --- Limitations name every open kind, at its lines in the published file (issue 32, point 9) -------


async def test_limitations_list_every_open_kind_at_its_lines_in_the_published_file(tmp_path, scripted_model) -> None:
    responder = DebrisResponder(ISSUE_DEBRIS)
    queue(scripted_model, responder, revise=[use(responder)] * 2)
    result = await run(tmp_path, scripted_model)

    published = result.report_markdown.split("\n")
    open_lines = [line for line in limitations(result.report_markdown).split("\n") if "Unresolved after review" in line]
    kinds = [line.split("Unresolved after review: ", 1)[1].split(" (", 1)[0].split(" at line")[0].split(":")[0]
             for line in open_lines]  # fmt: skip
    assert len(kinds) == len(set(kinds)) and set(result.run_record.review.reasons) <= set(kinds)
    assert {"repeated sections", "no citations", "text without words"} <= set(kinds)
    repeats = next(line for line in open_lines if "repeated sections" in line)
    at = [int(n) for n in repeats.split("at lines ", 1)[1].split(")", 1)[0].split(" and")[0].split(", ")]
    assert all(published[n - 1].startswith("## ") for n in at)  # each points at a repeated section's heading
    earlier = int(repeats.rsplit("at line ", 1)[1].split(" ", 1)[0])
    assert published[earlier - 1].startswith("## ")
