"""The workbench is safe by default (issue 35 point 6): loopback bind or a bearer token, Host and
Origin checked, a CSRF token on every POST, a person's acts from loopback clients only, a Content
Security Policy on every page, outside strings escaped, run ids and never paths."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from research_agent.errors import ConfigError
from research_agent.memory.store.person.lessons import read_lessons_file
from research_agent.web import WebBind
from research_agent.web.app import PAGE_POLICY
from tests.support.memory import make_critique, put
from tests.support.web import COUNTER, IDEA, in_process, options_for, seed_memory

PAGES = ["/", "/reports", "/memory", "/batches", "/settings", "/memory/lessons/add?text=x&stage=decompose&domain=any"]


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    seed_memory(tmp_path / "reports" / "meta")
    return tmp_path / "reports"


async def test_every_page_carries_a_policy_without_inline_script_or_outside_origin(tmp_path: Path) -> None:
    async with in_process(options_for(tmp_path)) as web:
        for path in [*PAGES, "/static/web.css", "/no/such/page"]:
            answer = await web.client.get(path)
            assert answer.headers["content-security-policy"] == PAGE_POLICY, path
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert answer.headers["x-frame-options"] == "DENY"
            assert "<script>" not in answer.text and not re.search(r"\son[a-z]+\s*=", answer.text), path
            assert not re.search(r"\sstyle\s*=", answer.text), "no inline style either"
    policy = dict(part.strip().split(" ", 1) for part in PAGE_POLICY.split(";"))
    assert policy["default-src"] == "'none'" and policy["script-src"] == "'self'"  # no 'unsafe-inline', no host
    assert all("http" not in value and "*" not in value for value in policy.values())


async def test_a_foreign_host_is_refused_with_421_and_a_foreign_origin_with_403(tmp_path: Path) -> None:
    async with in_process(options_for(tmp_path)) as web:
        for path in PAGES:
            rebound = await web.client.get(path, headers={"host": "attacker.example:8600"})
            assert rebound.status_code == 421, path  # DNS rebinding: a name that now points here
            other_port = await web.client.get(path, headers={"host": "127.0.0.1:9999"})
            assert other_port.status_code == 421
            assert (await web.client.get(path, headers={"host": "localhost:8600"})).status_code == 200
        csrf = await web.csrf()
        cross = await web.client.post("/runs", data={"csrf": csrf, "question": "Is this a cross-site request?"},
                                      headers={"origin": "http://attacker.example"})  # fmt: skip
        assert cross.status_code == 403 and "Invalid Origin" in cross.text
        assert web.bench.board.newest() == [], "nothing was started"


async def test_a_header_the_guard_decides_by_given_twice_is_refused(tmp_path: Path) -> None:
    """Issue 45: of two Origin headers the guard read the last, which a request can choose."""
    good, evil = "http://127.0.0.1:8600", "http://attacker.example"
    async with in_process(options_for(tmp_path)) as web:
        csrf = await web.csrf()
        for pair in ([good, evil], [evil, good], [good, good]):
            twice = await web.client.post("/runs", data={"csrf": csrf, "question": "Is this a cross-site request?"},
                                          headers=[("origin", value) for value in pair])  # fmt: skip
            assert twice.status_code == 400 and twice.text == "Duplicate Origin header", pair
        hosts = await web.client.get("/", headers=[("host", "127.0.0.1:8600"), ("host", "attacker.example")])
        assert hosts.status_code == 400 and hosts.text == "Duplicate Host header"
        assert web.bench.board.newest() == [], "nothing was started"


async def test_a_post_without_the_csrf_token_is_refused_and_does_nothing(reports: Path, tmp_path: Path) -> None:
    async with in_process(options_for(tmp_path)) as web:
        proposal = "/memory/proposals/" + _digest() + "/approve"
        for path, data in [("/runs", {"question": "How do heat pumps work?"}), (proposal, {"confirm": "1"}),
                           ("/memory/lessons/add", {"text": "Prefer primary sources.", "stage": "decompose",
                                                    "domain": "any", "confirm": "1"}),
                           ("/memory/lessons/reinstate", {"key": "counterarguments:missing", "domain": "technology",
                                                          "confirm": "1"})]:  # fmt: skip
            missing = await web.client.post(path, data=data)
            wrong = await web.client.post(path, data={**data, "csrf": "not-the-token"})
            for answer in (missing, wrong):
                assert answer.status_code == 403, path
                assert "CSRF token is missing or stale" in answer.text
        assert web.bench.board.newest() == []
    assert not (reports / "meta" / "lessons.yaml").exists()


async def test_approving_from_another_machine_is_refused_even_with_the_token(reports: Path, tmp_path: Path) -> None:
    bind = WebBind("0.0.0.0", 8600, "a-long-enough-bearer-token")
    headers = {"authorization": "Bearer a-long-enough-bearer-token", "host": "0.0.0.0:8600"}
    async with in_process(options_for(tmp_path), client_ip="192.0.2.7", bind=bind) as web:
        web.client.headers.update(headers)
        page = await web.client.get("/memory")
        assert page.status_code == 200 and IDEA in page.text  # reading is allowed with the token
        csrf = await web.csrf()
        digest = _digest()
        for path in (f"/memory/proposals/{digest}/approve", f"/memory/proposals/{digest}/reject",
                     "/memory/lessons/add", "/memory/lessons/trust", "/memory/lessons/reinstate"):  # fmt: skip
            answer = await web.client.post(path, data={"csrf": csrf, "confirm": "1", "text": IDEA, "key": COUNTER,
                                                       "stage": "decompose", "domain": "any"})  # fmt: skip
            assert answer.status_code == 403, path
            assert "only from this machine" in answer.text
        assert (await web.client.get("/memory", headers={"authorization": ""})).status_code == 401
    assert not read_lessons_file(reports / "meta", tmp_path / "state").exists


async def test_a_path_in_place_of_a_run_id_is_refused_before_any_file_is_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\nid: x\n---\n# The secret\n", encoding="utf-8")
    async with in_process(options_for(tmp_path)) as web:
        csrf = await web.csrf()
        for ref in ("..%2Fsecret", "%2Fetc%2Fpasswd", "...", "secret.md", "run-x.yaml", "%2e%2e%2fsecret"):
            for suffix in ("", ".md", ".pdf"):
                answer = await web.client.get(f"/reports/{ref}{suffix}")
                assert answer.status_code in (400, 404), (ref, suffix)
                assert "The secret" not in answer.text and "root:" not in answer.text
            retried = await web.client.post(f"/memory/retry/{ref}", data={"csrf": csrf})
            assert retried.status_code in (400, 404)
        assert (await web.client.get("/reports/abcd1234")).status_code == 404  # an id that names no run
        for name in ("secret", "x.y", "..%2Fsecret"):
            named = await web.client.get(f"/reports/{name}")
            assert named.status_code in (400, 404)
        assert "never by path" in (await web.client.get("/reports/secret")).text
        assert (await web.client.get("/runs/..%2F..%2Fetc")).status_code in (400, 404)
        assert (await web.client.get("/runs/0123456789abcdef")).status_code == 404


async def test_outside_strings_are_escaped_on_every_page(tmp_path: Path) -> None:
    meta = tmp_path / "reports" / "meta"
    hostile = "<img src=x onerror=alert(1)> <script>alert(2)</script> question"
    put(meta, make_critique(1, query=hostile))
    async with in_process(options_for(tmp_path)) as web:
        page = await web.client.get("/memory")
        assert "<img src=x" not in page.text and "<script>alert" not in page.text
        assert "&lt;img src=x onerror=alert(1)&gt;" in page.text
        asked = await web.client.post("/runs", data={"csrf": await web.csrf(), "question": hostile, "mode": "nope"})
        assert asked.status_code == 400 and "<script>alert" not in asked.text and "unknown mode" in asked.text


async def test_a_bind_off_loopback_needs_a_token_and_the_cli_says_so_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="serve on 0.0.0.0 .not loopback. needs a bearer token: set "
                                          "RESEARCH_AGENT_WEB_TOKEN or pass --token-file FILE"):  # fmt: skip
        WebBind("0.0.0.0", 8600)
    done = subprocess.run([sys.executable, "-m", "research_agent", "serve", "--host", "0.0.0.0", "--port", "0"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: serve on 0.0.0.0 (not loopback) needs a bearer token: set RESEARCH_AGENT_WEB_TOKEN or pass "
        "--token-file FILE"
    ]


def _digest() -> str:
    from research_agent.memory.store.person.proposals import proposal_key

    return proposal_key(IDEA).split(":", 1)[1]


async def test_the_form_names_folders_by_their_place_in_the_allowed_list_never_by_path(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    async with in_process(options_for(tmp_path, allow_dirs=(allowed,))) as web:
        csrf = await web.csrf()
        for given in ("1", "-1", str(tmp_path), "../x", "0x0", "9" * 5000):
            answer = await web.client.post("/runs", data={"csrf": csrf, "question": "What is in my notes?",
                                                          "corpus": given})  # fmt: skip
            assert answer.status_code == 400, given
            assert "choose corpus folders among those listed" in answer.text
        assert web.bench.board.newest() == []


async def test_terminal_and_bidi_controls_never_reach_a_page(tmp_path: Path) -> None:
    """Issue 45: ESC and U+202E in a typed question appeared raw in the workbench's pages."""
    typed = "What is \x1b[31mred\x1b[0m and \u202edesrever\u202c text?"
    async with in_process(options_for(tmp_path)) as web:
        asked = await web.client.post("/runs", data={"csrf": await web.csrf(), "question": typed})
        stored = web.bench.html("error.html", message="Stored \x1b]0;owned\x07 question \u202eevil\u202c")
    assert asked.status_code == 400 and "the question holds control characters" in asked.text
    assert web.bench.board.newest() == [], "nothing was started"
    for page in (asked.text, stored):
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", page)
    assert "What is red and desrever text?" in asked.text, "the form keeps what was typed, without its controls"
    assert "Stored  question evil" in stored, "any value a page shows (a record's, a job's) loses them too"
