"""2026-07-28 requestState on the real server: tampered, expired, replayed or moved → -32602."""

import asyncio
import base64
import json
from typing import Any

import mcp_types as types
import pytest
from mcp import MCPError

from .flow import PY, SHORT_STATE_SERVE, Flow, assert_page_closed, secrets_of, structured, submit

MODERN = "2026-07-28"
ELICIT_KEY = "offprompt_page"
ACCEPT = {ELICIT_KEY: types.ElicitResult(action="accept")}


async def first_round(client: Any, args: dict[str, Any]) -> Any:
    first = await client.session.call_tool("collect_secret", args, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    return first


async def retry(
    client: Any, args: dict[str, Any], state: str, action: str = "accept"
) -> types.CallToolResult:
    answer = {ELICIT_KEY: types.ElicitResult(action=action)}  # type: ignore[arg-type]
    return await client.session.call_tool(  # type: ignore[no-any-return]
        "collect_secret",
        args,
        allow_input_required=True,
        input_responses=answer,
        request_state=state,
    )


async def assert_invalid_params(call: Any, words: str) -> None:
    with pytest.raises(MCPError) as err:
        await call
    assert err.value.code == -32602  # type: ignore[attr-defined]
    assert words in str(err.value)


def tamper(state: str, part: str) -> str:
    """The state with its MAC broken, or its payload changed under the same MAC."""
    head, _, mac = state.partition(".")
    if part == "mac":
        return f"{head}.{mac[:-2]}{'AA' if not mac.endswith('AA') else 'BB'}"
    body = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    body["x"] += 3600  # live longer
    raw = json.dumps(body, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode() + "." + mac


@pytest.mark.parametrize("part", ["mac", "payload"])
async def test_tampered_state_is_refused_and_the_genuine_one_still_works(
    flow: Flow, canary: str, part: str
) -> None:
    """A tampered requestState is -32602 and changes nothing; the genuine one still counts."""
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept") as (client, seen):
        first = await first_round(client, args)
        url = first.input_requests[ELICIT_KEY].params.url
        bad = retry(client, args, tamper(first.request_state, part))
        await assert_invalid_params(bad, "failed verification")
        assert not (flow.project / ".env").exists()
        fingerprint = await submit(url, {"API_KEY": canary})
        done = await retry(client, args, first.request_state)
    flow.assert_fingerprint(done, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, done))


async def test_replayed_state_is_refused(flow: Flow, canary: str) -> None:
    """A requestState opens once: the same state sent again is -32602."""
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept") as (client, seen):
        first = await first_round(client, args)
        cancelled = await retry(client, args, first.request_state, action="cancel")
        url = structured(cancelled)["url"]  # no browser opens here: the link comes back
        await assert_invalid_params(retry(client, args, first.request_state), "was already used")
        fingerprint = await submit(url, {"API_KEY": canary})
        done = await client.call_tool(
            "await_secret", {"request_id": structured(cancelled)["request_id"]}
        )
        await assert_page_closed(url, "written", canary)
    flow.assert_fingerprint(done, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, cancelled, done))


async def test_expired_state_is_refused(flow: Flow) -> None:
    """A requestState past its expiry is -32602, and nothing is written."""
    args = secrets_of("API_KEY")
    env = {"FLOWS_STATE_TTL": "0.3"}
    child = (PY, str(SHORT_STATE_SERVE))
    async with flow.connect(MODERN, action="accept", env=env, child=child) as (client, _):
        first = await first_round(client, args)
        await asyncio.sleep(0.5)
        await assert_invalid_params(retry(client, args, first.request_state), "has expired")
    assert not (flow.project / ".env").exists()


async def test_state_for_other_arguments_is_refused(flow: Flow) -> None:
    """A requestState retried with other arguments (another key, say) is -32602."""
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept") as (client, _):
        first = await first_round(client, args)
        moved = retry(client, secrets_of("OTHER_KEY"), first.request_state)
        await assert_invalid_params(moved, "belongs to another tool call")
    assert not (flow.project / ".env").exists()


async def test_genuine_state_after_the_request_expired_reports_expired(flow: Flow) -> None:
    """A valid requestState retried after the request's TTL gets the expired result."""
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept", env={"OFFPROMPT_TTL": "1"}) as (client, _):
        first = await first_round(client, args)
        await asyncio.sleep(1.2)
        late = await retry(client, args, first.request_state)
    out = structured(late)
    assert out["status"] == "expired"
    assert "url" not in out
    assert not (flow.project / ".env").exists()
