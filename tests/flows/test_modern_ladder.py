"""The ladder for a 2026-07-28 client (official SDK, no handshake): input_required and retries.

A modern dialog may be on screen from input_required until the retry, and Claude Code's
"Open in browser" tells the server nothing: only a GET of the page says a browser has it. The
person (`flow.person("record")`) notes each tab offprompt opens, so the tests count tabs.
"""

import asyncio
import base64
import json
from collections.abc import Awaitable
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from .flow import (
    AtDialog,
    Chromium,
    Flow,
    assert_page_closed,
    load,
    post,
    post_read,
    secrets_of,
    structured,
    submit,
)

MODERN = "2026-07-28"
ELICIT_KEY = "offprompt_page"
GO_BACK = "Now go back to Claude Code and choose “I'm done, continue”"
CLOSE_ALONE = "You can close this tab."


def first_request_id(first: Any) -> str:
    """The request id carried in an input_required's requestState (signed, not secret)."""
    head = first.request_state.partition(".")[0]
    body = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    return str(body["d"]["request_id"])


async def ask(client: Client, args: dict[str, Any]) -> Any:
    """The first round: input_required with the URL elicitation."""
    first = await client.session.call_tool("collect_secret", args, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    return first


def page_url(first: Any) -> str:
    return str(first.input_requests[ELICIT_KEY].params.url)


def answer(client: Client, args: dict[str, Any], first: Any, action: str) -> Awaitable[Any]:
    """The host's retry carrying the person's answer to the dialog."""
    return client.session.call_tool(
        "collect_secret",
        args,
        allow_input_required=True,
        input_responses={ELICIT_KEY: types.ElicitResult(action=action)},  # type: ignore[arg-type]
        request_state=first.request_state,
    )


@pytest.mark.browser
async def test_person_who_opens_the_page_from_the_dialog_is_sent_back_to_confirm(
    flow: Flow, chromium: Chromium, canary: str
) -> None:
    """ "Open in browser", write, then "I'm done, continue": no tab of ours, and the Written
    view sends the person back to the dialog instead of only saying to close the tab."""
    person = AtDialog(chromium, {"API_KEY": canary}, finish_first=True)
    env = flow.person("record")
    async with flow.connect(
        MODERN, action="accept", on_url=person, env=env, client_name="claude-code"
    ) as (client, seen):
        assert client.protocol_version == MODERN
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (shown,) = await person.fingerprints()
        (view,) = await person.written_views()
        await assert_page_closed(person.urls[0], "written", canary)
    (params,) = seen.elicitations
    assert params.mode == "url"
    assert GO_BACK in view
    assert CLOSE_ALONE not in view
    assert not flow.browser_opened()
    flow.assert_fingerprint(result, shown, client="claude-code")
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))
    first, retry = (answer["result"] for _, answer in flow.tool_calls())
    assert first["resultType"] == "input_required"
    assert retry["resultType"] == "complete"


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (("API_KEY",), "offprompt is collecting API_KEY. Open the page to type it."),
        (
            ("API_KEY", "OTHER_KEY"),
            "offprompt is collecting API_KEY, OTHER_KEY. Open the page to type them.",
        ),
    ],
)
async def test_dialog_message_names_the_keys(
    flow: Flow, names: tuple[str, ...], message: str
) -> None:
    """The dialog's message lists the keys, with "it" for one and "them" for several."""
    async with flow.connect(MODERN, action="accept") as (client, _):
        first = await ask(client, secrets_of(*names))
        await client.call_tool("cancel_secret", {"request_id": first_request_id(first)})
    assert first.input_requests[ELICIT_KEY].params.message == message


async def test_accept_before_anyone_opened_the_page_opens_one_tab(flow: Flow, canary: str) -> None:
    """ "I'm done, continue" before the page was opened: offprompt opens it, once, and waits."""
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept", env=flow.person("record")) as (client, seen):
        first = await ask(client, args)
        retry = asyncio.ensure_future(answer(client, args, first, "accept"))
        (note,) = await flow.person_notes(timeout=10)
        assert note["url"] == page_url(first)
        assert not retry.done()
        fingerprint = await submit(note["url"], {"API_KEY": canary})
        done = await asyncio.wait_for(retry, 10)
    assert len(await flow.person_notes()) == 1
    flow.assert_fingerprint(done, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, done))


async def test_page_opened_before_the_accept_opens_no_tab(flow: Flow, canary: str) -> None:
    """The host's "Open in browser" (a GET, nothing on the wire) then a slow accept: no tab of
    offprompt's, not after the waits and not on the retry."""
    # The dialog wait leaves the first GET time to be served on a loaded machine (the page
    # server loads aiohttp after the link is out); the person then types past both waits.
    env = {**flow.person("record"), "OFFPROMPT_ELICIT_WAIT_MS": "100"}
    env["OFFPROMPT_DIALOG_WAIT_MS"] = "1000"
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept", env=env) as (client, seen):
        first = await ask(client, args)
        form = await load(page_url(first))
        await asyncio.sleep(1.5)  # the person types; both waits pass
        retry = asyncio.ensure_future(answer(client, args, first, "accept"))
        await asyncio.sleep(0.3)
        fingerprint = await post(form, {"API_KEY": canary})
        done = await asyncio.wait_for(retry, 10)
    assert not flow.browser_opened()
    flow.assert_fingerprint(done, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, done))


