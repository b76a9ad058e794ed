"""``doctor`` tells what is wrong with a setup."""

from __future__ import annotations

import httpx

from research_agent.cli.doctor import run_checks
from research_agent.config import Settings


def client(handler) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(handler))


def test_no_endpoint_is_reported(tmp_path):
    settings = Settings(reports_dir=tmp_path / "r", cache_dir=tmp_path / "c")
    checks = {what: (ok, detail) for what, ok, detail in run_checks(settings, client=client(lambda r: None))}
    ok, detail = checks["model endpoint"]
    assert not ok and "OPENAI_API_KEY" in detail


def test_endpoint_models_and_folders_are_checked(tmp_path):
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/models"
        return httpx.Response(200, json={"data": [{"id": "llama3"}]})

    settings = Settings(base_url="http://127.0.0.1:1/v1", model="llama3", reports_dir=tmp_path / "r",
                        cache_dir=tmp_path / "c", corpus_dirs=(tmp_path / "missing",))
    checks = {what: (ok, detail) for what, ok, detail in run_checks(settings, client=client(handler))}
    assert checks["model endpoint"][0]
    assert checks[f"writable {tmp_path / 'r'}"][0]
    assert not checks[f"corpus {tmp_path / 'missing'}"][0]

    wrong = Settings(base_url="http://127.0.0.1:1/v1", model="gpt-x", reports_dir=tmp_path / "r",
                     cache_dir=tmp_path / "c")
    checks = {what: (ok, detail) for what, ok, detail in run_checks(wrong, client=client(handler))}
    assert not checks["model endpoint"][0] and "gpt-x" in checks["model endpoint"][1]
