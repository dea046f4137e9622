"""DESIGN §3 "declared capabilities decide", per connection: Claude Code 2.1.337 can send one
server back to a bare `elicitation: {}` (its legacy-URL denylist) while another keeps URL mode,
so one `offprompt serve` decides the ladder from what each connection declared, never from
what an earlier one did. Raw JSON lines to a real server, `$BROWSER` a script that records the
link it is given (DESIGN §4 step 2)."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from wire import OFFPROMPT, Wire

CLAUDE = {"name": "claude-code", "version": "2.1.337"}
URL_MODE = {"elicitation": {"form": {}, "url": {}}}
BARE = {"elicitation": {}}


def args(name: str) -> dict[str, Any]:
    """A request for `name`: each call asks for its own key, as one already open is shared."""
    return {"secrets": [{"name": name}], "reason": "The billing module calls the API."}


def serve(project: Path, tmp_path: Path) -> tuple[Wire, Path]:
    opened = tmp_path / "opened.txt"
    opener = tmp_path / "browser.sh"
    opener.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {opened}\n')
    opener.chmod(opener.stat().st_mode | stat.S_IXUSR)
    wire = Wire(
        OFFPROMPT,
        env={
            **os.environ,
            "BROWSER": str(opener),
            "OFFPROMPT_SANDBOX": "0",
            "OFFPROMPT_TUNNEL": "off",
            "OFFPROMPT_ELICIT_WAIT_MS": "1500",
            "OFFPROMPT_DIALOG_WAIT_MS": "10000",
            "OFFPROMPT_STATE_DIR": str(tmp_path / "state"),
        },
        cwd=str(project),
    )
    return wire, opened


def links(opened: Path) -> list[str]:
    return opened.read_text().split() if opened.exists() else []


def wait_for_links(opened: Path, count: int, timeout: float = 15) -> list[str]:
    end = time.monotonic() + timeout
    while len(links(opened)) < count and time.monotonic() < end:
        time.sleep(0.05)
    return links(opened)


def initialize(wire: Wire, caps: dict[str, Any], rid: str) -> None:
    wire.request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": CLAUDE},
        rid=rid,
    )
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def stop_call(wire: Wire, rid: str) -> None:
    wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}})


def url_asks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        m
        for m in messages
        if m.get("method") == "elicitation/create" and m["params"].get("mode") == "url"
    ]


def test_a_second_handshake_without_url_mode_gets_the_browser_not_the_dialog(
    project: Path, tmp_path: Path
) -> None:
    """First connection declares URL mode: a URL elicitation goes out (dismissed: the browser
    opens once). A second `initialize` on the same process declares a bare `elicitation: {}`:
    no URL elicitation at all, the browser opens at once. And a third with URL mode again is
    asked again: nothing from the second stuck."""
    wire, opened = serve(project, tmp_path)
    try:
        initialize(wire, URL_MODE, "i1")
        wire.send(
            {"jsonrpc": "2.0", "id": "c1", "method": "tools/call",
             "params": {"name": "collect_secret", "arguments": args("FIRST_KEY")}}
        )  # fmt: skip
        ask = wire.expect(lambda m: m.get("method") == "elicitation/create")
        assert ask["params"]["mode"] == "url"
        wire.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "cancel"}})
        assert len(wait_for_links(opened, 1)) == 1
        stop_call(wire, "c1")

        initialize(wire, BARE, "i2")
        wire.send(
            {"jsonrpc": "2.0", "id": "c2", "method": "tools/call",
             "params": {"name": "collect_secret", "arguments": args("SECOND_KEY")}}
        )  # fmt: skip
        started = time.monotonic()
        assert len(wait_for_links(opened, 2)) == 2
        # No dialog was waited for: the opener ran well inside the elicitation window.
        assert time.monotonic() - started < 1.4
        with pytest.raises(TimeoutError):
            wire.expect(lambda m: m.get("method") == "elicitation/create", timeout=1.0)
        assert [m for m in url_asks(wire.backlog) if "SECOND_KEY" in m["params"]["message"]] == []
        stop_call(wire, "c2")

        initialize(wire, URL_MODE, "i3")
        wire.send(
            {"jsonrpc": "2.0", "id": "c3", "method": "tools/call",
             "params": {"name": "collect_secret", "arguments": args("THIRD_KEY")}}
        )  # fmt: skip
        again = wire.expect(lambda m: m.get("method") == "elicitation/create")
        assert again["params"]["mode"] == "url"
        stop_call(wire, "c3")
    finally:
        wire.kill()


def test_modern_requests_decide_per_message(project: Path, tmp_path: Path) -> None:
    """2026-07-28: a call whose `_meta` declares URL mode gets `input_required` with the URL
    elicitation; the next call on the same process declaring a bare `elicitation: {}` gets no
    dialog, and the browser opens for it."""
    wire, opened = serve(project, tmp_path)

    def meta(caps: dict[str, Any]) -> dict[str, Any]:
        return {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": CLAUDE,
            "io.modelcontextprotocol/clientCapabilities": caps,
        }

    try:
        first = wire.request(
            "tools/call",
            {"name": "collect_secret", "arguments": args("FIRST_KEY"), "_meta": meta(URL_MODE)},
            rid="m1",
        )["result"]
        assert first["resultType"] == "input_required"
        (asked,) = first["inputRequests"].values()
        assert (asked["method"], asked["params"]["mode"]) == ("elicitation/create", "url")
        assert links(opened) == []
        wire.send(
            {"jsonrpc": "2.0", "id": "m2", "method": "tools/call",
             "params": {"name": "collect_secret", "arguments": args("SECOND_KEY"),
                        "_meta": meta(BARE)}}
        )  # fmt: skip
        assert len(wait_for_links(opened, 1, timeout=5)) == 1
        stop_call(wire, "m2")
    finally:
        wire.kill()
