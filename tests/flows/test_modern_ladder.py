"""The ladder for a 2026-07-28 client (official SDK, no handshake): input_required and retries."""

import asyncio
import base64
import json
from typing import Any

import mcp_types as types
import pytest

from .flow import AtDialog, Chromium, Flow, assert_page_closed, secrets_of, submit

MODERN = "2026-07-28"
ELICIT_KEY = "offprompt_page"


def first_request_id(first: Any) -> str:
    """The request id sealed in an input_required's requestState (signed, not secret)."""
    head = first.request_state.partition(".")[0]
    body = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    return str(body["d"]["request_id"])


@pytest.mark.browser
async def test_accepted_input_request_writes_what_the_person_typed(
    flow: Flow, chromium: Chromium, canary: str
) -> None:
    """2026-07-28 + accept: the URL from input_required, filled in Chromium, is written."""
    person = AtDialog(chromium, {"API_KEY": canary})
    env = flow.person("record")
    async with flow.connect(MODERN, action="accept", on_url=person, env=env) as (client, seen):
        assert client.protocol_version == MODERN
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (shown,) = await person.fingerprints()
        await assert_page_closed(person.urls[0], "written", canary)
    (params,) = seen.elicitations
    assert params.mode == "url"
    assert params.message == "offprompt is collecting API_KEY. Open the page to type them."
    assert not flow.browser_opened()
    flow.assert_fingerprint(result, shown)
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))
    first, retry = (answer["result"] for _, answer in flow.tool_calls())
    assert first["resultType"] == "input_required"
    assert retry["resultType"] == "complete"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_refused_input_request_opens_the_browser(
    flow: Flow, canary: str, action: str
) -> None:
    """2026-07-28 + decline/cancel (claude -p cancels): the retry opens $BROWSER and writes."""
    env = flow.person("http", {"API_KEY": canary})
    async with flow.connect(MODERN, action=action, env=env) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (note,) = await flow.person_notes()
        await assert_page_closed(note["url"], "written", canary)
    (params,) = seen.elicitations
    assert params.url == note["url"]
    flow.assert_fingerprint(result, note["fingerprint"])
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


async def test_modern_client_without_elicitation_gets_the_browser(flow: Flow, canary: str) -> None:
    """2026-07-28 without elicitation: no input_required, $BROWSER opens the page at once."""
    env = flow.person("http", {"API_KEY": canary})
    async with flow.connect(MODERN, env=env) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (note,) = await flow.person_notes()
    assert seen.elicitations == []
    ((_, answer),) = flow.tool_calls()
    assert answer["result"]["resultType"] == "complete"
    flow.assert_fingerprint(result, note["fingerprint"])
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


async def test_no_retry_in_the_window_opens_the_browser_and_a_late_accept_is_written(
    flow: Flow, canary: str
) -> None:
    """2026-07-28 without a retry: $BROWSER opens after the wait; a late accept says written."""
    env = {**flow.person("http", {"API_KEY": canary}), "OFFPROMPT_ELICIT_WAIT_MS": "200"}
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept", env=env) as (client, seen):
        first: Any = await client.session.call_tool(
            "collect_secret", args, allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)
        asked = first.input_requests[ELICIT_KEY]
        (note,) = await flow.person_notes()
        assert note["url"] == asked.params.url
        late = await client.session.call_tool(
            "collect_secret",
            args,
            allow_input_required=True,
            input_responses={ELICIT_KEY: types.ElicitResult(action="accept")},
            request_state=first.request_state,
        )
    assert isinstance(late, types.CallToolResult)
    flow.assert_fingerprint(late, note["fingerprint"])
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, late))


async def test_retry_before_the_person_submits_blocks_until_written(
    flow: Flow, canary: str
) -> None:
    """2026-07-28, accept retried while the page is open but empty: the call waits for the write."""
    env = {**flow.person("record"), "OFFPROMPT_ELICIT_WAIT_MS": "200"}
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept", env=env) as (client, seen):
        first: Any = await client.session.call_tool(
            "collect_secret", args, allow_input_required=True
        )
        (note,) = await flow.person_notes()  # the browser opened by itself; nobody typed yet
        retry = asyncio.ensure_future(
            client.session.call_tool(
                "collect_secret",
                args,
                allow_input_required=True,
                input_responses={ELICIT_KEY: types.ElicitResult(action="accept")},
                request_state=first.request_state,
            )
        )
        await asyncio.sleep(0.2)
        assert not retry.done()
        fingerprint = await submit(note["url"], {"API_KEY": canary})
        late = await retry
    flow.assert_fingerprint(late, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, late))


async def test_decline_while_the_fallback_is_opening_opens_one_tab(flow: Flow) -> None:
    """2026-07-28: a decline while the fallback is opening the browser opens no second tab."""
    env = {
        **flow.person("record"),
        "PERSON_DELAY": "0.6",
        "OFFPROMPT_ELICIT_WAIT_MS": "100",
    }
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="decline", env=env) as (client, _):
        first: Any = await client.session.call_tool(
            "collect_secret", args, allow_input_required=True
        )
        await flow.person_notes()  # the fallback's opener is running now
        declined = asyncio.ensure_future(
            client.session.call_tool(
                "collect_secret",
                args,
                allow_input_required=True,
                input_responses={ELICIT_KEY: types.ElicitResult(action="decline")},
                request_state=first.request_state,
            )
        )
        await asyncio.sleep(1.2)  # a second opener, if any, has noted its URL by now
        await client.call_tool("cancel_secret", {"request_id": first_request_id(first)})
        await declined
    assert len(await flow.person_notes()) == 1
