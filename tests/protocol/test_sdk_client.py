"""The official MCP SDK client against our core, in legacy, 2026-07-28 and auto modes."""

from typing import Any

import mcp_types as types
import mcp_types.methods as methods
import pytest
from mcp import MCPError
from sdk import connect
from wire import OFFPROMPT

MODES = ["legacy", "2026-07-28", "auto"]
EXPECTED_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28", "auto": "2026-07-28"}


@pytest.mark.parametrize("mode", MODES)
async def test_connects_and_lists_tools(mode: str) -> None:
    """Each mode connects, lands on the expected revision and lists the tools."""
    async with connect(mode) as (client, _):
        assert client.protocol_version == EXPECTED_VERSION[mode]
        tools = await client.list_tools()
        assert [t.name for t in tools.tools][:3] == ["echo", "wait", "elicit"]
        version = EXPECTED_VERSION[mode]
        methods.validate_server_result(
            "tools/list", version, tools.model_dump(by_alias=True, exclude_none=True)
        )


@pytest.mark.parametrize("mode", MODES)
async def test_echo_result(mode: str) -> None:
    """A plain call returns structured content with the client's name from clientInfo."""
    async with connect(mode) as (client, _):
        r = await client.call_tool("echo", {"text": "hello"})
        assert r.is_error is False
        assert r.structured_content == {
            "echo": "hello",
            "revision": EXPECTED_VERSION[mode],
            "client": "sdk-tests",
        }


@pytest.mark.parametrize("mode", MODES)
async def test_schema_refusal(mode: str) -> None:
    """A schema violation comes back as an isError result the model can read."""
    async with connect(mode) as (client, _):
        r = await client.call_tool("echo", {"text": 5})
        assert r.is_error is True
        assert r.content[0].text.startswith("offprompt refused that request: ")  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["accept", "decline", "cancel", None])
async def test_url_elicitation_matrix(mode: str, action: str | None) -> None:
    """Each mode and answer reaches the tool; without a callback it hears 'unsupported'."""
    async with connect(mode, action=action) as (client, seen):
        r = await client.call_tool("elicit", {})
        outcome = r.structured_content["outcome"]  # type: ignore[index]
        if action is None:
            assert outcome == "unsupported"
            assert seen.elicitations == []
            return
        assert outcome == action
        (params,) = seen.elicitations
        assert params.mode == "url"
        assert params.url.startswith("http://127.0.0.1:")
        legacy = EXPECTED_VERSION[mode] != "2026-07-28"
        if legacy:
            assert params.elicitation_id == "req-1"
        else:
            assert params.elicitation_id is None
            assert r.structured_content["state"] == {"round": 1}  # type: ignore[index]
        completes = [
            n
            for n in seen.notifications
            if isinstance(getattr(n, "root", n), types.ElicitCompleteNotification)
        ]
        assert len(completes) == (1 if legacy and action == "accept" else 0)


async def test_progress_reaches_the_sdk_callback() -> None:
    """Progress notifications reach the SDK's progress callback, strictly increasing."""
    got: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        got.append(progress)

    async with connect("legacy") as (client, _):
        await client.call_tool("wait", {"steps": 3}, progress_callback=on_progress)
    assert got == sorted(set(got))
    assert len(got) == 3


async def test_roots_through_the_sdk() -> None:
    """A legacy client with a roots callback answers our roots/list."""
    async with connect("legacy", roots=["file:///srv/project"]) as (client, _):
        r = await client.call_tool("roots", {})
        assert r.structured_content == {"roots": ["file:///srv/project"]}


@pytest.mark.parametrize("mutate", ["tamper", "replay"])
async def test_manual_loop_rejects_bad_state(mutate: str) -> None:
    """Driving MRTR by hand: a tampered or replayed requestState is refused with -32602."""
    async with connect("2026-07-28", action="accept") as (client, _):
        r1: Any = await client.session.call_tool("elicit", {}, allow_input_required=True)
        state = r1.request_state
        answer = {"page": types.ElicitResult(action="accept")}
        if mutate == "replay":
            ok = await client.session.call_tool(
                "elicit", {}, allow_input_required=True, input_responses=answer, request_state=state
            )
            assert ok.structured_content["outcome"] == "accept"  # type: ignore[union-attr]
        else:
            state = state[:-3] + ("AAA" if not state.endswith("AAA") else "BBB")
        with pytest.raises(MCPError) as err:
            await client.session.call_tool(
                "elicit", {}, allow_input_required=True, input_responses=answer, request_state=state
            )
        assert err.value.code == -32602  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
async def test_offprompt_serve_with_sdk(mode: str) -> None:
    """The real `offprompt serve` connects in every mode."""
    async with connect(mode, command=OFFPROMPT) as (client, seen):
        assert client.protocol_version == EXPECTED_VERSION[mode]
        await client.list_tools()
    assert "Traceback" not in seen.stderr
