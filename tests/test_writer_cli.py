"""Whole CLI runs against the OpenAI-compatible server on 127.0.0.1 (issues 31 and 32, the writer's
points): a writer that never leaves a blank line still publishes (32.1); control characters never reach
the report (31.2); a writer that ignores its limits is cut by structure (31.1); prompts fit the
server's context window and a refusal for size is asked again smaller (32.5); ``doctor`` shows the window."""

from __future__ import annotations

import re

import yaml

from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer, Faults
from tests.support.pipeline import QUERY
from tests.support.research_responder import ResearchResponder

SENTENCE = "Plain VACUUM marks the space of dead tuples as reusable within the table file [1]. "


def _record(reports) -> dict:
    (path,) = (reports / "meta").glob("run-*.yaml")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


class Writer(ResearchResponder):
    """The research responder with the writer's answer replaced by ``draft``."""

    def __init__(self, draft: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.draft = draft

    def _draft(self, system: str, user: str) -> str:
        return self.draft


def test_a_quick_run_whose_writer_never_leaves_a_blank_line_publishes_its_sentences(tmp_path, corpus) -> None:
    ramble = "## Summary\n" + SENTENCE * 60  # every answer cut at the token limit (the fault halves it)
    reports = tmp_path / "reports"
    with FakeOpenAIServer(Writer(ramble), faults=Faults(always={"draft": "length"})) as server:
        proc = cli(tmp_path, "run", QUERY, "--quick", "--corpus", str(corpus), "--reports-dir", str(reports),
                   "--max-revisions", "0", base_url=server.base_url)  # fmt: skip
        drafts = [r for r in server.requests if r.stage == "draft"]
    assert proc.returncode == 0, proc.stderr
    assert len(drafts) == 2  # cut: asked once more, shorter; cut again: what there is, never a third time
    (report,) = reports.glob("*.md")
    text = report.read_text(encoding="utf-8")
    assert text.count("reusable within the table file") >= 20
    assert "The draft was cut short (the model stopped at its token limit)" in " ".join(text.split())
    record = _record(reports)
    assert record["draft_cut"] == "length" and record["usage"]["draft"]["retries"] == 1


def test_control_characters_never_reach_the_report_and_review_reads_it(tmp_path, corpus) -> None:
    hostile = ("## Summary\n\nPlain VACUUM marks dead\x00 tuples\x07 reusable\x1b]0;PWNED\x07 within the table "
               "\x1b[31mfile\u202e [1].\n\n## Key Findings\n\n- Autovacuum\x9b2J runs vacuum automatically [2].\n")
    reports = tmp_path / "reports"
    with FakeOpenAIServer(Writer(hostile)) as server:
        proc = cli(tmp_path, "run", QUERY, "--quick", "--corpus", str(corpus), "--reports-dir", str(reports),
                   "--format", "html", base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (report,) = reports.glob("*.md")
    raw = report.read_bytes()
    assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80\xae", raw)
    assert b"Plain VACUUM marks dead tuples reusable within the table file [1]." in raw
    assert _record(reports)["controls_dropped"] == len("\x00\x07\x1b]0;PWNED\x07\x1b[31m\u202e\x9b2J")
    reviewed = cli(tmp_path, "review", str(report))
    assert reviewed.returncode in (0, 1) and "binary" not in reviewed.stderr, reviewed.stderr


def test_a_writer_that_ignores_its_limits_is_cut_at_the_section_limit(tmp_path, corpus) -> None:
    endless = "".join(f"## Part {n}\n\nPlain VACUUM marks space in part {n} as reusable [1].\n\n" for n in range(20_000))
    reports = tmp_path / "reports"
    with FakeOpenAIServer(Writer(endless)) as server:  # 0.9 MB of short sections, streamed
        proc = cli(tmp_path, "run", QUERY, "--quick", "--corpus", str(corpus), "--reports-dir", str(reports),
                   "--timeout", "60", base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (report,) = reports.glob("*.md")
    text = report.read_text(encoding="utf-8")
    assert 10 <= text.count("## Part ") <= 20  # quick: 600 words, at most 20 sections
    assert _record(reports)["draft_cut"] == "bounded"
    assert "The draft was cut short (the model wrote past the report's length limits)" in " ".join(text.split())


def _long_corpus(folder):
    """Six documents of about 1,500 tokens each: more than a small window holds."""
    folder.mkdir()
    for doc in range(6):
        sentences = (f"PostgreSQL VACUUM step {n} of document {doc} reclaims dead tuples in table page {n * 7 + doc}."
                     for n in range(80))  # fmt: skip
        (folder / f"vacuum-{doc}.md").write_text(f"# Vacuum notes {doc}\n\n" + " ".join(sentences) + "\n")
    return folder


def test_prompts_fit_the_window_the_server_says_and_a_refusal_is_asked_again_smaller(tmp_path) -> None:
    reports, corpus = tmp_path / "reports", _long_corpus(tmp_path / "long")
    # the server's tokenizer counts 90% more than the estimate: the first draft prompt, fitted by the
    # estimate, is refused; the refusal's numbers make the second fit
    with FakeOpenAIServer(ResearchResponder(), context_window=4096, token_ratio=1.9) as server:
        proc = cli(tmp_path, "run", QUERY, "--quick", "--corpus", str(corpus), "--reports-dir", str(reports),
                   "--no-critique", base_url=server.base_url)  # fmt: skip
        seen = server.requests
    assert proc.returncode == 0, proc.stderr
    drafts = [(r.stream, r.fault) for r in seen if r.stage == "draft"]
    # refused (streamed: no event at all), asked whole to read the refusal, then smaller: accepted
    assert drafts == [(True, "context"), (False, "context"), (True, None)], drafts
    assert all(r.prompt_tokens < 4096 for r in seen if r.fault != "context")
    assert "do not fit the model's context window of 4,096 tokens: asked once more with the sources' passages " \
        "cut to" in " ".join(proc.stderr.split()), proc.stderr


def test_doctor_shows_the_window_the_server_says(tmp_path) -> None:
    with FakeOpenAIServer(ResearchResponder(), context_window=8192, models=["fake-model"]) as server:
        said = cli(tmp_path, "doctor", base_url=server.base_url, env={"RESEARCH_AGENT_MODEL": "fake-model"})
    with FakeOpenAIServer(ResearchResponder(), models=["fake-model"]) as server:
        silent = cli(tmp_path, "doctor", base_url=server.base_url, env={"RESEARCH_AGENT_MODEL": "fake-model"})
    assert "8,192 tokens (llama.cpp /props)" in " ".join(said.stdout.split()), said.stdout
    assert "not said by the server" in " ".join(silent.stdout.split()), silent.stdout
