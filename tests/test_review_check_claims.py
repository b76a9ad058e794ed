"""`review REPORT.md --check-claims` (issue 22, point 5): the run's check, on a finished report.

The report finds its run through its front matter's ``id:`` and its passages in the stored
``passages-<id>.json``; the model is the configured endpoint (here the fake server on
127.0.0.1). An unsupported claim the report does not mark "[Disputed]" fails the review;
a marked one is reported but never does.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from research_agent.llm import NO_ENDPOINT_MESSAGE
from research_agent.memory.lessons.select import LessonSelection
from research_agent.pipeline import research
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import CLAIM, QUERY, DocsProvider, settings_for
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel

OTHER_CLAIM = "VACUUM FULL rewrites the whole table into a new file"


def unsupported(*needles: str):
    return lambda sentence: "unsupported" if any(n in sentence for n in needles) else "supported"


@pytest.fixture
async def written(tmp_path):
    """A finished standard run (its report, record and passages); its claim CLAIM marked [Disputed]."""
    model = ResponderModel(ResearchResponder(claim_verdict=unsupported(CLAIM)))
    result = await research(
        QUERY, settings=settings_for(tmp_path, claim_tokens=100_000, max_revisions=0), model=model,
        providers=[DocsProvider(tmp_path)], lessons=lambda domain: LessonSelection.none(domain),
    )  # fmt: skip
    report = result.report_path
    assert f"[Disputed] {CLAIM}" in report.read_text(encoding="utf-8")
    return report


def review(tmp_path, report, responder, *extra: str, cwd=None):
    with FakeOpenAIServer(responder) as server:
        done = cli(tmp_path, "review", str(report), "--check-claims", *extra, base_url=server.base_url,
                   env={"OPENAI_API_KEY": "test"}, cwd=cwd)  # fmt: skip
        return done, [r.stage for r in server.requests]


def test_an_unmarked_unsupported_claim_fails_the_review_and_every_verdict_is_printed(tmp_path, written):
    done, stages = review(tmp_path, written, ResearchResponder(claim_verdict=unsupported(CLAIM, OTHER_CLAIM)))
    assert done.returncode == 1, done.stderr
    assert stages and set(stages) == {"claims"}
    lines = done.stdout.splitlines()
    summary = next(line for line in lines if line.startswith("Claims checked against their sources:"))
    assert summary.endswith("supported, 0 partly, 2 unsupported (1 of them marked [Disputed]).")
    verdicts = [line for line in lines if line.startswith("  ") and line.split()[0] in ("supported", "unsupported")]
    assert verdicts[0].startswith("  unsupported [") and f"[Disputed] {CLAIM}" in verdicts[0]
    assert verdicts[0].endswith("(marked disputed) - the passage unsupported it")
    assert OTHER_CLAIM in verdicts[1] and "(marked disputed)" not in verdicts[1]
    assert all(line.startswith("  supported") for line in verdicts[2:]) and len(verdicts) > 10


def test_a_claim_marked_disputed_is_reported_but_never_fails_the_review(tmp_path, written):
    done, _ = review(tmp_path, written, ResearchResponder(claim_verdict=unsupported(CLAIM)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 unsupported (1 of them marked [Disputed])." in done.stdout


def test_json_output_carries_the_verdicts(tmp_path, written):
    done, _ = review(tmp_path, written, ResearchResponder(claim_verdict=unsupported(OTHER_CLAIM)), "--json")
    assert done.returncode == 1
    claims = json.loads(done.stdout)["claims"]
    assert claims["open_unsupported"] == 1 and claims["checked"] == claims["cited"] > 10
    (bad,) = [v for v in claims["verdicts"] if v["verdict"] == "unsupported"]
    assert OTHER_CLAIM in bad["sentence"] and bad["quote"] == "" and bad["sources"] == [bad["source"]]


def test_a_copied_report_finds_its_run_through_its_id(tmp_path, written):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    copy = shutil.copy(written, elsewhere / "my-report.md")
    responder = ResearchResponder(claim_verdict=unsupported(OTHER_CLAIM))
    done, _ = review(tmp_path, copy, responder, "--reports-dir", str(written.parent))
    assert done.returncode == 1 and "1 unsupported (0 of them marked [Disputed])." in done.stdout
    lost, stages = review(tmp_path, copy, responder, cwd=elsewhere)  # ./reports there has no such run
    assert lost.returncode == 2 and not stages
    assert lost.stderr.count("\n") == 1 and "its claims cannot be checked" in lost.stderr
    assert "Traceback" not in lost.stderr
    # it says where it looked: beside the copy, then the reports folder (./reports, here elsewhere's)
    assert f"(looked in {elsewhere / 'meta'} and {elsewhere / 'reports' / 'meta'})" in lost.stderr
    assert "--reports-dir" in lost.stderr


def test_a_copy_one_folder_down_finds_its_run_in_the_folder_above(tmp_path, written):
    """Issue 33: the run was looked up only in ./reports."""
    below = written.parent / "shared" / "copy.md"
    below.parent.mkdir()
    shutil.copy(written, below)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done, stages = review(tmp_path, below, ResearchResponder(claim_verdict=unsupported(OTHER_CLAIM)), cwd=elsewhere)
    assert done.returncode == 1 and stages and "1 unsupported (0 of them marked [Disputed])." in done.stdout


def test_without_an_endpoint_the_usual_one_line_error(tmp_path, written):
    done = cli(tmp_path, "review", str(written), "--check-claims")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert NO_ENDPOINT_MESSAGE.split(":")[0] in done.stderr and "Traceback" not in done.stderr


def test_sentences_the_model_gives_no_verdict_on_are_counted_and_said(tmp_path, written):
    class Terse(ResearchResponder):
        def _claims(self, system: str, user: str) -> dict:
            return {"claims": super()._claims(system, user)["claims"][:2]}

    done, stages = review(tmp_path, written, Terse())
    assert done.returncode == 0, done.stdout + done.stderr
    summary = next(line for line in done.stdout.splitlines() if line.startswith("Claims checked"))
    checked, cited = re.search(r"sources: (\d+) of (\d+) cited", summary).groups()
    assert int(checked) == 2 * len(stages) < int(cited)
    assert summary.endswith(f"Not checked: {int(cited) - int(checked)} left without a verdict by the model.")


@pytest.mark.parametrize("spoof", ["<!-- [Disputed] -->", "[[disputed]](#x)", "`[DISPUTED]`"])
def test_a_marker_no_reader_sees_does_not_take_a_claim_off_the_open_count(tmp_path, written, spoof):
    text = written.read_text(encoding="utf-8")
    written.write_text(text.replace(f"[Disputed] {CLAIM}", f"{CLAIM} {spoof}"), encoding="utf-8")
    done, _ = review(tmp_path, written, ResearchResponder(claim_verdict=unsupported(CLAIM)), "--json")
    assert done.returncode == 1, done.stdout + done.stderr  # 0.3.0: 0, the claim counted as marked
    assert json.loads(done.stdout)["claims"]["open_unsupported"] == 1