async def test_no_retry_and_no_visit_opens_one_tab_after_the_dialog_wait(flow: Flow) -> None:
    """A host that never shows the dialog: one tab, after OFFPROMPT_DIALOG_WAIT_MS, not before."""
    env = {**flow.person("record"), "OFFPROMPT_ELICIT_WAIT_MS": "100"}
    env["OFFPROMPT_DIALOG_WAIT_MS"] = "1000"
    async with flow.connect(MODERN, action="accept", env=env) as (client, _):
        first = await ask(client, secrets_of("API_KEY"))
        await asyncio.sleep(0.6)
        assert not flow.browser_opened()
        (note,) = await flow.person_notes(timeout=5)
        await asyncio.sleep(0.5)
        await client.call_tool("cancel_secret", {"request_id": first_request_id(first)})
    assert note["url"] == page_url(first)
    assert len(await flow.person_notes()) == 1


@pytest.mark.parametrize("action", ["accept", "cancel"])
async def test_dialog_wait_after_a_retry_opens_no_second_tab(
    flow: Flow, canary: str, action: str
) -> None:
    """A retry that opens the page, then the dialog wait passing: still one tab."""
    env = {**flow.person("record"), "OFFPROMPT_DIALOG_WAIT_MS": "400"}
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept", env=env) as (client, seen):
        first = await ask(client, args)
        retry = asyncio.ensure_future(answer(client, args, first, action))
        (note,) = await flow.person_notes(timeout=10)
        await asyncio.sleep(1.0)  # the dialog wait has passed
        assert len(await flow.person_notes()) == 1
        fingerprint = await submit(note["url"], {"API_KEY": canary})
        done = await asyncio.wait_for(retry, 10)
    assert len(await flow.person_notes()) == 1
    flow.assert_fingerprint(done, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, done))


async def test_cancelled_dialog_opens_the_browser_once(flow: Flow, canary: str) -> None:
    """2026-07-28 + cancel (Esc; claude -p cancels at once): $BROWSER opens one tab, written."""
    env = flow.person("http", {"API_KEY": canary})
    async with flow.connect(MODERN, action="cancel", env=env) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (note,) = await flow.person_notes()
        await assert_page_closed(note["url"], "written", canary)
    (params,) = seen.elicitations
    assert params.url == note["url"]
    assert len(await flow.person_notes()) == 1
    flow.assert_fingerprint(result, note["fingerprint"])
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


@pytest.mark.parametrize("when", ["dialog on screen", "after the retry"])
async def test_written_page_says_where_to_go_next(flow: Flow, canary: str, when: str) -> None:
    """Written while the dialog may be on screen: back to the agent to confirm. Written while the
    retry waits: the agent goes on by itself, so the tab may be closed."""
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept", client_name="claude-code") as (client, _):
        first = await ask(client, args)
        form = await load(page_url(first))
        retry = None
        if when == "after the retry":
            retry = asyncio.ensure_future(answer(client, args, first, "accept"))
            await asyncio.sleep(0.3)
        fingerprint, view = await post_read(form, {"API_KEY": canary})
        done = await asyncio.wait_for(retry or answer(client, args, first, "accept"), 10)
    assert structured(done)["fingerprint"] == fingerprint
    assert canary not in view
    if when == "dialog on screen":
        assert GO_BACK in view
        assert CLOSE_ALONE not in view
    else:
        assert GO_BACK not in view
        assert CLOSE_ALONE in view


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
    env = {**flow.person("http", {"API_KEY": canary}), "OFFPROMPT_DIALOG_WAIT_MS": "200"}
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept", env=env) as (client, seen):
        first = await ask(client, args)
        (note,) = await flow.person_notes()
        assert note["url"] == page_url(first)
        late = await answer(client, args, first, "accept")
    assert isinstance(late, types.CallToolResult)
    flow.assert_fingerprint(late, note["fingerprint"])
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, late))


async def test_retry_before_the_person_submits_blocks_until_written(
    flow: Flow, canary: str
) -> None:
    """2026-07-28, accept retried while the page is open but empty: the call waits for the write."""
    env = {**flow.person("record"), "OFFPROMPT_DIALOG_WAIT_MS": "200"}
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="accept", env=env) as (client, seen):
        first = await ask(client, args)
        (note,) = await flow.person_notes()  # the browser opened by itself; nobody typed yet
        retry = asyncio.ensure_future(answer(client, args, first, "accept"))
        await asyncio.sleep(0.2)
        assert not retry.done()
        fingerprint = await submit(note["url"], {"API_KEY": canary})
        late = await retry
    assert len(await flow.person_notes()) == 1
    flow.assert_fingerprint(late, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, late))


async def test_decline_while_the_fallback_is_opening_opens_one_tab(flow: Flow) -> None:
    """2026-07-28: a decline while the dialog wait's opener runs opens no second tab, and its
    answer is the person's: the link, for the agent to ask about."""
    env = {
        **flow.person("record"),
        "PERSON_DELAY": "0.6",
        "OFFPROMPT_DIALOG_WAIT_MS": "100",
    }
    args = secrets_of("API_KEY")
    async with flow.connect(MODERN, action="decline", env=env) as (client, _):
        first = await ask(client, args)
        await flow.person_notes()  # the dialog wait's opener is running now
        declined = await asyncio.wait_for(answer(client, args, first, "decline"), 10)
        await asyncio.sleep(1.2)  # a second opener, if any, has noted its URL by now
        await client.call_tool("cancel_secret", {"request_id": first_request_id(first)})
    out = structured(declined)
    assert out["status"] == "awaiting"
    assert out["url"] == page_url(first)
    assert "declined" in out["note"]
    assert len(await flow.person_notes()) == 1
