"""The MCP server over HTTP: Host and Origin checked on every bind, a bearer token off loopback.

The app is driven in-process through httpx.ASGITransport (nothing listens); one smoke test
runs the real server on 0.0.0.0 inside a network namespace of its own (``unshare -n``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from research_agent.errors import ConfigError
from research_agent.mcp_server import HttpBind, ServiceOptions, build_server, is_loopback
from research_agent.mcp_server.http import http_app
from tests.support.cli import cli

TOKEN = "t0ken-for-the-tests-0123456789"
PORT = 8765
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}  # fmt: skip


@asynccontextmanager
async def client_for(bind: HttpBind) -> AsyncIterator[httpx.AsyncClient]:
    server = build_server(ServiceOptions())
    app = http_app(server, bind)
    starlette = getattr(app, "app", app)  # behind the token check, or the SDK's app itself
    try:
        async with starlette.router.lifespan_context(starlette), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url=f"http://{bind.host}:{bind.port}"
        ) as client:
            yield client
    finally:
        server.service.close()


async def initialize(client: httpx.AsyncClient, **headers: str) -> httpx.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", **headers}
    return await client.post("/mcp", json=INITIALIZE, headers=headers)


def bearer(token: str = TOKEN) -> dict[str, Any]:
    return {"Authorization": f"Bearer {token}"}


async def test_the_bearer_scheme_is_case_insensitive_and_the_token_is_not() -> None:
    """RFC 9110 11.1: the scheme is case-insensitive (0.3.0 answered 401 to "bearer")."""
    async with client_for(HttpBind("0.0.0.0", PORT, TOKEN)) as client:
        answers = [await initialize(client, Authorization=f"{scheme} {token}")
                   for scheme, token in (("bearer", TOKEN), ("BEARER", TOKEN), ("Bearer", f" {TOKEN}"),
                                         ("bearer", TOKEN.upper()), ("Basic", TOKEN), ("bearer", ""))]  # fmt: skip
    assert [a.status_code for a in answers] == [200, 200, 200, 401, 401, 401]


async def test_a_public_bind_answers_only_with_the_token_and_its_own_host() -> None:
    async with client_for(HttpBind("0.0.0.0", PORT, TOKEN)) as client:
        without = await initialize(client)
        wrong = await initialize(client, **bearer("t0ken-for-the-tests-0123456780"))
        served = await initialize(client, **bearer())
        foreign_host = await initialize(client, Host="evil.example", **bearer())
        loopback_name = await initialize(client, Host=f"127.0.0.1:{PORT}", **bearer())
        foreign_origin = await initialize(client, Origin="http://evil.example", **bearer())
    assert (without.status_code, wrong.status_code) == (401, 401)
    assert without.headers["www-authenticate"] == "Bearer"
    assert served.status_code == 200 and "serverInfo" in served.text
    assert foreign_host.status_code == 421
    assert loopback_name.status_code == 421, "on a public bind, only the bound address and --allow-host names"
    assert foreign_origin.status_code == 403


async def test_allow_host_adds_a_name_clients_may_use() -> None:
    async with client_for(HttpBind("0.0.0.0", PORT, TOKEN, allow_hosts=("research.lan",))) as client:
        named = await initialize(client, Host=f"research.lan:{PORT}", Origin=f"http://research.lan:{PORT}", **bearer())
        other = await initialize(client, Host=f"other.lan:{PORT}", **bearer())
    assert named.status_code == 200 and other.status_code == 421


async def test_a_loopback_bind_checks_host_and_origin_and_needs_no_token() -> None:
    async with client_for(HttpBind("127.0.0.1", PORT)) as client:
        direct = await initialize(client)
        by_name = await initialize(client, Host=f"localhost:{PORT}", Origin=f"http://localhost:{PORT}")
        rebound = await initialize(client, Host="evil.example")
        page = await initialize(client, Origin="http://evil.example")
    assert direct.status_code == 200 and by_name.status_code == 200
    assert rebound.status_code == 421 and page.status_code == 403


async def test_a_token_given_on_loopback_is_required_there_too() -> None:
    async with client_for(HttpBind("localhost", PORT, TOKEN)) as client:
        assert (await initialize(client, Host=f"localhost:{PORT}")).status_code == 401
        assert (await initialize(client, Host=f"localhost:{PORT}", **bearer())).status_code == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "127.0.0.2", "192.168.1.10", "LOCALHOST", "localhost."])
def test_anything_but_the_three_loopback_names_needs_a_token(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(ConfigError, match=f"mcp --http on {host} \\(not loopback\\) needs a bearer token"):
        HttpBind(host, PORT)


def test_the_loopback_names_are_exactly_three() -> None:
    assert [h for h in ("127.0.0.1", "::1", "localhost") if is_loopback(h)] == ["127.0.0.1", "::1", "localhost"]


def test_a_short_token_is_refused_and_the_token_is_never_shown() -> None:
    with pytest.raises(ConfigError, match="at least 16 printable characters"):
        HttpBind("0.0.0.0", PORT, "short")
    assert TOKEN not in repr(HttpBind("0.0.0.0", PORT, TOKEN))


def test_the_cli_refuses_a_public_bind_without_a_token_in_one_line(tmp_path: Path) -> None:
    proc = cli(tmp_path, "mcp", "--http", str(PORT), "--host", "0.0.0.0")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        "error: mcp --http on 0.0.0.0 (not loopback) needs a bearer token: set RESEARCH_AGENT_MCP_TOKEN "
        "or pass --token-file FILE\n"
    )
    empty = tmp_path / "token"
    empty.write_text("\n")
    proc = cli(tmp_path, "mcp", "--http", str(PORT), "--host", "0.0.0.0", "--token-file", str(empty))
    assert proc.returncode == 2 and proc.stderr == f"error: --token-file {empty}: the file is empty\n"


# --------------------------------------------------------------------------- the real server, in its own network


def _netns_works() -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, timeout=60)
    return probe.returncode == 0


def test_the_server_on_0_0_0_0_in_a_network_namespace(tmp_path: Path) -> None:
    if not _netns_works():
        if os.environ.get("CI") == "true":
            pytest.fail("unshare -n is needed for this test (CI runs as root)")
        pytest.skip("unshare -n (a network namespace) is not available here")
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
           "RESEARCH_AGENT_CACHE_DIR": str(tmp_path / "cache"), "NO_COLOR": "1"}
    env.pop("RESEARCH_AGENT_MCP_TOKEN", None)
    script = f"ip link set lo up && exec {sys.executable} -m tests.support.mcp_smoke {TOKEN}"
    proc = subprocess.run(["unshare", "-n", "sh", "-c", script], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).parent.parent, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "refused without a token: 2",
        "no token: 401",
        "token: 200",
        "token, foreign Host: 421",
        "stopped",
    ], proc.stdout + proc.stderr


def test_a_token_file_others_may_read_gets_one_warning(tmp_path: Path) -> None:
    """Issue 31 point 9: 0.3.0 accepted a world-readable token file without a word."""
    shared = tmp_path / "token"
    shared.write_text("short\n")
    shared.chmod(0o644)
    proc = cli(tmp_path, "mcp", "--http", str(PORT), "--host", "0.0.0.0", "--token-file", str(shared))
    assert proc.returncode == 2
    warning, error = proc.stderr.splitlines()
    assert warning.endswith(f"the token file {shared} may be read by others (mode 644); chmod 600 {shared}")
    assert error.startswith("error: the bearer token must be at least")
    shared.chmod(0o600)
    proc = cli(tmp_path, "mcp", "--http", str(PORT), "--host", "0.0.0.0", "--token-file", str(shared))
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
