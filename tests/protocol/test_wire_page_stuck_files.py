"""A real `offprompt serve` whose page is asked for a target on a file system that never answers
(a FUSE mount that never replies): the page's file work (looking at the target, the write) runs
in the same bounded daemon threads as the tools' (offprompt/offloop.py), so it neither holds the
server's exit on stdin EOF nor adds threads past the bound."""

from __future__ import annotations

import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import browser
from hung_fs import hung_mount
from wire import OFFPROMPT, Wire

from offprompt.offloop import MAX_WORKERS, SLOT_WAIT

ENV = {"OFFPROMPT_SANDBOX": "0", "BROWSER": "false"}
URL_CAPS = {"elicitation": {"form": {}, "url": {}}}
TURNED_AWAY = "file readers are all still waiting on files that have not answered"
EXIT_WITHIN = 2.0


def threads(w: Wire) -> int:
    return len(os.listdir(f"/proc/{w.proc.pid}/task"))


# The person's browser: it keeps the claim cookie of the page it opened (DESIGN §17).
_BROWSER = browser()


def fetch(url: str, data: bytes | None = None, timeout: float = 60) -> tuple[int, str]:
    try:
        with _BROWSER.open(url, data=data, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def in_background(fn: Callable[[], tuple[int, str]]) -> list[tuple[int, str]]:
    """Run `fn` in a daemon thread of the test; its answer lands in the list returned."""
    answers: list[tuple[int, str]] = []

    def run() -> None:
        try:
            answers.append(fn())
        except OSError as e:  # the server went away, as it should at exit
            answers.append((0, type(e).__name__))

    threading.Thread(target=run, daemon=True).start()
    return answers


def page_url(server: Wire, path: str) -> str:
    """Ask for API_KEY into `path`; the URL the server's elicitation carries (never answered)."""
    arguments = {"secrets": [{"name": "API_KEY"}], "reason": "r", "sink": {"path": path}}
    params = {"name": "collect_secret", "arguments": arguments}
    server.send({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": params})
    ask = server.expect(lambda m: m.get("method") == "elicitation/create", timeout=20)
    url = ask["params"]["url"]
    assert isinstance(url, str)
    return url


def started(spawn: Callable[..., Wire], project: Path) -> tuple[Wire, Path, str, str]:
    """A server with one open request into stuck/.env, its page fetched once (so what any page
    request starts is running), and the page's nonce."""
    server = spawn(OFFPROMPT, env=ENV, cwd=str(project))
    server.initialize(URL_CAPS)
    stuck = project / "stuck"
    stuck.mkdir()
    url = page_url(server, "stuck/.env")
    status, body = fetch(url, timeout=20)
    assert status == 200, body
    found = re.search(r'name="nonce" value="([^"]+)"', body)
    assert found, body
    time.sleep(0.3)
    return server, stuck, url, found.group(1)


def exits_in_time(server: Wire) -> float:
    start = time.monotonic()
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    server.proc.wait(EXIT_WITHIN + 5)
    return time.monotonic() - start


@pytest.mark.slow
def test_a_page_stuck_on_its_target_does_not_hold_the_exit(
    spawn: Callable[..., Wire], project: Path
) -> None:
    """GETs and a POST of a page whose target never answers are stuck; stdin closes, and the
    server exits within 2 s all the same, having written nothing anywhere."""
    server, stuck, url, nonce = started(spawn, project)
    with hung_mount(stuck):
        gets = [in_background(lambda: fetch(url)) for _ in range(3)]
        form = urllib.parse.urlencode({"nonce": nonce, "API_KEY": "canary-h8-exit-7f3a"}).encode()
        post = in_background(lambda: fetch(url, form))
        time.sleep(1.0)
        assert [[], [], [], []] == [*gets, post]  # all waiting on the mount
        took = exits_in_time(server)
    assert took < EXIT_WITHIN, f"{took:.1f}s"
    assert not (project / ".env").exists()
    assert "canary-h8-exit-7f3a" not in server.wait_stderr()


@pytest.mark.slow
def test_a_page_stuck_on_its_target_adds_no_thread_past_the_bound(
    spawn: Callable[..., Wire], project: Path
) -> None:
    """Page GETs past the bound and secret_status calls stuck on the same mount hold at most
    MAX_WORKERS threads between them; a GET turned away answers the page's usual form with the
    target's problem beside it (200, as for any target it cannot check); the exit is in time."""
    server, stuck, url, _ = started(spawn, project)
    before = threads(server)
    with hung_mount(stuck):
        gets = [in_background(lambda: fetch(url)) for _ in range(MAX_WORKERS + 2)]
        time.sleep(1.0)  # the GETs hold every worker, two wait; the status calls queue after
        for i in range(MAX_WORKERS):
            params = {"name": "secret_status", "arguments": {"path": "stuck/.env"}}
            server.send({"jsonrpc": "2.0", "id": f"s{i}", "method": "tools/call", "params": params})
        time.sleep(1.5)
        assert threads(server) - before <= MAX_WORKERS
        deadline = time.monotonic() + SLOT_WAIT + 10
        while time.monotonic() < deadline and sum(map(len, gets)) < 2:
            time.sleep(0.2)
        assert threads(server) - before <= MAX_WORKERS
        answered = [a[0] for a in gets if a]
        assert len(answered) == 2, answered
        for status, body in answered:
            assert status == 200
            assert TURNED_AWAY in body
            assert 'name="API_KEY"' in body  # the form itself, to fill once the disk answers
        took = exits_in_time(server)
    assert took < EXIT_WITHIN, f"{took:.1f}s"
