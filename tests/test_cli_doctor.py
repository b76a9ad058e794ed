"""``doctor`` tells the truth about a setup, and changes nothing."""

from __future__ import annotations

import json

import httpx

from research_agent.config import Settings
from research_agent.service.setup.checks import _module, run_checks
from tests.support.cli import cli
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.research_responder import ResearchResponder


def client(handler) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(handler))


def checks_of(settings: Settings, handler) -> dict[str, tuple[bool | None, str]]:
    return {what: (ok, detail) for what, ok, detail in run_checks(settings, client=client(handler))}


def test_no_endpoint_is_reported(tmp_path):
    settings = Settings(reports_dir=tmp_path / "r", cache_dir=tmp_path / "c")
    ok, detail = checks_of(settings, lambda r: None)["model endpoint"]
    assert not ok and "OPENAI_API_KEY" in detail


WINDOW_PATHS = ("/props", "/slots", "/api/show")  # where doctor asks for the context window


def test_endpoint_models_and_folders_are_checked_and_no_folder_is_created(tmp_path):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path in WINDOW_PATHS:
            return httpx.Response(404)
        assert request.url.path == "/v1/models"
        return httpx.Response(200, json={"data": [{"id": "llama3"}]})

    settings = Settings(base_url="http://127.0.0.1:1/v1", model="llama3", reports_dir=tmp_path / "r",
                        cache_dir=tmp_path / "c", corpus_dirs=(tmp_path / "missing",))
    checks = checks_of(settings, handler)
    assert checks["model endpoint"][0]
    assert checks[f"writable {tmp_path / 'r'}"] == (True, f"does not exist yet; it will be created in {tmp_path}")
    assert not checks[f"corpus {tmp_path / 'missing'}"][0]
    assert not (tmp_path / "r").exists() and not (tmp_path / "c").exists(), "doctor creates no folder"
    (tmp_path / "r").mkdir()
    assert checks_of(settings, handler)[f"writable {tmp_path / 'r'}"] == (True, "ok")
    assert list((tmp_path / "r").iterdir()) == []


def test_a_model_the_server_does_not_list_is_tried_with_one_token(tmp_path):
    """llama.cpp's server lists its model under the file path, yet serves any name."""
    asked: list[dict] = []

    def llama_cpp(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/props":
            return httpx.Response(200, json={"default_generation_settings": {"n_ctx": 8192}})
        if request.url.path in WINDOW_PATHS:
            return httpx.Response(404)
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": "/models/SmolLM2-135M-Instruct-Q8_0.gguf"}]})
        asked.append(json.loads(request.content))
        return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": "OK"}}]})

    settings = Settings(base_url="http://127.0.0.1:1/v1", model="smollm2", reports_dir=tmp_path, cache_dir=tmp_path)
    checks = checks_of(settings, llama_cpp)
    ok, detail = checks["model endpoint"]
    assert ok is True, detail
    assert checks["context window"] == (True, "8,192 tokens (llama.cpp /props)")
    assert "not in its list, which names /models/SmolLM2-135M-Instruct-Q8_0.gguf, but it answered" in detail
    assert asked == [{"model": "smollm2", "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1}]

    def strict(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": "llama3"}, {"id": "qwen2.5"}]})
        return httpx.Response(404, json={"error": {"message": "model not found"}})

    wrong = Settings(base_url="http://127.0.0.1:1/v1", model="gpt-x", reports_dir=tmp_path, cache_dir=tmp_path)
    ok, detail = checks_of(wrong, strict)["model endpoint"]
    assert ok is False
    assert detail == ("http://127.0.0.1:1/v1 does not serve gpt-x: a one-token completion got HTTP 404; "
                      "it lists: llama3, qwen2.5")  # fmt: skip


def test_a_missing_optional_extra_is_missing_with_its_name_never_ok_and_mcp_and_web_are_checked(tmp_path):
    assert _module("no_such_module_for_doctor", "PDF files in a corpus", "pdf") == (
        "no_such_module_for_doctor", None,
        "optional extra 'pdf' not installed: PDF files in a corpus; pip install 'cited-research-agent[pdf]'",
    )  # fmt: skip
    assert _module("no_such_module_for_doctor", "DuckDuckGo search", None)[1] is False
    settings = Settings(reports_dir=tmp_path, cache_dir=tmp_path)
    checks = checks_of(settings, lambda r: None)
    assert checks["mcp"] == (True, "research-agent mcp (the MCP server) (extra 'mcp')")
    assert checks["jinja2"] == (True, "research-agent serve (the web workbench) (extra 'web')")


def test_the_table_has_headers_and_says_missing_not_ok(tmp_path):
    with FakeOpenAIServer(ResearchResponder()) as server:
        proc = cli(tmp_path, "doctor", "--reports-dir", str(tmp_path / "new" / "reports"), base_url=server.base_url,
                   env={"COLUMNS": "200", "RESEARCH_AGENT_MODEL": "fake-model"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    header = next(line for line in proc.stdout.splitlines() if "check" in line)
    assert [cell.strip() for cell in header.split("┃")[1:4]] == ["check", "status", "detail"]
    assert "does not exist yet" in proc.stdout and not (tmp_path / "new").exists()
    assert not (tmp_path / "reports").exists(), "doctor creates no ./reports"


def test_a_busy_server_is_slow_not_a_model_it_does_not_serve(tmp_path):
    waited: list[float] = []

    def busy(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": "/models/SmolLM2-135M-Instruct-Q4_1.gguf"}]})
        if request.url.path.endswith("/chat/completions"):  # not the context window's short probes
            waited.append(request.extensions["timeout"]["read"])
        raise httpx.ReadTimeout("the one slot is busy", request=request)

    settings = Settings(base_url="http://127.0.0.1:1/v1", model="smollm2", reports_dir=tmp_path, cache_dir=tmp_path,
                        llm_timeout=240.0)  # fmt: skip
    ok, detail = checks_of(settings, busy)["model endpoint"]
    assert ok == "slow" and waited == [240.0], "the completion is waited for as long as --llm-timeout"
    assert "gave no answer to a one-token completion of smollm2 within 240s (--llm-timeout): the server is slow" in detail
    assert "does not serve" not in detail


def test_a_server_too_busy_to_list_its_models_is_slow_not_unreachable(tmp_path):
    waited: list[float] = []

    def busy(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            waited.append(request.extensions["timeout"]["read"])
        raise httpx.ReadTimeout("the one slot is busy", request=request)

    settings = Settings(base_url="http://127.0.0.1:1/v1", model="smollm2", reports_dir=tmp_path, cache_dir=tmp_path,
                        llm_timeout=90.0)  # fmt: skip
    ok, detail = checks_of(settings, busy)["model endpoint"]
    assert ok == "slow" and waited[0] == 90.0  # then the context window's own short look at /models
    assert detail == ("http://127.0.0.1:1/v1 took the request but gave no answer to /models within 90s (--llm-timeout): "
                      "the server is slow or busy")  # fmt: skip
    refused = checks_of(settings, lambda r: (_ for _ in ()).throw(httpx.ConnectError("refused", request=r)))
    assert refused["model endpoint"] == (False, "cannot reach http://127.0.0.1:1/v1: ConnectError")
