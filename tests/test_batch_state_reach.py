"""A batch state file is data, not authority (issue 45 point 2): a planted or edited
``reports/meta/batch-<id>.yaml`` cannot make ``batch --resume ID`` read a folder; the folders it
names are read only under the user's signature, else they come from the resume's own --corpus."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from research_agent.batch.plan import plan_batch
from research_agent.batch.questions import read_batch_file
from tests.support.batch import QUESTIONS, asked, batch_deps, run_batch, saved_state
from tests.support.pipeline import write_docs
from tests.support.research_responder import ResearchResponder
from tests.support.responder_model import ResponderModel

SECRET = "SECRET-TOKEN-7f3a PostgreSQL VACUUM dead tuples reclaim space autovacuum"
PLANTED_ID = "planted-20260101T000000000000Z"


def _secret(tmp_path: Path) -> Path:
    folder = tmp_path / "secret"
    folder.mkdir()
    (folder / "keys.md").write_text(f"# Keys\n\n{SECRET}\n", encoding="utf-8")
    return folder


def _plant(tmp_path: Path, folder: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    meta.mkdir(parents=True)
    state = {
        "schema_version": 1, "id": PLANTED_ID, "file": str(tmp_path / "gone.jsonl"), "status": "stopped",
        "overrides": {"corpus_dirs": [str(folder)]},
        "questions": [{"line": 1, "question": QUESTIONS[0], "key": "0123456789abcdef", "row": {"corpus": [str(folder)]},
                       "options": {}, "state": "pending"}],
    }  # fmt: skip
    (meta / f"batch-{PLANTED_ID}.yaml").write_text(yaml.safe_dump(state), encoding="utf-8")


def _seen(model: ResponderModel) -> str:
    return "\n".join(request.user + request.system for request in model.requests)


def test_a_planted_state_naming_folders_is_refused_before_any_model_call(tmp_path: Path) -> None:
    _plant(tmp_path, _secret(tmp_path))
    model = ResponderModel(ResearchResponder())
    refused = run_batch(tmp_path, batch_deps(tmp_path, model), "--resume", PLANTED_ID)
    assert refused.exit_code == 2, refused.output
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.output
    assert "names folders to read" in refused.stderr and "carries no signature" in refused.stderr
    assert str(tmp_path / "secret") in refused.stderr and "--corpus" in refused.stderr
    assert model.requests == []


def test_a_planted_state_resumed_with_corpus_reads_only_the_folders_given(tmp_path: Path) -> None:
    _plant(tmp_path, _secret(tmp_path))
    corpus = write_docs(tmp_path / "corpus")
    model = ResponderModel(ResearchResponder())
    again = run_batch(tmp_path, batch_deps(tmp_path, model), "--resume", PLANTED_ID, "--corpus", str(corpus))
    assert again.exit_code == 0, again.output
    assert asked(model, QUESTIONS[0]) > 0 and "SECRET-TOKEN" not in _seen(model)
    _, state = saved_state(tmp_path / "reports")
    assert state["overrides"]["corpus_dirs"] == [str(corpus)] and "corpus" not in state["questions"][0]["row"]
    assert state["questions"][0]["options"]["corpus"] == [str(corpus.resolve())]


def _signed_state(tmp_path: Path, corpus: Path) -> Path:
    """A stopped batch this user's tool wrote, whose one question reads ``corpus``."""
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"question": QUESTIONS[0], "corpus": str(corpus)}) + "\n", encoding="utf-8")
    base = batch_deps(tmp_path, None).load_settings({})
    base.meta_dir.mkdir(parents=True)
    batch = plan_batch(read_batch_file(questions), base, file=str(questions), overrides={}, previous=None)
    batch.state.status = "stopped"
    path = batch.state.save()
    questions.unlink()  # resumed by id alone
    return path


def test_a_state_the_tool_signed_resumes_with_its_own_folders(tmp_path: Path) -> None:
    path = _signed_state(tmp_path, write_docs(tmp_path / "corpus"))
    model = ResponderModel(ResearchResponder())
    again = run_batch(tmp_path, batch_deps(tmp_path, model), "--resume", path.stem.removeprefix("batch-"))
    assert again.exit_code == 0, again.output
    assert asked(model, QUESTIONS[0]) > 0 and "VACUUM FULL rewrites" in _seen(model)


def test_a_signed_state_edited_to_name_another_folder_is_refused_for_its_paths(tmp_path: Path) -> None:
    path = _signed_state(tmp_path, write_docs(tmp_path / "corpus"))
    secret = _secret(tmp_path)
    state = yaml.safe_load(path.read_text(encoding="utf-8"))
    state["questions"][0]["row"]["corpus"] = [str(secret)]
    path.write_text(yaml.safe_dump(state), encoding="utf-8")
    model = ResponderModel(ResearchResponder())
    refused = run_batch(tmp_path, batch_deps(tmp_path, model), "--resume", state["id"])
    assert refused.exit_code == 2, refused.output
    assert "carries a signature that does not match" in refused.stderr and str(secret) in refused.stderr
    assert model.requests == []
