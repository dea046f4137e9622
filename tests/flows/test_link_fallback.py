"""The last step of the ladder: no browser opens, the link goes in the result, await waits."""

import asyncio

import pytest

from .flow import Chromium, Flow, assert_page_closed, secrets_of, structured, submit

FAILING = {
    "false": "false",
    "missing": "/nonexistent/offprompt-test-browser %s",
}


def assert_awaiting_link(out: dict[str, object]) -> str:
    """An awaiting result that hands the agent the link; returns the link."""
    assert out["status"] == "awaiting"
    assert out["names"] == ["API_KEY"]
    assert out["sink"] == {"kind": "dotenv", "path": ".env"}
    assert isinstance(out["expires_in"], int)
    assert 0 < out["expires_in"] <= 300
    url = out["url"]
    assert isinstance(url, str)
    assert url.startswith("http://127.0.0.1:")
    note = out["note"]
    assert isinstance(note, str)
    assert "Show the person the url" in note
    assert str(out["request_id"]) in note
    assert "tell_user" not in out
    assert "fingerprint" not in out
    return url


@pytest.mark.parametrize("browser", sorted(FAILING))
async def test_failing_browser_hands_out_the_link(flow: Flow, canary: str, browser: str) -> None:
    """$BROWSER failing (exit 1, or no such command): awaiting + url; await_secret → written."""
    async with flow.connect("legacy", env={"BROWSER": FAILING[browser]}) as (client, seen):
        first = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        url = assert_awaiting_link(structured(first))
        fingerprint = await submit(url, {"API_KEY": canary})
        done = await client.call_tool(
            "await_secret", {"request_id": structured(first)["request_id"]}
        )
        await assert_page_closed(url, "written", canary)
    flow.assert_fingerprint(done, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, done))


@pytest.mark.browser
async def test_link_opened_in_chromium_is_written(
    flow: Flow, chromium: Chromium, canary: str
) -> None:
    """The person opens the handed-out link in Chromium while await_secret waits: written."""
    async with flow.connect("legacy") as (client, seen):
        first = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        url = assert_awaiting_link(structured(first))
        waiting = asyncio.ensure_future(
            client.call_tool("await_secret", {"request_id": structured(first)["request_id"]})
        )
        shown = await chromium.fill_and_submit(url, {"API_KEY": canary})
        done = await waiting
    flow.assert_fingerprint(done, shown)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, done))


async def test_await_returns_awaiting_until_the_person_submits(flow: Flow, canary: str) -> None:
    """await_secret past OFFPROMPT_AWAIT_SECONDS says awaiting again; the next one says written."""
    env = {"OFFPROMPT_AWAIT_SECONDS": "1"}
    async with flow.connect("legacy", env=env) as (client, seen):
        first = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        request_id = structured(first)["request_id"]
        again = await client.call_tool("await_secret", {"request_id": request_id})
        assert structured(again)["request_id"] == request_id
        url = assert_awaiting_link(structured(again))
        fingerprint = await submit(url, {"API_KEY": canary})
        done = await client.call_tool("await_secret", {"request_id": request_id})
    flow.assert_fingerprint(done, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, again, done))


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_declined_dialog_opens_no_tab_and_hands_out_the_link(
    flow: Flow, canary: str, mode: str
) -> None:
    """Decline is the person's answer: no tab, ever; the agent gets the link and a note to ask
    the person; the link still works and await_secret says written."""
    env = {**flow.person("record"), "OFFPROMPT_DIALOG_WAIT_MS": "200"}
    async with flow.connect(mode, action="decline", env=env) as (client, seen):
        first = await asyncio.wait_for(
            client.call_tool("collect_secret", secrets_of("API_KEY")), 10
        )
        out = structured(first)
        await asyncio.sleep(0.8)  # past the dialog wait: nothing opens
        assert not flow.browser_opened()
        request_id = str(out["request_id"])
        assert out["status"] == "awaiting"
        assert out["url"] == seen.elicitations[0].url
        note = out["note"]
        assert "declined" in note
        assert f"await_secret with request_id {request_id}" in note
        assert f"cancel_secret with request_id {request_id}" in note
        assert "on its own line" in note
        fingerprint = await submit(out["url"], {"API_KEY": canary})
        done = await client.call_tool("await_secret", {"request_id": request_id})
    assert not flow.browser_opened()
    flow.assert_fingerprint(done, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, done))
