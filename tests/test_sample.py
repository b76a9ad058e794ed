"""``run --sample`` (issue 43 point 2): the README's first command gives a report on the sample, the
built-in eval world of a fixed seed, with nothing but a model endpoint on loopback; the sample is
what the eval's generator makes; what cannot go with it is refused in one line."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from typer.testing import CliRunner

from research_agent.cli import app
from research_agent.eval.world import PAGES_DIR, QUESTIONS_FILE, generate, load_world
from research_agent.eval.world.sample import SAMPLE_SEED, builtin_world_dir, write_sample
from tests.support.cli import CLI, cli, cli_env
from tests.support.eval_writers import CopyingResponder
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.pipeline import citations, source_entries

ROOT = Path(__file__).parents[1]
LOOPBACK_ONLY = Path(__file__).parent / "support" / "loopback_only"


def _readme_run() -> tuple[dict[str, str], list[str]]:
    """The run part of the README's first command: its inline variables, and the command's words."""
    first = re.findall(r"```bash\n(.*?)\n```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)[0]
    words = shlex.split(first.split(" && ")[-1])
    variables = dict(word.split("=", 1) for word in words if re.match(r"^[A-Z_]+=", word))
    return variables, words[len(variables):]


def _loopback_only(log: Path) -> dict[str, str]:
    """The environment that loads tests/support/loopback_only into a process and its children."""
    return {"PYTHONPATH": str(LOOPBACK_ONLY), "LOOPBACK_ONLY_LOG": str(log)}


def test_the_sample_is_the_built_in_world_the_generator_makes_where_eval_run_writes_it(tmp_path: Path) -> None:
    sample = write_sample(tmp_path / "cache")
    assert sample.folder == builtin_world_dir(tmp_path / "cache", SAMPLE_SEED)
    assert sample.folder == tmp_path / "cache" / "eval-worlds" / f"builtin-{SAMPLE_SEED}"
    pages, questions = generate(SAMPLE_SEED)
    written = {p.relative_to(sample.corpus).as_posix(): p.read_text(encoding="utf-8")
               for p in sample.corpus.rglob("*") if p.is_file()}  # fmt: skip
    assert written == pages and sample.pages == len(pages) >= 40
    assert sample.corpus == sample.folder / PAGES_DIR and sample.questions_file == sample.folder / QUESTIONS_FILE
    world = load_world(sample.folder)
    assert sample.question == world.questions[0].question == questions["questions"][0]["question"]
    assert world.questions[0].answerable and world.questions[0].checkpoints
    stamps = {p: p.stat().st_mtime_ns for p in sample.folder.rglob("*") if p.is_file()}
    assert write_sample(tmp_path / "cache") == sample
    assert {p: p.stat().st_mtime_ns for p in sample.folder.rglob("*") if p.is_file()} == stamps, "written once"


def test_the_loopback_guard_refuses_every_host_and_address_outside_loopback(tmp_path: Path) -> None:
    """The guard the end-to-end test relies on, proven: it is loaded before anything is tried (so
    nothing leaves if it were not), refuses a name lookup and a connection outside loopback, and
    lets a connection to 127.0.0.1 through."""
    log = tmp_path / "refused.log"
    code = (
        "import socket, sys, sitecustomize\n"
        f"assert sitecustomize.__file__ == {str(LOOPBACK_ONLY / 'sitecustomize.py')!r}, sitecustomize.__file__\n"
        "def tried(call):\n"
        "    try:\n        call()\n    except PermissionError:\n        return 'refused'\n    return 'allowed'\n"
        "server = socket.create_server(('127.0.0.1', 0))\n"
        "print(tried(lambda: socket.getaddrinfo('example.invalid', 80)))\n"  # RFC 2606: never resolves
        "print(tried(lambda: socket.create_connection(('192.0.2.1', 80), timeout=1)))\n"  # RFC 5737
        "print(tried(lambda: socket.socket().connect(('192.0.2.2', 80))))\n"  # no lookup: the connect itself
        "print(tried(lambda: socket.create_connection(server.getsockname(), timeout=5).close()))\n"
        "print(tried(lambda: socket.getaddrinfo('localhost', 80)))\n"
    )
    env = {**os.environ, **_loopback_only(log)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["refused", "refused", "refused", "allowed", "allowed"]
    refused = log.read_text(encoding="utf-8").splitlines()
    assert [line.split()[1] for line in refused] == ["socket.getaddrinfo", "socket.getaddrinfo", "socket.connect"]
    assert "'example.invalid'" in refused[0] and "'192.0.2.1'" in refused[1] and "'192.0.2.2'" in refused[2]


def test_the_readme_s_first_command_gives_a_report_on_the_sample_with_only_loopback(tmp_path: Path) -> None:
    """Its run part as written, the endpoint's URL put where the README says to put one's own: a
    report whose sources are the sample's pages, the question it asked said, no socket outside
    loopback tried (the critique waited for, so that it too runs under the guard within the test)."""
    variables, words = _readme_run()
    assert "OPENAI_BASE_URL" in variables and words[:3] == [".venv/bin/research-agent", "run", "--sample"]
    log = tmp_path / "refused.log"
    model = variables.get("RESEARCH_AGENT_MODEL", "gpt-4o-mini")
    with FakeOpenAIServer(CopyingResponder(), models=[model]) as server:
        env = cli_env(tmp_path, env={**variables, "OPENAI_BASE_URL": server.base_url, **_loopback_only(log)})
        done = subprocess.run([str(CLI), *words[1:], "--wait-critique"], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not log.exists(), log.read_text(encoding="utf-8")
    sample = write_sample(tmp_path / "cache")  # where the run wrote it (RESEARCH_AGENT_CACHE_DIR)
    assert f"question: {sample.question} (one of the sample's own" in done.stderr
    report_path = tmp_path / done.stdout.strip()  # relative to where it ran, as a person reads it
    assert report_path.parent == tmp_path / "reports" and report_path.is_file()
    report = report_path.read_text(encoding="utf-8")
    assert f"query: {sample.question}" in report
    entries = source_entries(report)
    assert entries and citations(report) <= set(entries)
    for entry in entries.values():
        location = entry.split(" — ")[-1]
        path = Path(unquote(location.removeprefix("<file://").removesuffix(">")))
        assert path.parent.parent == sample.corpus.resolve() and path.is_file(), entry
    answer = load_world(sample.folder).questions[0].checkpoints[0].answer
    assert answer in report, "the copying writer states the fact from the sample's page"
    assert {r.model for r in server.requests} == {model}


@pytest.mark.parametrize(
    ("args", "given"),
    [
        (["--corpus", "docs"], "--corpus"),
        (["--search", "local,ddgs"], "--search ddgs"),
        (["--search", "academic"], "--search academic"),
        (["--searxng-url", "http://127.0.0.1:9"], "--searxng-url"),
    ],
)
def test_sample_with_another_corpus_or_the_web_is_refused_in_one_line(tmp_path: Path, args, given) -> None:
    done = cli(tmp_path, "run", "--sample", *args, base_url="http://127.0.0.1:9/v1")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"error: --sample reads only its own pages, never the web or another folder: "
                           f"leave out {given}\n")  # fmt: skip
    assert not (tmp_path / "cache").exists(), "refused before anything is written"


def test_run_without_a_question_suggests_the_sample_and_help_says_what_it_is(tmp_path: Path) -> None:
    done = cli(tmp_path, "run")
    assert done.returncode == 2
    assert done.stderr == "error: Missing argument 'QUERY'. Ask a question, or try --sample (see: research-agent run --help)\n"
    words = " ".join(CliRunner().invoke(app, ["run", "--help"], terminal_width=200).stdout.replace("│", " ").split())
    assert "Usage: research-agent run [OPTIONS] [QUERY]" in words
    described = words.split("--sample ", 1)[1].split(" --", 1)[0]
    assert "small fictional world" in described and "no model can answer from memory" in described
    assert "never the web" in described


def test_a_question_of_one_s_own_on_the_sample_and_json_output(tmp_path: Path) -> None:
    question = "Which river flows through Brurn?"
    with FakeOpenAIServer(CopyingResponder()) as server:
        done = cli(tmp_path, "run", question, "--sample", "--quick", "--json", "--search", "local",
                   base_url=server.base_url, env={"RESEARCH_AGENT_SEARCH": "ddgs"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # stdout holds the one JSON object; what the sample is goes to stderr
    assert data["query"] == question and "question:" not in done.stderr and "sample: " in done.stderr
    sample = write_sample(tmp_path / "cache")
    assert data["sources"] and all(Path(s["location"]).resolve().is_relative_to(sample.corpus.resolve())
                                   for s in data["sources"])  # fmt: skip


def test_the_sample_leaves_the_business_context_out_unless_one_is_named(tmp_path: Path) -> None:
    (tmp_path / "research_context.md").write_text("We sell CONTEXTMARK heat pumps in Minnesota.\n", encoding="utf-8")
    seen: list[str] = []
    responder = CopyingResponder()

    def recording(body: dict, stage: str):
        seen.append(json.dumps(body["messages"]))
        return responder(body, stage)

    with FakeOpenAIServer(recording) as server:
        plain = cli(tmp_path, "run", "--sample", "--quick", "--no-critique", base_url=server.base_url)
        asked = len(seen)
        named = cli(tmp_path, "run", "--sample", "--quick", "--no-critique", "--context",
                    str(tmp_path / "research_context.md"), base_url=server.base_url)  # fmt: skip
    assert plain.returncode == 0 and named.returncode == 0, plain.stderr + named.stderr
    assert asked and not any("CONTEXTMARK" in m for m in seen[:asked]), "nothing of a person's background"
    assert any("CONTEXTMARK" in m for m in seen[asked:]), "--context names one: it is used"
