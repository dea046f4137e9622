"""`offprompt serve` believing it is remote: a link over MCP, Chromium through the tunnel, the
submit held until the page's confirmation code comes back in `await_secret`, the value in the
file and nowhere else, the code only in the page's answer, and cloudflared gone when the server
is."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page
from wire import OFFPROMPT, Wire

from .conftest import FakeCloudflared, type_and_submit, wait_written
from .edge import FakeEdge
from .person import sealed_submit

ARGS = {"secrets": [{"name": "API_KEY"}], "reason": "The billing module calls the API."}


@pytest.fixture
def serve(edge: FakeEdge, cloudflared: FakeCloudflared, project: Path) -> Iterator[Wire]:
    """`offprompt serve` in the project, remote, with the fake cloudflared and edge."""
    wire = Wire(OFFPROMPT, env={"OFFPROMPT_SANDBOX": "1"}, cwd=str(project))
    wire.initialize()
    try:
        yield wire
    finally:
        stop(wire)


def stop(wire: Wire) -> None:
    """Close stdin as a host does, so cloudflared is stopped too; kill only if that hangs."""
    try:
        wire.close(10)
    except subprocess.TimeoutExpired:
        pass
    wire.kill()


def call(wire: Wire, name: str, arguments: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    answer = wire.request("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)
    result: dict[str, Any] = answer["result"]
    assert result.get("isError") is not True, result
    structured: dict[str, Any] = result["structuredContent"]
    return structured


def wait_gone(cloudflared: FakeCloudflared, seconds: float = 10) -> list[int]:
    deadline = time.monotonic() + seconds
    while cloudflared.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    return cloudflared.alive()


def journal() -> str:
    path = Path(os.environ["OFFPROMPT_STATE_DIR"]) / "journal.jsonl"
    return path.read_text() if path.exists() else ""


@pytest.mark.browser
def test_remote_serve_end_to_end_in_chromium(
    serve: Wire,
    edge: FakeEdge,
    cloudflared: FakeCloudflared,
    tab: Page,
    project: Path,
    canary: str,
) -> None:
    """Link over MCP → Chromium claims, seals and submits through the tunnel → held, the page
    shows the code → await_secret says `confirm`, then with the code `written` → .env holds
    the value and the page says Written with the same emoji; no value in MCP traffic, stderr,
    the journal or the tunnel, and the code in none but what the agent sent back."""
    out = call(serve, "collect_secret", ARGS)
    assert out["url"].startswith(f"https://{edge.registered[0]}/r/")
    code = type_and_submit(tab, out["url"], canary)
    held = call(serve, "await_secret", {"request_id": out["request_id"]})
    assert (held["status"], (project / ".env").exists()) == ("confirm", False)
    answers = b"".join(serve.lines)
    done = call(serve, "await_secret", {"request_id": out["request_id"], "confirm": code})
    assert (done["status"], done["fingerprint"]) == ("written", wait_written(tab))
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"
    assert serve.close() == 0
    mcp = b"".join(serve.lines) + b"".join(serve.sent)
    assert canary.encode() not in mcp + edge.traffic()
    assert canary not in serve.wait_stderr() + journal()
    assert code.encode() not in answers + b"".join(serve.lines)
    assert code not in serve.wait_stderr() + journal()


def test_remote_serve_answers_awaiting_with_the_sealed_link(serve: Wire, edge: FakeEdge) -> None:
    """collect_secret returns at once: awaiting, the tunnel link with #k=, 30 minutes."""
    started = time.monotonic()
    out = call(serve, "collect_secret", ARGS)
    assert (out["status"], "#k=" in out["url"], out["expires_in"] > 1700) == (
        "awaiting",
        True,
        True,
    )
    assert time.monotonic() - started < 20


def test_remote_serve_with_a_sealing_client_writes(serve: Wire, project: Path, canary: str) -> None:
    """A client sealing as the page does, through the tunnel, is held for its code; the code
    back in await_secret gets the value written with the page's fingerprint."""
    out = call(serve, "collect_secret", ARGS)
    answer, expected = sealed_submit(out["url"], {"API_KEY": canary})
    assert (answer.status, answer.json()["status"]) == (200, "confirm")
    code = answer.json()["confirm_code"]
    done = call(serve, "await_secret", {"request_id": out["request_id"], "confirm": code})
    assert (done["status"], done["fingerprint"]) == ("written", expected)
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"


def test_stdin_eof_stops_cloudflared(serve: Wire, cloudflared: FakeCloudflared) -> None:
    """When the host closes stdin, the server exits 0 and cloudflared is stopped."""
    call(serve, "collect_secret", ARGS)
    assert (serve.close(10), wait_gone(cloudflared)) == (0, [])


def test_sigterm_stops_cloudflared(serve: Wire, cloudflared: FakeCloudflared) -> None:
    """SIGTERM to the server alone also stops cloudflared, quietly."""
    call(serve, "collect_secret", ARGS)
    serve.proc.send_signal(signal.SIGTERM)
    assert (serve.proc.wait(10), wait_gone(cloudflared)) == (0, [])
    assert "Traceback" not in serve.wait_stderr()


def test_stderr_names_the_tunnel_host_and_nothing_cloudflared_printed(
    serve: Wire, edge: FakeEdge
) -> None:
    """The log has the tunnel's hostname, never cloudflared's own lines."""
    call(serve, "collect_secret", ARGS)
    serve.close(10)
    err = serve.wait_stderr()
    assert (edge.registered[0] in err, "quick Tunnel" in err) == (True, False)


def test_tunnel_off_serve_gives_the_loopback_link_and_says_why(
    edge: FakeEdge, cloudflared: FakeCloudflared, project: Path
) -> None:
    """OFFPROMPT_TUNNEL=off: a 127.0.0.1 link with #k=, a note on port forwarding, no child."""
    wire = Wire(
        OFFPROMPT, env={"OFFPROMPT_SANDBOX": "1", "OFFPROMPT_TUNNEL": "off"}, cwd=str(project)
    )
    try:
        wire.initialize()
        out = call(wire, "collect_secret", ARGS)
    finally:
        stop(wire)
    assert out["url"].startswith("http://127.0.0.1:")
    assert ("#k=" in out["url"], "OFFPROMPT_TUNNEL=off" in out["note"]) == (True, True)
    assert cloudflared.starts() == []


def test_result_is_valid_json_text_too(serve: Wire) -> None:
    """The awaiting result's text block is the same JSON as structuredContent."""
    answer = serve.request("tools/call", {"name": "collect_secret", "arguments": ARGS}, timeout=60)
    result = answer["result"]
    assert json.loads(result["content"][-1]["text"]) == result["structuredContent"]
