"""A remote request in real Chromium through the tunnel: the page claims the request, seals the
values, shows the confirmation code of its held submit; the code typed back through
`await_secret` writes them, and the page then says Written. Never clear on the wire.

The service runs on its own event-loop thread (as in `offprompt serve`); Chromium reaches the
tunnel's hostname through the fake edge (its HTTPS proxy), as a browser reaches Cloudflare.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from playwright.sync_api import Browser, Page

from offprompt.crypto.confirm import shown
from offprompt.crypto.seal import SealKey, b64u_encode
from offprompt.mcp.tool import ToolContext
from offprompt.tools.service import Service

from .conftest import FakeCloudflared, type_and_submit, wait_written
from .edge import FakeEdge
from .test_remote_service import ARGS, FakePeer, context, data

pytestmark = pytest.mark.browser

T = TypeVar("T")


class Remote:
    """A remote-mode Service on a background loop, as `offprompt serve` runs it."""

    def __init__(self, project: Path, env: dict[str, str]) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.service = Service(cwd=project, env=env)

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=60)

    def collect(self, ctx: ToolContext | None = None) -> dict[str, Any]:
        return data(self.call(self.service.collect(ARGS, ctx or context(FakePeer()))))

    def await_secret(self, request_id: str, confirm: str | None = None) -> dict[str, Any]:
        """await_secret, with the person's code as `confirm` when given."""
        args = {"request_id": request_id} | ({"confirm": confirm} if confirm is not None else {})
        return data(self.call(self.service.await_secret(args, context(FakePeer()))))

    def close(self) -> None:
        self.call(self.service.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def remote(edge: FakeEdge, cloudflared: FakeCloudflared, project: Path) -> Iterator[Remote]:
    env = {**os.environ, "OFFPROMPT_SANDBOX": "1", "OFFPROMPT_AWAIT_SECONDS": "5"}
    running = Remote(project, env)
    try:
        yield running
    finally:
        running.close()


def test_chromium_writes_a_sealed_value_through_the_tunnel(
    remote: Remote, tab: Page, project: Path, canary: str
) -> None:
    """Typed in Chromium on the tunnel link, the submit is held (nothing written); the code
    the page shows, typed back through await_secret, lands the value in .env and the page then
    says Written."""
    out = remote.collect()
    code = type_and_submit(tab, out["url"], canary)
    assert remote.await_secret(out["request_id"])["status"] == "confirm"
    assert not (project / ".env").exists()
    assert remote.await_secret(out["request_id"], code)["status"] == "written"
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"
    wait_written(tab)


def test_page_and_agent_see_the_same_fingerprint(remote: Remote, tab: Page, canary: str) -> None:
    """The four emoji the page computed itself from what was typed (shown beside the code,
    and again once written) are the ones await_secret reports for the confirmed write."""
    out = remote.collect()
    code = type_and_submit(tab, out["url"], canary)
    hint = tab.locator("#confirm .hint").inner_text()
    reported = remote.await_secret(out["request_id"], code)["fingerprint"]
    computed = wait_written(tab)
    assert (hint, computed) == (f"Agent will say {reported}", reported)


def test_tunnel_never_carries_the_value(
    remote: Remote, edge: FakeEdge, tab: Page, canary: str
) -> None:
    """Every byte the browser sent through the tunnel, from the claim to the page saying
    Written: a sealed form, and no value."""
    out = remote.collect()
    code = type_and_submit(tab, out["url"], canary)
    assert remote.await_secret(out["request_id"], code)["status"] == "written"
    wait_written(tab)
    traffic = edge.traffic()
    assert (b"sealed=v1." in traffic, canary.encode() in traffic) == (True, False)


def test_posted_body_is_only_nonce_and_sealed(remote: Remote, tab: Page, canary: str) -> None:
    """The page posts twice: its claim (the nonce only), then the submit with exactly two
    fields, nonce and sealed; nothing more once the code comes back."""
    out = remote.collect()
    posts: list[tuple[str, str]] = []
    tab.on(
        "request",
        lambda r: posts.append((r.url, r.post_data or "")) if r.method == "POST" else None,
    )
    code = type_and_submit(tab, out["url"], canary)
    remote.await_secret(out["request_id"], code)
    wait_written(tab)
    page = out["url"].split("#")[0]
    assert [(url, sorted(p.split("=", 1)[0] for p in body.split("&"))) for url, body in posts] == [
        (f"{page}/claim", ["nonce"]),
        (page, ["nonce", "sealed"]),
    ]


def test_key_is_taken_out_of_the_address_bar(remote: Remote, tab: Page) -> None:
    """After the page read #k=, the URL it shows has no fragment."""
    out = remote.collect()
    tab.goto(out["url"])
    tab.locator("#submit:not([disabled])").wait_for(timeout=10_000)
    assert tab.url == out["url"].split("#")[0]


def test_link_without_a_key_keeps_the_button_off(remote: Remote, tab: Page) -> None:
    """Opened without #k=, the page says the link has no valid key and cannot submit."""
    out = remote.collect()
    tab.goto(out["url"].split("#")[0])
    status = tab.locator("#seal-status")
    status.filter(has_text="no valid key").wait_for(timeout=10_000)
    assert tab.locator("#submit").is_disabled()


def test_link_with_a_point_off_the_curve_keeps_the_button_off(remote: Remote, tab: Page) -> None:
    """A #k= that is not a P-256 point is refused by the page."""
    out = remote.collect()
    point = bytearray(SealKey().public_point)
    point[-1] ^= 1
    tab.goto(out["url"].split("#")[0] + "#k=" + b64u_encode(bytes(point)))
    tab.locator("#seal-status").filter(has_text="no valid key").wait_for(timeout=10_000)
    assert tab.locator("#submit").is_disabled()


def test_browser_without_webcrypto_keeps_the_button_off(remote: Remote, tab: Page) -> None:
    """Without crypto.subtle the page says it cannot encrypt, and the button stays off."""
    tab.add_init_script(
        "Object.defineProperty(Crypto.prototype, 'subtle', { get() { return undefined; } });"
    )
    out = remote.collect()
    tab.goto(out["url"])
    tab.locator("#seal-status").filter(has_text="cannot encrypt").wait_for(timeout=10_000)
    assert tab.locator("#submit").is_disabled()


def test_remote_page_without_javascript_sends_nothing(
    remote: Remote, browser: Browser, project: Path, canary: str
) -> None:
    """With script off the page says it needs JavaScript, and the form cannot be sent."""
    ctx = browser.new_context(ignore_https_errors=True, java_script_enabled=False)
    try:
        tab = ctx.new_page()
        out = remote.collect()
        tab.goto(out["url"])
        tab.locator('textarea[name="API_KEY"]').fill(canary)
        message = tab.locator("#seal-status").inner_text()
        assert ("needs JavaScript" in message, tab.locator("#submit").is_disabled()) == (
            True,
            True,
        )
    finally:
        ctx.close()
    assert not (project / ".env").exists()


def test_a_different_key_in_the_link_is_refused_by_the_server(
    remote: Remote, tab: Page, project: Path, canary: str
) -> None:
    """A link whose #k= was swapped for another key: the seal does not open; nothing written."""
    out = remote.collect()
    request = remote.service.store.get(out["request_id"])
    assert request is not None
    assert isinstance(request.delivery.seal_key, SealKey)
    swapped = out["url"].split("#")[0] + "#" + SealKey().fragment
    tab.goto(swapped)
    tab.locator("#submit:not([disabled])").wait_for(timeout=10_000)
    tab.locator('textarea[name="API_KEY"]').fill(canary)
    tab.locator("#submit").click()
    tab.locator("#form-error").filter(has_text="out of date").wait_for(timeout=10_000)
    assert not (project / ".env").exists()


def test_the_page_claims_by_script_and_a_second_browser_sees_another_browser(
    remote: Remote, browser: Browser, tab: Page, project: Path, canary: str
) -> None:
    """The remote page claims its request from its script (a POST to …/claim, answered 204);
    its submit shows the code; a second browser opening the whole link meanwhile sees "another
    browser" and no field; the code typed back through await_secret writes the person's value,
    and the person's page then says Written."""
    out = remote.collect()
    page = out["url"].split("#")[0]
    claims: list[int] = []
    tab.on("response", lambda r: claims.append(r.status) if r.url == f"{page}/claim" else None)
    code = type_and_submit(tab, out["url"], canary)
    assert claims == [204]
    other = browser.new_context(ignore_https_errors=True)
    try:
        theirs = other.new_page()
        theirs.goto(out["url"])
        theirs.locator("main").filter(has_text="another browser").wait_for(timeout=10_000)
        assert (theirs.locator("textarea").count(), theirs.locator("#submit").count()) == (0, 0)
    finally:
        other.close()
    held = remote.await_secret(out["request_id"])
    assert (held["status"], held.get("opened_elsewhere")) == ("confirm", True)
    done = remote.await_secret(out["request_id"], code)
    assert done["status"] == "written"
    wait_written(tab)
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"
    journal = (Path(os.environ["OFFPROMPT_STATE_DIR"]) / "journal.jsonl").read_text()
    for text in (json.dumps([out, held, done]), journal):
        assert (canary in text, code in text, shown(code) in text) == (False, False, False)
