"""``python -m tests.support.mcp_smoke TOKEN``: the real ``research-agent mcp --http`` on 0.0.0.0.

Run it only inside a network namespace of its own (``unshare -n``, loopback up): it listens on
every address of the namespace. It prints one line per check; test_mcp_http reads them.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys

GUARD = 60.0  # seconds; only against a hang


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server(port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "research_agent", "mcp", "--http", str(port), "--host", "0.0.0.0"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def started_line(proc: subprocess.Popen[str]) -> str:
    """The server's startup line: it is printed once the socket listens."""
    assert proc.stderr is not None
    if not select.select([proc.stderr], [], [], GUARD)[0]:
        raise SystemExit("the server never said it was listening")
    return proc.stderr.readline()


def initialize(port: int, **headers: str) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "smoke", "version": "1"}}})
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=GUARD)
    connection.request("POST", "/mcp", body, {
        "Host": f"0.0.0.0:{port}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream", **headers,
    })  # fmt: skip
    status = connection.getresponse().status
    connection.close()
    return status


def main(token: str) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "RESEARCH_AGENT_MCP_TOKEN"}
    refused = server(port, env)
    refused.communicate(timeout=GUARD)
    print(f"refused without a token: {refused.returncode}", flush=True)
    proc = server(port, {**env, "RESEARCH_AGENT_MCP_TOKEN": token})
    try:
        line = started_line(proc)
        if f"http://0.0.0.0:{port}/mcp (bearer token required" not in line:
            raise SystemExit(f"unexpected startup line: {line!r}")
        print(f"no token: {initialize(port)}", flush=True)
        print(f"token: {initialize(port, Authorization=f'Bearer {token}')}", flush=True)
        print(f"token, foreign Host: {initialize(port, Authorization=f'Bearer {token}', Host='evil.example')}",
              flush=True)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(GUARD)
    print("stopped", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
