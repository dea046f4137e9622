"""The confirmation code over a real stdio pipe (DESIGN §17): the official SDK client answering
the code form (legacy `elicitation/create`, and 2026-07-28 `input_required`), a client without
form elicitation completing through `await_secret` + `confirm`, and raw JSON lines to see that
the code is nowhere in the server's stdout, its stderr (debug logging on) or the journal.

The page's held submit is made by `confirm_serve.py`, which holds it as the page does and hands
the test the code the person's page would show."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from dotenv import dotenv_values
from sdk import Seen, connect
from wire import ROOT, Wire

from offprompt.crypto.confirm import shown

SERVE = [sys.executable, str(ROOT / "tests" / "protocol" / "confirm_serve.py")]
ARGS = {"secrets": [{"name": "API_KEY"}], "reason": "The billing module calls the API."}


def server_env(tmp_path: Path) -> dict[str, str]:
    return {
        "OFFPROMPT_SANDBOX": "1",
        "OFFPROMPT_TUNNEL": "off",
        "OFFPROMPT_AWAIT_SECONDS": "10",
        "OFFPROMPT_LOG": "debug",
        "OFFPROMPT_STATE_DIR": str(tmp_path / "state"),
        "CONFIRM_HOLD": str(tmp_path / "hold.json"),
        "CONFIRM_CODE": str(tmp_path / "code.txt"),
    }


def ask_hold(tmp_path: Path, request_id: str, values: dict[str, str]) -> None:
    """The person submits the page: the server holds it."""
    part = tmp_path / "hold.part"
    part.write_text(json.dumps({"request_id": request_id, "values": values}))
    part.replace(tmp_path / "hold.json")


def read_code(tmp_path: Path) -> str | None:
    out = tmp_path / "code.txt"
    return out.read_text() if out.exists() else None


def wait_code(tmp_path: Path) -> str:
    """The code the person's page shows, once the submit is held."""
    deadline = time.monotonic() + 15
    while (code := read_code(tmp_path)) is None:
        assert time.monotonic() < deadline, "the submit was not held"
        time.sleep(0.05)
    return code


async def held(tmp_path: Path, request_id: str, value: str) -> str:
    ask_hold(tmp_path, request_id, {"API_KEY": value})
    return await asyncio.to_thread(wait_code, tmp_path)


