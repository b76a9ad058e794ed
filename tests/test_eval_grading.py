"""The grader (research_agent/eval/grading): a pure function of world, report and run record.

The labelled set (tests/data/eval/labelled.yaml: report sentences a person labelled by the issue's
definitions) is graded sentence by sentence; found, cited and unsupported must each reach precision
and recall of at least 0.95. The other tests hold the rules one by one: stale values, declining,
the tool's own words left out, citations mapped through the record even when the world moved.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

import pytest
import yaml

from research_agent.eval.grading import grade
from research_agent.eval.world import load_world
from tests.support.eval_reports import LABELLED_SET, LABELLED_WORLD, labelled_world, record_for, report_with

WORLD = labelled_world()
ITEMS = yaml.safe_load(LABELLED_SET.read_text(encoding="utf-8"))["items"]


def _scores(pairs: Iterable[tuple[set, set]], same=lambda a, b: a == b) -> tuple[float, float]:
    """Precision and recall over (predicted, labelled) sets; ``same`` says when two elements match."""
    tp = fp = fn = 0
    for predicted, labelled in pairs:
        tp += sum(1 for p in predicted if any(same(p, lab) for lab in labelled))
        fp += sum(1 for p in predicted if not any(same(p, lab) for lab in labelled))
        fn += sum(1 for lab in labelled if not any(same(p, lab) for p in predicted))
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / (tp + fn) if tp + fn else 1.0)


def _graded_set() -> list[tuple[dict, object]]:
    out = []
    for item in ITEMS:
        question = WORLD.question(item["question"])
        out.append((item, grade(WORLD, report_with(item["text"]), record_for(WORLD, question.question))))
    return out


def _contains(predicted: str, labelled: str) -> bool:
    """A token the grader lists matches a labelled one when one holds the other ("Dora Pimm" for
    "Analyst Dora Pimm" at a sentence's start, "12" for "12%")."""
    return predicted in labelled or labelled in predicted


def test_the_labelled_set_is_large_enough_and_covers_every_grade() -> None:
    assert len(ITEMS) >= 60
    assert sum(1 for i in ITEMS if i["found"]) >= 30 and sum(1 for i in ITEMS if i["cited"]) >= 25
    assert sum(1 for i in ITEMS if i.get("unsupported")) >= 25
    assert {i["question"] for i in ITEMS} == {q.id for q in WORLD.questions}


def test_found_cited_and_unsupported_reach_095_precision_and_recall_on_the_labelled_set() -> None:
    graded = _graded_set()
    found = [({c.id for c in g.checkpoints if c.found}, set(i["found"])) for i, g in graded]
    cited = [({c.id for c in g.checkpoints if c.cited}, set(i["cited"])) for i, g in graded]
    unsupported = [({u.token for u in g.unsupported}, set(i.get("unsupported", ()))) for i, g in graded]
    results = {"found": _scores(found), "cited": _scores(cited), "unsupported": _scores(unsupported, _contains)}
    misses = [
        (i["text"], sorted(c.id for c in g.checkpoints if c.found), sorted(u.token for u in g.unsupported))
        for i, g in graded
        if {c.id for c in g.checkpoints if c.found} != set(i["found"])
        or not all(any(_contains(u.token, lab) for lab in i.get("unsupported", ())) for u in g.unsupported)
    ]
    for name, (precision, recall) in results.items():
        assert precision >= 0.95 and recall >= 0.95, (name, precision, recall, misses)


def test_a_superseded_value_is_stale_only_without_its_replacement() -> None:
    question = WORLD.question("headquarters")
    record = record_for(WORLD, question.question)
    stale = grade(WORLD, report_with("Acme Works is headquartered in Orsk [1]."), record)
    moved = grade(WORLD, report_with("Acme Works moved from Orsk to Tamber in 2019 [1]."), record)
    assert stale.stale == ("Orsk",) and stale.found == 0
    assert moved.stale == () and moved.found == 1 and moved.cited == 1


def test_declined_when_the_gate_found_too_little_or_the_summary_says_the_sources_do_not_answer() -> None:
    question = WORLD.question("revenue")
    record = record_for(WORLD, question.question)
    said = grade(WORLD, report_with("Acme Works makes brass fittings [1].",
                                    summary="The sources do not state the revenue of Acme Works [1]."), record)  # fmt: skip
    answered = grade(WORLD, report_with("Acme Works makes brass fittings [1].",
                                        summary="Acme Works makes brass fittings in Tamber [1]."), record)  # fmt: skip
    short = grade(WORLD, report_with("Reason: 12 source(s) scored but only 1 reached relevance 3."),
                  record_for(WORLD, question.question, gate="insufficient_data"))  # fmt: skip
    assert said.declined and not answered.declined and short.declined
    assert not said.answerable and said.checkpoints == () and said.recall is None
    assert short.unsupported == (), "the tool wrote all of a short report: nothing in it is the writer's"


def test_the_tools_own_words_are_not_unsupported_facts() -> None:
    question = WORLD.question("staff")
    notice = ("> **The tool's own review rejected this report.** 1 critical issue(s) were still open after "
              "2 revision(s): length. It is published as the last revision left it; the issues are listed "
              "under Limitations & Gaps.")  # fmt: skip
    limitations = ('- Unresolved after review: duplicated paragraphs at line 32: "Acme Works employs": repeats '
                   "the paragraph at line 25.\n- Claims checked against their sources: 9 of 25 cited sentences.\n"
                   "- The skeptic rated viability 30/100, below the threshold of 51, after 2 plan(s): treat the "
                   "conclusions as tentative.\n- Short report: 2 relevant source(s) from 1 site(s); a full report "
                   "needs 3 from 2.")  # fmt: skip
    report = report_with("Acme Works employs 12,400 people [1].", notice=notice, limitations=limitations)
    graded = grade(WORLD, report, record_for(WORLD, question.question))
    assert graded.unsupported == () and graded.found == graded.cited == 1
    writers = grade(WORLD, report_with("Acme Works employs 12,400 people [1].", limitations=(
        "- The Varn Canal was damaged by a fire in 2031.\n" + limitations)), record_for(WORLD, question.question))
    assert [u.token for u in writers.unsupported] == ["2031"], "the writer's own limitations are read"


def test_an_invented_name_and_number_are_listed_with_their_sentence() -> None:
    question = WORLD.question("staff")
    sentence = "Analyst Quillon Marbury put the headcount at 7,318 in 2031 [1]."
    graded = grade(WORLD, report_with(f"Acme Works employs 12,400 people [1]. {sentence}"),
                   record_for(WORLD, question.question))  # fmt: skip
    assert {(u.sentence, u.token, u.kind) for u in graded.unsupported} == {
        (sentence, "Quillon Marbury", "name"), (sentence, "7,318", "number"), (sentence, "2031", "number")}


def test_citations_reach_the_pages_of_a_world_that_moved_since_the_run(tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere"
    shutil.copytree(LABELLED_WORLD, moved)
    world = load_world(moved)
    question = world.question("canal")
    record = record_for(world, question.question, root=LABELLED_WORLD / "pages")  # where the run read them
    graded = grade(world, report_with("The Varn Canal is 14,250 metres long [3]."), record)
    assert graded.cited == 1


def test_the_question_is_the_one_the_record_asked_unless_given() -> None:
    question = WORLD.question("canal")
    graded = grade(WORLD, report_with("The Varn Canal is 14,250 metres long [3]."), record_for(WORLD, question.question))
    assert graded.question_id == "canal"
    with pytest.raises(ValueError, match="asked no question"):
        grade(WORLD, report_with("Anything."), record_for(WORLD, "A question of another world?"))


def test_grading_is_pure_the_same_inputs_give_the_same_grade() -> None:
    question = WORLD.question("population")
    report = report_with("The canal runs through Tamber, a town of 48,215 people [3]. Mayor Anton Brisk agrees.")
    record = record_for(WORLD, question.question)
    assert grade(WORLD, report, record) == grade(WORLD, report, record)
