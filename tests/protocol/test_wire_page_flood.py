"""A real `offprompt serve` at a 1,024 descriptor limit, its page flooded with 1,100 idle
loopback connections (DESIGN §6 "It stays up under load"): the page, a submit, `tools/list`
and `secret_status` all answer meanwhile, and the server never nears its descriptor limit."""

from __future__ import annotations

import os
import re
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import browser
from wire import Wire

LIMIT = 1024
FLOOD = 1100
CANARY = "canary-flood-3c9e-a41f-77d0"
ENV = {"OFFPROMPT_SANDBOX": "0", "BROWSER": "false"}
URL_CAPS = {"elicitation": {"form": {}, "url": {}}}
# `offprompt serve` with RLIMIT_NOFILE lowered to LIMIT (soft and hard) before it starts.
LIMITED = [
    sys.executable,
    "-c",
    "import os, resource, sys;"
    f" resource.setrlimit(resource.RLIMIT_NOFILE, ({LIMIT}, {LIMIT}));"
    " os.execv(sys.executable, [sys.executable, '-m', 'offprompt', 'serve'])",
]


# The person's browser: it keeps the claim cookie of the page it opened (DESIGN §17).
_BROWSER = browser()


def fetch(url: str, data: bytes | None = None) -> tuple[int, str]:
    try:
        with _BROWSER.open(url, data=data, timeout=10) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def still_open(s: socket.socket) -> bool:
    """Whether the server has not closed this connection (nothing was ever sent on it)."""
    s.setblocking(False)
    try:
        return s.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:  # reset: closed by the server
        return False


def descriptors(w: Wire) -> int:
    return len(os.listdir(f"/proc/{w.proc.pid}/fd"))


def flood(port: int) -> list[socket.socket]:
    """FLOOD idle connections to 127.0.0.1:port, each connected and then silent; bounded in
    count (FLOOD) and time (20 s in all, 5 s a connect)."""
    opened: list[socket.socket] = []
    deadline = time.monotonic() + 20
    try:
        for _ in range(FLOOD):
            if time.monotonic() > deadline:
                break
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            opened.append(s)
            s.settimeout(5)
            try:
                s.connect(("127.0.0.1", port))
            except OSError:
                continue  # refused or reset: the server turned it away, which is fine
    except BaseException:
        for s in opened:
            s.close()
        raise
    return opened


@pytest.fixture
def room_for_the_flood() -> None:
    """This test process needs descriptors for FLOOD sockets of its own."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = FLOOD + 256
    if soft != resource.RLIM_INFINITY and soft < want:
        if hard != resource.RLIM_INFINITY and hard < want:
            pytest.skip(f"RLIMIT_NOFILE hard limit {hard} is below the {want} the flood needs")
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.usefixtures("room_for_the_flood")
def test_a_flood_of_idle_connections_stops_neither_the_page_nor_the_tools(
    spawn: Callable[..., Wire], project: Path
) -> None:
    """1,100 connections held open and silent at a 1,024 limit: a real page GET, a real
    submit (its value written, in no output), `tools/list` and `secret_status` all answer
    within 10 s each, the server's descriptors stay well under the limit, and every idle
    connection is dropped within the real 10 s header timeout (15 s allowed)."""
    server = spawn(LIMITED, env=ENV, cwd=str(project))
    server.initialize(URL_CAPS)
    arguments = {"secrets": [{"name": "API_KEY"}], "reason": "r"}
    params = {"name": "collect_secret", "arguments": arguments}
    server.send({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": params})
    ask = server.expect(lambda m: m.get("method") == "elicitation/create", timeout=20)
    url = ask["params"]["url"]
    port = urllib.parse.urlsplit(url).port
    assert port is not None
    status, body = fetch(url)  # the page is loaded and served before the flood
    assert status == 200, body
    # The claiming GET hands out the nonce; the tab keeps it (a later GET serves none, §17).
    found = re.search(r'name="nonce" value="([^"]+)"', body)
    assert found, body

    idle = flood(port)
    flooded = time.monotonic()
    try:
        assert len(idle) == FLOOD
        time.sleep(0.5)
        assert descriptors(server) < LIMIT - 256

        status, body = fetch(url)
        assert status == 200, body
        listed = server.request("tools/list", {}, timeout=10)
        assert "collect_secret" in {t["name"] for t in listed["result"]["tools"]}

        form = urllib.parse.urlencode({"nonce": found.group(1), "API_KEY": CANARY}).encode()
        status, body = fetch(url, form)
        assert status == 200, body
        assert CANARY not in body
        done = server.response("c", timeout=10)
        assert done["result"]["structuredContent"]["status"] == "written"

        status_params = {"name": "secret_status", "arguments": {}}
        answer = server.request("tools/call", status_params, timeout=10)["result"]
        assert "isError" not in answer, answer
        assert answer["structuredContent"]["keys"] == [{"name": "API_KEY", "status": "set"}]
        assert descriptors(server) < LIMIT - 256

        # None of them ever sends its headers: each is dropped within HEADER_TIMEOUT (the
        # real 10 s) of connecting, the last ones included.
        left = [s for s in idle if still_open(s)]
        while left and time.monotonic() < flooded + 10 + 5:
            time.sleep(0.5)
            left = [s for s in left if still_open(s)]
        assert left == []
    finally:
        for s in idle:
            s.close()

    assert (project / ".env").read_text() == f"API_KEY={CANARY}\n"
    server.close()  # stdin closed: it exits, so its whole stderr is read
    assert CANARY not in server.wait_stderr()
    assert not any(CANARY.encode() in line for line in server.lines)