def person(tmp_path: Path, seen: Seen, typed: Callable[[str], str] = shown) -> Any:
    """A host whose person types the code their page shows into the form dialog; the link
    offered for the remote page is declined (the person has the page already)."""

    async def callback(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.elicitations.append(params)
        if getattr(params, "mode", None) == "url":
            return types.ElicitResult(action="decline")
        code = read_code(tmp_path)
        assert code is not None
        return types.ElicitResult(action="accept", content={"code": typed(code)})

    return callback


def no_code(code: str, *texts: str) -> None:
    for text in texts:
        assert code not in text
        assert shown(code) not in text


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result
    content = result.structured_content
    assert isinstance(content, dict)
    return content


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_sdk_client_answers_the_code_form_and_the_value_is_written(
    mode: str, project: Path, tmp_path: Path, canary: str
) -> None:
    """The official SDK client, declaring form elicitation, gets the code form (legacy: a
    server→client request; 2026-07-28: input_required, retried by the SDK itself); the code
    typed there writes the value, which is only in the destination file."""
    seen = Seen()
    async with connect(
        mode,
        command=SERVE,
        env=server_env(tmp_path),
        cwd=str(project),
        callback=person(tmp_path, seen),
    ) as (client, got):
        first = structured(await client.call_tool("collect_secret", ARGS))
        assert first["status"] == "awaiting"
        code = await held(tmp_path, first["request_id"], canary)
        done = await client.call_tool("await_secret", {"request_id": first["request_id"]})
        said = structured(done)
    assert said["status"] == "written"
    assert said["fingerprint"]
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    forms = [e for e in seen.elicitations if getattr(e, "mode", None) != "url"]
    assert len(forms) == 1
    assert forms[0].message == "Type the code the offprompt page shows"
    journal = (tmp_path / "state" / "journal.jsonl").read_text()
    texts = [json.dumps(first), done.model_dump_json(), got.stderr, journal]
    no_code(code, *texts)
    for text in texts:
        assert canary not in text
    assert "confirmation code: right" in got.stderr


async def test_a_client_without_form_completes_through_await_secret(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """No elicitation declared: `confirm` with tries left; a wrong code costs one; the right
    code passed as `confirm` writes the value."""
    async with connect("legacy", command=SERVE, env=server_env(tmp_path), cwd=str(project)) as (
        client,
        got,
    ):
        first = structured(await client.call_tool("collect_secret", ARGS))
        request_id = first["request_id"]
        code = await held(tmp_path, request_id, canary)
        asked = structured(await client.call_tool("await_secret", {"request_id": request_id}))
        assert (asked["status"], asked["tries_left"]) == ("confirm", 5)
        bad = ("2" if code[0] != "2" else "3") + code[1:]
        wrong = structured(
            await client.call_tool("await_secret", {"request_id": request_id, "confirm": bad})
        )
        assert (wrong["status"], wrong["tries_left"]) == ("confirm", 4)
        done = structured(
            await client.call_tool(
                "await_secret", {"request_id": request_id, "confirm": code.lower()}
            )
        )
    assert done["status"] == "written"
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    no_code(code, json.dumps([first, asked, wrong, done]), got.stderr)


def legacy_wire(tmp_path: Path, project: Path, caps: dict[str, Any]) -> Wire:
    wire = Wire(SERVE, env={**os.environ, **server_env(tmp_path)}, cwd=str(project))
    wire.initialize(caps)
    return wire


def call(wire: Wire, rid: str, tool: str, arguments: dict[str, Any]) -> None:
    wire.send(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
    )


def result_of(wire: Wire, rid: str) -> dict[str, Any]:
    reply = wire.response(rid, timeout=20)
    content = reply["result"]["structuredContent"]
    assert isinstance(content, dict)
    return content


def test_the_code_is_nowhere_on_stdout_stderr_or_the_journal(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """Raw JSON lines, a form dialog answered with the code: every line the server wrote, its
    stderr (debug logging) and the journal hold neither the code nor the value."""
    wire = legacy_wire(tmp_path, project, {"elicitation": {"form": {}}})
    try:
        call(wire, "c1", "collect_secret", ARGS)
        request_id = result_of(wire, "c1")["request_id"]
        ask_hold(tmp_path, request_id, {"API_KEY": canary})
        code = wait_code(tmp_path)
        call(wire, "a1", "await_secret", {"request_id": request_id})
        form = wire.expect(lambda m: m.get("method") == "elicitation/create", timeout=20)
        assert form["params"]["mode"] == "form"
        wire.send(
            {
                "jsonrpc": "2.0",
                "id": form["id"],
                "result": {"action": "accept", "content": {"code": shown(code)}},
            }
        )
        assert result_of(wire, "a1")["status"] == "written"
        wire.close()
        stderr = wire.wait_stderr()
    finally:
        wire.kill()
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    stdout = b"".join(wire.lines).decode()
    journal = (tmp_path / "state" / "journal.jsonl").read_text()
    no_code(code, stdout, stderr, journal)
    for text in (stdout, stderr, journal):
        assert canary not in text
    assert "confirmation code: right" in stderr


def test_five_wrong_codes_cancel_over_the_wire(project: Path, tmp_path: Path, canary: str) -> None:
    """Raw JSON lines, no elicitation: four wrong codes count down, the fifth cancels with the
    reason; nothing is written, and neither the code nor the value was ever on stdout."""
    wire = legacy_wire(tmp_path, project, {})
    try:
        call(wire, "c1", "collect_secret", ARGS)
        request_id = result_of(wire, "c1")["request_id"]
        ask_hold(tmp_path, request_id, {"API_KEY": canary})
        code = wait_code(tmp_path)
        bad = ("2" if code[0] != "2" else "3") + code[1:]
        said = []
        for i in range(5):
            call(wire, f"w{i}", "await_secret", {"request_id": request_id, "confirm": bad})
            said.append(result_of(wire, f"w{i}"))
        call(wire, "late", "await_secret", {"request_id": request_id, "confirm": code})
        late = result_of(wire, "late")
        wire.close()
        stderr = wire.wait_stderr()
    finally:
        wire.kill()
    assert [s.get("tries_left") for s in said] == [4, 3, 2, 1, None]
    assert said[-1]["status"] == "cancelled"
    assert "wrong confirmation codes" in said[-1]["note"]
    assert late["status"] == "cancelled"
    assert not (project / ".env").exists()
    stdout = b"".join(wire.lines).decode()
    no_code(code, stdout, stderr)
    assert canary not in stdout + stderr
