"""The confirmation code end to end over a real stdio pipe (DESIGN §17): a real `offprompt serve`
in remote mode (`OFFPROMPT_SANDBOX=1`, no tunnel), the person a sealing HTTP client that opens the
link, claims the request, submits and reads the code off the page's answer; then the official SDK
client answering the code form (legacy `elicitation/create`, and 2026-07-28 `input_required`), a
client without form elicitation completing through `await_secret` + `confirm`, five wrong codes
cancelling, and raw JSON lines to see that the code is nowhere in the server's stdout, its stderr
(debug logging on) or the journal: only in the page's answer."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from dotenv import dotenv_values
from sandbox.person import sealed_submit
from sdk import Seen, connect
from wire import OFFPROMPT, Wire

from offprompt.crypto.confirm import shown

ARGS = {"secrets": [{"name": "API_KEY"}], "reason": "The billing module calls the API."}


def server_env(tmp_path: Path) -> dict[str, str]:
    return {
        "OFFPROMPT_SANDBOX": "1",
        "OFFPROMPT_TUNNEL": "off",
        "OFFPROMPT_AWAIT_SECONDS": "10",
        "OFFPROMPT_LOG": "debug",
        "OFFPROMPT_STATE_DIR": str(tmp_path / "state"),
    }


@dataclass
class Page:
    """What the person's page showed after their submit: its code, and the four emoji their
    page computed from what they typed."""

    code: str
    fingerprint: str
    answer: str


def submit(url: str, value: str) -> Page:
    """The person opens the link, the page claims the request and seals the value; the submit
    is held, and the page's answer carries the code."""
    answer, expected = sealed_submit(url, {"API_KEY": value})
    data = answer.json()
    assert (answer.status, data["status"]) == (200, "confirm"), answer.body[:300]
    assert value not in answer.body
    return Page(data["confirm_code"], expected, answer.body)


async def held(url: str, value: str) -> Page:
    return await asyncio.to_thread(submit, url, value)


def person(seen: Seen, page: list[Page]) -> Any:
    """A host whose person types the code their page shows into the form dialog, as shown
    (with its hyphen); the link offered for the remote page is declined (the person opened it
    already)."""

    async def callback(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.elicitations.append(params)
        if getattr(params, "mode", None) == "url":
            return types.ElicitResult(action="decline")
        assert page, "the code form came before the person submitted the page"
        return types.ElicitResult(action="accept", content={"code": shown(page[0].code)})

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
    """The official SDK client, declaring form elicitation, gets `awaiting` and the sealed
    link; the person submits the page and is shown the code; await_secret asks for it in the
    code form (legacy: a server→client request; 2026-07-28: input_required, retried by the SDK
    itself); the code typed there writes the value, which is only in the destination file, and
    the result's fingerprint is the one the person's page computed."""
    seen = Seen()
    page: list[Page] = []
    async with connect(
        mode,
        command=OFFPROMPT,
        env=server_env(tmp_path),
        cwd=str(project),
        callback=person(seen, page),
    ) as (client, got):
        first = structured(await client.call_tool("collect_secret", ARGS))
        assert (first["status"], "#k=" in first["url"]) == ("awaiting", True)
        page.append(await held(first["url"], canary))
        code = page[0].code
        assert not (project / ".env").exists()
        done = await client.call_tool("await_secret", {"request_id": first["request_id"]})
        said = structured(done)
    assert (said["status"], said["fingerprint"]) == ("written", page[0].fingerprint)
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
    """No elicitation declared: after the person's submit await_secret says `confirm` with
    tries left; a wrong code costs one; the right code passed as `confirm` writes the value
    with the person's fingerprint."""
    async with connect("legacy", command=OFFPROMPT, env=server_env(tmp_path), cwd=str(project)) as (
        client,
        got,
    ):
        first = structured(await client.call_tool("collect_secret", ARGS))
        request_id = first["request_id"]
        page = await held(first["url"], canary)
        code = page.code
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
    assert (done["status"], done["fingerprint"]) == ("written", page.fingerprint)
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    journal = (tmp_path / "state" / "journal.jsonl").read_text()
    texts = [json.dumps([first, asked, wrong, done]), got.stderr, journal]
    no_code(code, *texts)
    for text in texts:
        assert canary not in text


async def test_five_wrong_codes_cancel_through_the_sdk_client(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """The SDK client without form elicitation: five wrong codes as `confirm` count down from
    4 and the fifth cancels; the right code after that writes nothing, and no file is made."""
    async with connect("legacy", command=OFFPROMPT, env=server_env(tmp_path), cwd=str(project)) as (
        client,
        got,
    ):
        first = structured(await client.call_tool("collect_secret", ARGS))
        request_id = first["request_id"]
        code = (await held(first["url"], canary)).code
        bad = ("2" if code[0] != "2" else "3") + code[1:]
        said = [
            structured(
                await client.call_tool("await_secret", {"request_id": request_id, "confirm": bad})
            )
            for _ in range(5)
        ]
        late = structured(
            await client.call_tool("await_secret", {"request_id": request_id, "confirm": code})
        )
    assert [(s["status"], s.get("tries_left")) for s in said] == [
        ("confirm", 4),
        ("confirm", 3),
        ("confirm", 2),
        ("confirm", 1),
        ("cancelled", None),
    ]
    assert late["status"] == "cancelled"
    assert not (project / ".env").exists()
    journal_file = tmp_path / "state" / "journal.jsonl"
    journal = journal_file.read_text() if journal_file.exists() else ""
    texts = [json.dumps([first, *said, late]), got.stderr, journal]
    no_code(code, *texts)
    for text in texts:
        assert canary not in text


def legacy_wire(tmp_path: Path, project: Path, caps: dict[str, Any]) -> Wire:
    wire = Wire(OFFPROMPT, env={**os.environ, **server_env(tmp_path)}, cwd=str(project))
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
    """Raw JSON lines, a form dialog answered with the code the person's page showed: every
    line the server wrote, its stderr (debug logging) and the journal hold neither the code nor
    the value; the page's answer was the only place the code appeared."""
    wire = legacy_wire(tmp_path, project, {"elicitation": {"form": {}}})
    try:
        call(wire, "c1", "collect_secret", ARGS)
        first = result_of(wire, "c1")
        request_id = first["request_id"]
        page = submit(first["url"], canary)
        code = page.code
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
        done = result_of(wire, "a1")
        assert (done["status"], done["fingerprint"]) == ("written", page.fingerprint)
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
        first = result_of(wire, "c1")
        request_id = first["request_id"]
        code = submit(first["url"], canary).code
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
