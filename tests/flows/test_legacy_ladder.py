"""The ladder for a 2025-11-25 client (official SDK, legacy handshake) over a real stdio pipe."""

import asyncio

import mcp_types as types
import pytest

from .flow import (
    AtDialog,
    Chromium,
    Flow,
    Form,
    assert_page_closed,
    load,
    post,
    secrets_of,
    structured,
)


@pytest.mark.browser
async def test_accepted_url_elicitation_writes_what_the_person_typed(
    flow: Flow, chromium: Chromium, canary: str
) -> None:
    """Legacy + accept: the elicited URL, filled in Chromium, is written; the emoji match."""
    person = AtDialog(chromium, {"API_KEY": canary})
    async with flow.connect("legacy", action="accept", on_url=person) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (shown,) = await person.fingerprints()
        await assert_page_closed(person.urls[0], "written", canary)
    (params,) = seen.elicitations
    (view,) = await person.written_views()
    assert params.mode == "url"
    assert params.message == "offprompt is collecting API_KEY. Open the page to type it."
    assert params.elicitation_id == structured(result)["request_id"]
    assert not flow.browser_opened()
    assert "You can close this tab." in view  # the host closes its dialog on the complete note
    assert "go back" not in view
    assert "url" not in structured(result)
    flow.assert_fingerprint(result, shown)
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


@pytest.mark.browser
async def test_accepted_elicitation_is_completed_after_the_write(
    flow: Flow, chromium: Chromium, canary: str
) -> None:
    """Legacy + accept: notifications/elicitation/complete names the request once it is written."""
    person = AtDialog(chromium, {"API_KEY": canary})
    async with flow.connect("legacy", action="accept", on_url=person) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        await person.fingerprints()
    completes = [
        n.root if hasattr(n, "root") else n
        for n in seen.notifications
        if isinstance(getattr(n, "root", n), types.ElicitCompleteNotification)
    ]
    assert [c.params.elicitation_id for c in completes] == [structured(result)["request_id"]]
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


async def test_cancelled_dialog_opens_the_browser_once(flow: Flow, canary: str) -> None:
    """Legacy + cancel (a dismissed dialog; what claude -p answers): $BROWSER opens one tab."""
    env = flow.person("http", {"API_KEY": canary})
    async with flow.connect("legacy", action="cancel", env=env) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (note,) = await flow.person_notes()
        await assert_page_closed(note["url"], "written", canary)
    (params,) = seen.elicitations
    assert params.url == note["url"]
    assert "url" not in structured(result)
    completes = [
        n
        for n in seen.notifications
        if isinstance(getattr(n, "root", n), types.ElicitCompleteNotification)
    ]
    assert completes == []  # the dialog is gone; there is nothing to complete
    assert len(await flow.person_notes()) == 1
    flow.assert_fingerprint(result, note["fingerprint"])
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


@pytest.mark.browser
async def test_client_without_elicitation_gets_the_browser(
    flow: Flow, chromium_path: str, canary: str
) -> None:
    """A host that declares nothing: $BROWSER opens the page, typed in Chromium, written."""
    env = flow.person("chromium", {"API_KEY": canary})
    async with flow.connect("legacy", env=env) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (note,) = await flow.person_notes()
        await assert_page_closed(note["url"], "written", canary)
    assert seen.elicitations == []
    flow.assert_fingerprint(result, note["fingerprint"])
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


async def test_accept_after_the_window_does_not_count(flow: Flow, canary: str) -> None:
    """Legacy: an accept slower than OFFPROMPT_ELICIT_WAIT_MS is ignored; $BROWSER opens."""

    async def slow(url: str) -> None:
        await asyncio.sleep(0.6)

    env = {**flow.person("http", {"API_KEY": canary}), "OFFPROMPT_ELICIT_WAIT_MS": "200"}
    async with flow.connect("legacy", action="accept", on_url=slow, env=env) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (note,) = await flow.person_notes()
    assert seen.elicitations[0].url == note["url"]
    flow.assert_fingerprint(result, note["fingerprint"])
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


async def test_page_opened_while_the_dialog_is_unanswered_opens_no_tab(
    flow: Flow, canary: str
) -> None:
    """Legacy, no answer within the window but the page was opened meanwhile: no tab of
    offprompt's; the call waits for the write, and the dialog hears it completed."""
    forms: list[Form] = []

    async def opens_then_answers_late(url: str) -> None:
        forms.append(await load(url))
        await asyncio.sleep(1.2)

    # The window leaves the first GET time to be served on a loaded machine (the page server
    # loads aiohttp after the link is out); the accept still comes after it.
    env = {**flow.person("record"), "OFFPROMPT_ELICIT_WAIT_MS": "800"}
    async with flow.connect("legacy", action="accept", on_url=opens_then_answers_late, env=env) as (
        client,
        seen,
    ):
        call = asyncio.ensure_future(client.call_tool("collect_secret", secrets_of("API_KEY")))
        await asyncio.sleep(1.6)  # the window has passed, the late accept came
        assert not call.done()
        fingerprint = await post(forms[0], {"API_KEY": canary})
        result = await asyncio.wait_for(call, 10)
    assert not flow.browser_opened()
    completes = [
        n.root if hasattr(n, "root") else n
        for n in seen.notifications
        if isinstance(getattr(n, "root", n), types.ElicitCompleteNotification)
    ]
    assert [c.params.elicitation_id for c in completes] == [structured(result)["request_id"]]
    flow.assert_fingerprint(result, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


async def test_codex_gets_no_dialog_for_a_local_page_and_one_tab(flow: Flow, canary: str) -> None:
    """A client named codex-mcp-client declines http:// links unseen: no elicitation is sent,
    $BROWSER opens the page once, and it is written."""
    env = flow.person("http", {"API_KEY": canary})
    async with flow.connect(
        "legacy", action="decline", env=env, client_name="codex-mcp-client"
    ) as (client, seen):
        result = await asyncio.wait_for(
            client.call_tool("collect_secret", secrets_of("API_KEY")), 20
        )
        (note,) = await flow.person_notes()
    assert seen.elicitations == []
    assert b"elicitation/create" not in flow.traffic()
    flow.assert_fingerprint(result, note["fingerprint"], client="codex-mcp-client")
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))
