"""The provider check in real Chromium (DESIGN §16): three verdicts beside their fields, a
refused key held until "Write anyway", with and without JavaScript, against fake providers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from aiohttp import web
from dotenv import dotenv_values
from playwright.sync_api import Browser, BrowserContext, Page

from offprompt.spec import SecretSpec
from offprompt.store import RequestRecord

from .conftest import LiveServer

pytestmark = pytest.mark.browser

NAMES = ("OPENAI_API_KEY", "STRIPE_SECRET_KEY", "GITHUB_TOKEN")


ANSWERS = {
    "api.openai.com": (401, {}),
    "api.stripe.com": (200, {"id": "acct_shop"}),
    "api.github.com": (503, {}),
}


@dataclass
class Fakes:
    """OpenAI refuses (401), Stripe works (account `acct_shop`), GitHub is down (503): one
    server each on loopback, recording which provider was asked."""

    seen: list[str] = field(default_factory=list)

    def app(self, host: str) -> web.Application:
        async def handle(request: web.Request) -> web.Response:
            self.seen.append(host)
            status, body = ANSWERS[host]
            return web.json_response(body, status=status)

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        return app


@pytest.fixture
def fakes(live: LiveServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fakes]:
    made = Fakes()
    runners = {host: web.AppRunner(made.app(host)) for host in ANSWERS}

    async def start(runner: web.AppRunner) -> int:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return int(runner.addresses[0][1])

    ports = {host: live.call(start(runner)) for host, runner in runners.items()}
    # The live server's submitter reads the process environment when it checks.
    monkeypatch.delenv("OFFPROMPT_CHECK")
    monkeypatch.setenv(
        "OFFPROMPT_CHECK_BASE",
        ",".join(f"{host}=http://127.0.0.1:{port}" for host, port in ports.items()),
    )
    yield made
    for runner in runners.values():
        live.call(runner.cleanup())


def values(canary: str) -> dict[str, str]:
    """Each key positively its provider's (DESIGN §16): Stripe's a restricted `rk_live_` one,
    since an `sk_live_` key, whose prefix Clerk's keys share, is no longer sent to Stripe."""
    plain = canary.replace("-", "")
    return {
        "OPENAI_API_KEY": "sk-proj-" + canary + "Q" * 12,
        "STRIPE_SECRET_KEY": "rk_live_" + plain + "a" * 20,
        "GITHUB_TOKEN": "ghp_" + (plain + "b" * 36)[:36],
    }


def create(live: LiveServer) -> RequestRecord:
    return live.create(*(SecretSpec(name) for name in NAMES))


def fill(page: Page, canary: str) -> None:
    for name, value in values(canary).items():
        page.fill(f"textarea[name={name}]", value)


THREE = ["OpenAI refused this key (401)", "Works — account acct_shop", "Could not reach GitHub"]


def verdicts(page: Page) -> list[str]:
    """The verdict shown under each field, in NAMES order."""
    return [page.locator(f"#k-{name}").inner_text() for name in NAMES]


def test_the_page_shows_three_verdicts_and_holds_the_refused_key(
    live: LiveServer, context: BrowserContext, fakes: Fakes, canary: str
) -> None:
    """With script: each verdict under its field, nothing written, "Write anyway" shown; pressing
    it writes all three and the Written view says the refused one was written anyway."""
    req = create(live)
    page = context.new_page()
    page.goto(live.url(req))
    assert page.is_checked("#check")
    fill(page, canary)
    page.click("#submit")
    page.wait_for_selector("#anyway:not([hidden])")
    assert THREE == verdicts(page)
    assert not (live.project / ".env").exists()
    page.click("#anyway")
    page.wait_for_selector("#written")
    assert values(canary) == dotenv_values(live.project / ".env")
    text = page.locator("#written").inner_text()
    assert "OpenAI refused this key (401) (written anyway)" in text
    assert "Works — account acct_shop" in text
    assert canary not in page.content()
    assert req.outcome is not None
    assert dict(req.outcome.checked) == {
        "OPENAI_API_KEY": "rejected",
        "STRIPE_SECRET_KEY": "ok",
        "GITHUB_TOKEN": "unreachable",
    }


def test_unticking_the_box_sends_nothing(
    live: LiveServer, context: BrowserContext, fakes: Fakes, canary: str
) -> None:
    """Unticked, the page writes at once and no provider is asked."""
    req = create(live)
    page = context.new_page()
    page.goto(live.url(req))
    page.uncheck("#check")
    fill(page, canary)
    page.click("#submit")
    page.wait_for_selector("#written")
    assert [] == fakes.seen
    assert values(canary) == dotenv_values(live.project / ".env")


def test_without_javascript_the_409_page_has_a_write_anyway_form(
    live: LiveServer, browser: Browser, fakes: Fakes, canary: str
) -> None:
    """Without script: the plain post answers the form again with the three verdicts and a
    second form; its "Write anyway" button writes what was sent."""
    req = create(live)
    ctx = browser.new_context(java_script_enabled=False)
    try:
        page = ctx.new_page()
        page.goto(live.url(req))
        fill(page, canary)
        page.click("#submit")
        page.wait_for_selector("#write-anyway")
        assert THREE == verdicts(page)
        assert canary not in page.content()
        assert not (live.project / ".env").exists()
        page.click("#write-anyway")
        page.wait_for_selector("#written")
        assert "(written anyway)" in page.locator("#written").inner_text()
    finally:
        ctx.close()
    assert values(canary) == dotenv_values(live.project / ".env")
