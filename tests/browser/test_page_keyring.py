"""The keyring on the page in real Chromium, against a real Secret Service (DESIGN §13.2):
"Save in your keyring" names the store and the exact target and saves there; a saved key is
offered unticked, and ticked it is filled on the server, the page showing the server's
fingerprint and never the value, on plain and sealed pages alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from dotenv import dotenv_values
from keyring_service import SecretService
from playwright.sync_api import Browser, BrowserContext

from offprompt import oskeyring
from offprompt.crypto.seal import SealKey
from offprompt.sinks import destinations
from offprompt.sinks.destinations.keyring import KeyringSpec
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestRecord

from .conftest import LiveServer

pytestmark = pytest.mark.browser


def create(
    live: LiveServer, name: str, *, save: bool = False, remote: bool = False
) -> RequestRecord:
    also = destinations.plan(live.project, (KeyringSpec(),), [name]) if save else ()

    async def make() -> RequestRecord:
        req = live.store.create(
            [SecretSpec(name)],
            SinkSpec(),
            live.project,
            "One key for many projects.",
            ttl=300,
            remote=remote,
            also=also,
        )
        if remote:
            req.delivery.seal_key = SealKey()
        return req

    return live.call(make())


def saved(name: str, value: str) -> None:
    oskeyring.open_keyring().replace(name, value)
    oskeyring.record_saved([name])


def elsewhere(tmp_path: Path, project: Path) -> str:
    return "".join(
        p.read_text(errors="replace")
        for p in tmp_path.rglob("*")
        if p.is_file() and p != project / ".env"
    )


def test_saving_names_the_store_and_target_and_saves_there(
    live: LiveServer,
    context: BrowserContext,
    keyring_env: SecretService,
    tmp_path: Path,
    canary: str,
) -> None:
    """The ticked row says "Save in your keyring as offprompt / NAME" in the Secret Service;
    after Write the keyring holds the value once and the page lists it as saved."""
    keyring_env.store("KR_PAGE_SAVE", "an-earlier-one")
    req = create(live, "KR_PAGE_SAVE", save=True)
    page = context.new_page()
    page.goto(live.url(req))
    row = " ".join(page.inner_text("#also-list").split())
    assert "Save in your keyring as offprompt / KR_PAGE_SAVE" in row
    assert "In this computer's Secret Service keyring, under service offprompt" in row
    assert page.is_checked("#also-0")
    page.fill("textarea[name=KR_PAGE_SAVE]", canary)
    page.click("#submit")
    page.wait_for_selector("#destinations")
    assert keyring_env.lookup("KR_PAGE_SAVE") == canary
    assert keyring_env.count("KR_PAGE_SAVE") == 1
    assert dotenv_values(live.project / ".env") == {"KR_PAGE_SAVE": canary}
    assert page.locator("#destinations li").get_attribute("data-status") == "sent"
    assert canary not in page.content()
    assert canary not in elsewhere(tmp_path, live.project)


def test_a_ticked_saved_key_is_filled_and_the_page_shows_the_servers_fingerprint(
    live: LiveServer,
    context: BrowserContext,
    keyring_env: SecretService,
    tmp_path: Path,
    canary: str,
) -> None:
    """The box starts unticked and the button asks for the value; ticked, the empty field is
    posted with `keyring.NAME=1`, written from the keyring, and the Written page shows the
    server's fingerprint, which the page never computed; the value never reaches the page."""
    saved("KR_PAGE_FILL", canary)
    req = create(live, "KR_PAGE_FILL")
    page = context.new_page()
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.post_data or "") if r.method == "POST" else None)
    page.goto(live.url(req))
    assert not page.is_checked("#kr-KR_PAGE_FILL")
    assert page.inner_text("#submit-text") == "Fill 1 value to write"
    page.check("#kr-KR_PAGE_FILL")
    assert page.inner_text("#submit-text") == "Write to .env"
    page.click("#submit")
    page.wait_for_selector("#written")
    assert dotenv_values(live.project / ".env") == {"KR_PAGE_FILL": canary}
    assert req.outcome is not None
    assert req.outcome.fingerprint is not None
    assert req.outcome.fingerprint in page.inner_text("#written")
    assert page.locator("#fp-check").count() == 0  # no fingerprint of the page's own
    assert "keyring.KR_PAGE_FILL=1" in posted[-1]
    assert canary not in "".join(posted) + page.content()
    assert canary not in elsewhere(tmp_path, live.project)


def test_a_sealed_page_carries_the_tick_inside_the_seal(
    live: LiveServer, context: BrowserContext, keyring_env: SecretService, canary: str
) -> None:
    """On a remote page the tick travels sealed (`"keyring": [NAME]`); once the code comes back
    the filled value is written."""
    saved("KR_PAGE_SEALED", canary)
    req = create(live, "KR_PAGE_SEALED", remote=True)
    key = req.delivery.seal_key
    assert key is not None
    page = context.new_page()
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.post_data or "") if r.method == "POST" else None)
    page.goto(f"{live.url(req)}#{key.fragment}")
    page.wait_for_selector("#submit:not([disabled])")
    page.check("#kr-KR_PAGE_SEALED")
    page.click("#submit")
    code = page.inner_text("#confirm-code")
    assert not (live.project / ".env").exists()
    assert live.confirm(req, code) == "right"
    assert dotenv_values(live.project / ".env") == {"KR_PAGE_SEALED": canary}
    body = posted[-1]
    assert body.startswith("nonce=")
    assert "keyring" not in body
    assert canary not in "".join(posted)


def test_without_javascript_the_tick_posts_with_the_form(
    live: LiveServer, browser: Browser, keyring_env: SecretService, canary: str
) -> None:
    """A plain form post: the box sits in the form, the empty field is not required, and the
    ticked box alone fills the key from the keyring."""
    saved("KR_PAGE_NOJS", canary)
    req = create(live, "KR_PAGE_NOJS")
    ctx = browser.new_context(java_script_enabled=False)
    try:
        page = ctx.new_page()
        page.goto(live.url(req))
        page.check("#kr-KR_PAGE_NOJS")
        page.click("#submit")
        page.wait_for_selector("#written")
        assert canary not in page.content()
    finally:
        ctx.close()
    assert dotenv_values(live.project / ".env") == {"KR_PAGE_NOJS": canary}
