"""A real `offprompt serve` whose project's files stop answering (a FUSE mount that never
replies): the reads left stuck are bounded, and a call past the bound is refused in time."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hung_fs import hung_mount
from wire import OFFPROMPT, Wire

from offprompt.offloop import MAX_WORKERS, SLOT_WAIT

ENV = {"OFFPROMPT_SANDBOX": "0", "BROWSER": "false"}
TURNED_AWAY = "file readers are all still waiting on files that have not answered"


def threads(w: Wire) -> int:
    return len(os.listdir(f"/proc/{w.proc.pid}/task"))


def call(w: Wire, rid: str, name: str, arguments: dict[str, Any]) -> None:
    params = {"name": name, "arguments": arguments}
    w.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})


@pytest.mark.slow
def test_stuck_reads_are_bounded_and_a_call_past_them_is_refused(
    spawn: Callable[..., Wire], project: Path
) -> None:
    """MAX_WORKERS secret_status calls stuck on a folder that never answers hold MAX_WORKERS
    threads; ping still answers; a further secret_status and a collect_secret are refused
    (isError, saying what to check) within SLOT_WAIT, starting no thread; let go, the stuck
    calls are answered too, and the server goes on."""
    server = spawn(OFFPROMPT, env=ENV, cwd=str(project))
    server.initialize()
    stuck = project / "stuck"
    stuck.mkdir()
    # A first call starts what any call needs (the threads the server keeps); count after it.
    assert "result" in server.request("tools/call", {"name": "secret_status", "arguments": {}})
    time.sleep(0.3)
    before = threads(server)
    with hung_mount(stuck):
        for i in range(MAX_WORKERS):
            call(server, f"s{i}", "secret_status", {"path": "stuck/.env"})
        assert server.request("ping", rid="p", timeout=5)["result"] == {}
        time.sleep(0.5)
        held = threads(server)
        assert held - before == MAX_WORKERS
        start = time.monotonic()
        call(server, "late-status", "secret_status", {"path": ".env"})
        secrets = [{"name": "API_KEY"}]
        call(server, "late-collect", "collect_secret", {"secrets": secrets, "reason": "r"})
        answers = [
            server.response(rid, timeout=SLOT_WAIT + 10) for rid in ("late-status", "late-collect")
        ]
        took = time.monotonic() - start
        assert threads(server) <= held
        assert [] == [m for m in server.backlog if str(m.get("id", "")).startswith("s")]
    for answer in answers:
        result = answer["result"]
        assert result.get("isError") is True, result
        assert TURNED_AWAY in result["content"][0]["text"]
    assert SLOT_WAIT - 0.5 <= took < SLOT_WAIT + 5, f"{took:.1f}s"
    # Released (the mount aborted and gone): each stuck call now gets its own answer.
    for i in range(MAX_WORKERS):
        assert "result" in server.response(f"s{i}", timeout=10)
    assert server.request("ping", rid="p2", timeout=5)["result"] == {}
