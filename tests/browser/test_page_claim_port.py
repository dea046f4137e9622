"""DESIGN §17 in Chromium: cookies are not kept apart by port, so a server on another port of
127.0.0.1 that the person's browser is sent to at `/r/<token>` receives the claim cookie. From
there, every POST is 403 and nothing changes: the cookie alone is no way in. The person's own
tab keeps working, a reload of it too; a reload without script says to use the tab already open.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import aiohttp
import pytest
from aiohttp import web
from dotenv import dotenv_values
from playwright.sync_api import Browser, BrowserContext

from offprompt.crypto.seal import SealKey
from offprompt.page.claim import COOKIE
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestRecord

from .conftest import LiveServer
from .test_page_check import NAMES, Fakes, create, fakes, fill, values  # noqa: F401 (fixture)

pytestmark = pytest.mark.browser

NONCE = re.compile(r'<input type="hidden" name="nonce" value="([^"]*)"')


@dataclass
class Thief:
    """A server on a second loopback port: it keeps the Cookie header the browser sends it at
    `/r/<token>` and then replays it against offprompt from its own side."""

    port: int = 0
    cookies: list[str] = field(default_factory=list)

    def app(self) -> web.Application:
        async def handle(request: web.Request) -> web.Response:
            self.cookies.append(request.headers.get("Cookie", ""))
            return web.Response(
                text="<!doctype html><title>elsewhere</title><p>hello</p>", content_type="text/html"
            )

        app = web.Application()
        app.router.add_get("/{tail:.*}", handle)
        return app


@pytest.fixture
def thief(live: LiveServer) -> Iterator[Thief]:
    made = Thief()
    runner = web.AppRunner(made.app())

    async def start() -> int:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return int(runner.addresses[0][1])

    made.port = live.call(start())
    yield made
    live.call(runner.cleanup())


async def _replay(origin: str, token: str, cookie: str) -> list[int]:
    """What the other server can do with the cookie: GET the page for a nonce, then submit,
    Write anyway, and claim, each with the nonce it found (and without one)."""
    statuses: list[int] = []
    headers = {"Cookie": cookie, "Accept": "application/json"}
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        async with http.get(f"{origin}/r/{token}", headers={"Cookie": cookie}) as reply:
            found = NONCE.findall(await reply.text())
        tries: list[dict[str, str]] = []
        for nonce in [*found, None]:
            base = {} if nonce is None else {"nonce": nonce}
            tries += [
                {**base, "OPENAI_API_KEY": "theirs", "check": "1"},
                {**base, "anyway": "1", "check": "1", "allow_tracked": "1"},
            ]
        for fields in tries:
            async with http.post(f"{origin}/r/{token}", data=fields, headers=headers) as reply:
                statuses.append(reply.status)
        for nonce in found:
            async with http.post(
                f"{origin}/r/{token}/claim", data={"nonce": nonce}, headers=headers
            ) as reply:
                statuses.append(reply.status)
    return statuses


def test_a_server_on_another_port_gets_the_cookie_and_can_post_nothing(
    live: LiveServer,
    context: BrowserContext,
    fakes: Fakes,  # noqa: F811 (the fixture imported above)
    thief: Thief,
    canary: str,
) -> None:
    """The person's submit is refused by a provider (409, held for "Write anyway"); their
    browser is then sent to the other port at `/r/<token>` and sends it the claim cookie. Every
    POST that server makes with it is 403; the request, its held values and its nonce stay as
    they were, no file is written; the person's own "Write anyway" then writes."""
    req = create(live)
    page = context.new_page()
    page.goto(live.url(req))
    fill(page, canary)
    page.click("#submit")
    page.locator("#anyway:not([hidden])").wait_for(timeout=15_000)
    nonce = req.nonce
    other = context.new_page()
    other.goto(f"http://127.0.0.1:{thief.port}/r/{req.token}")
    assert any(f"{COOKIE}={req.delivery.browser}" in c for c in thief.cookies)
    cookie = next(c for c in thief.cookies if COOKIE in c)
    # The other port's page itself, in the person's browser, posts to offprompt too.
    other.evaluate(
        """([origin, token]) => fetch(origin + "/r/" + token, {method: "POST",
             credentials: "include", mode: "no-cors",
             body: new URLSearchParams({anyway: "1", check: "1"})}).catch(() => null)""",
        [live.origin, req.token],
    )
    statuses = live.call(_replay(live.origin, req.token, cookie))
    assert (
        len(statuses) == 5
    )  # the GET found one (empty) nonce: 2 posts with it, 2 without, a claim
    assert set(statuses) == {403}
    assert (req.status, req.nonce, req.delivery.held is not None) == ("awaiting", nonce, True)
    assert not (live.project / ".env").exists()
    page.click("#anyway")
    page.locator("#written").wait_for(timeout=15_000)
    assert dotenv_values(live.project / ".env") == values(canary)


def test_a_reload_of_the_persons_tab_still_writes(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """The page is served again without its nonce; the tab's script puts back the one it kept
    in this origin's storage, so the person's reload still writes."""
    req = live.create()
    page = context.new_page()
    page.goto(live.url(req))
    page.reload()
    assert page.locator("#reopened").count() == 0
    page.locator('textarea[name="API_KEY"]').fill(canary)
    page.locator("#submit").click()
    page.locator("#written").wait_for(timeout=15_000)
    assert dotenv_values(live.project / ".env") == {"API_KEY": canary}


def test_without_script_a_reload_says_to_use_the_tab_already_open(
    live: LiveServer, browser: Browser
) -> None:
    """No script, no storage to read: the reloaded page says the request is open in this
    browser already, its button is off, and nothing is claimed anew."""
    req = live.create()
    ctx = browser.new_context(java_script_enabled=False)
    try:
        page = ctx.new_page()
        page.goto(live.url(req))
        held = req.delivery.browser
        page.reload()
        assert "already open in this browser" in page.locator("#reopened").inner_text()
        assert page.locator("#submit").is_disabled()
        assert page.locator('input[name="nonce"]').get_attribute("value") == ""
        assert req.delivery.browser == held
    finally:
        ctx.close()


def test_a_remote_page_opened_again_in_the_same_browser_still_seals(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """A remote page claims from its script and keeps its nonce; the same full link opened in
    another tab of that browser is served without the nonce, and its script puts the kept one
    back (for the claim and the seal's AAD), so the submit is held for its code as usual."""

    async def make() -> RequestRecord:
        req = live.store.create(
            [SecretSpec("API_KEY")], SinkSpec(), live.project, "Deploys need it.", ttl=300,
            remote=True,
        )  # fmt: skip
        req.delivery.seal_key = SealKey()
        return req

    req = live.call(make())
    key = req.delivery.seal_key
    assert key is not None
    link = f"{live.url(req)}#{key.fragment}"
    first = context.new_page()
    first.goto(link)
    first.wait_for_selector("#submit:not([disabled])")
    held = req.delivery.browser
    second = context.new_page()
    second.goto(link)
    second.wait_for_selector("#submit:not([disabled])")
    assert second.locator("#reopened").count() == 0
    second.fill("textarea[name=API_KEY]", canary)
    second.click("#submit")
    code = second.inner_text("#confirm-code")
    assert req.delivery.browser == held
    assert live.confirm(req, code) == "right"
    assert dotenv_values(live.project / ".env") == {"API_KEY": canary}
