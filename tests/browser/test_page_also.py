"""The "Also sent to" boxes in real Chromium: ticked by default, untickable, carried by the
plain post and inside the seal (DESIGN §13)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fake_programs import FakePrograms, link_all
from playwright.sync_api import Browser, BrowserContext

from offprompt.crypto.seal import SealKey
from offprompt.sinks import destinations
from offprompt.sinks.destinations.fly import FlySpec
from offprompt.sinks.destinations.github import GithubSpec
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestRecord

from .conftest import LiveServer

pytestmark = pytest.mark.browser

SPECS = (GithubSpec(), FlySpec())


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakePrograms:
    made = FakePrograms(tmp_path / "fakes")
    # The live server's submitter runs the programs with the process environment; the fakes
    # come first (git stays reachable for the link).
    monkeypatch.setenv("PATH", f"{made.bin}{os.pathsep}{os.environ['PATH']}")
    return made


def create(
    live: LiveServer, fakes: FakePrograms, *, remote: bool = False, sink: SinkSpec | None = None
) -> RequestRecord:
    link_all(live.project)
    planned = destinations.plan(live.project, SPECS, ["API_KEY"], env=fakes.env())

    async def make() -> RequestRecord:
        req = live.store.create(
            [SecretSpec("API_KEY")],
            sink or SinkSpec(),
            live.project,
            "Deploys need it.",
            ttl=300,
            remote=remote,
            also=planned,
            display="" if sink else None,
        )
        if remote:
            req.delivery.seal_key = SealKey()
        return req

    return live.call(make())


def test_unticking_a_destination_skips_it(
    live: LiveServer, context: BrowserContext, fakes: FakePrograms, canary: str
) -> None:
    """Both boxes start ticked; unticking GitHub leaves only fly to run."""
    req = create(live, fakes)
    page = context.new_page()
    page.goto(live.url(req))
    assert page.is_checked("#also-0")
    assert page.is_checked("#also-1")
    page.uncheck("#also-0")
    page.fill("textarea[name=API_KEY]", canary)
    page.click("#submit")
    page.wait_for_selector("#destinations")
    assert [c.name for c in fakes.calls()] == ["fly"]
    statuses = page.locator("#destinations li").evaluate_all(
        "items => items.map(li => li.dataset.status)"
    )
    assert statuses == ["skipped", "sent"]
    assert canary not in page.content()


def test_without_javascript_the_ticked_boxes_post_with_the_form(
    live: LiveServer, browser: Browser, fakes: FakePrograms, canary: str
) -> None:
    """The plain form carries `also.<i>=1` for the boxes outside it (form="collect")."""
    req = create(live, fakes)
    ctx = browser.new_context(java_script_enabled=False)
    try:
        page = ctx.new_page()
        page.goto(live.url(req))
        page.fill("textarea[name=API_KEY]", canary)
        page.click("#submit")
        page.wait_for_selector("#destinations")
    finally:
        ctx.close()
    assert [c.name for c in fakes.calls()] == ["gh", "fly"]


def test_a_remote_page_seals_the_ticked_indices(
    live: LiveServer, context: BrowserContext, fakes: FakePrograms, canary: str
) -> None:
    """On a sealed page the ticks travel inside the seal; only `nonce` and `sealed` are sent
    (after the page's claim, which sends only `nonce`). The submit is held for its code
    (DESIGN §17); once the code comes back, only the ticked destination runs and the page
    says Written."""
    req = create(live, fakes, remote=True)
    key = req.delivery.seal_key
    assert key is not None
    page = context.new_page()
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.post_data or "") if r.method == "POST" else None)
    page.goto(f"{live.url(req)}#{key.fragment}")
    page.wait_for_selector("#submit:not([disabled])")
    page.uncheck("#also-1")
    page.fill("textarea[name=API_KEY]", canary)
    page.click("#submit")
    code = page.inner_text("#confirm-code")
    assert fakes.calls() == []
    assert live.confirm(req, code) == "right"
    page.locator("#closed h1", has_text="Written").wait_for(timeout=10_000)
    assert [c.name for c in fakes.calls()] == ["gh"]
    claim, body = posted
    assert claim.startswith("nonce=")
    assert "sealed=" not in claim
    assert "also" not in body
    assert canary not in body


def test_the_button_says_where_the_values_go(
    live: LiveServer, context: BrowserContext, fakes: FakePrograms
) -> None:
    """With destinations the script's button reads "Write to .env and send"."""
    req = create(live, fakes)
    page = context.new_page()
    page.goto(live.url(req))
    page.fill("textarea[name=API_KEY]", "x")
    assert page.inner_text("#submit-text") == "Write to .env and send"


def test_with_no_file_the_button_says_send_and_nothing_is_written(
    live: LiveServer, context: BrowserContext, fakes: FakePrograms, canary: str
) -> None:
    """sink none: the button reads "Send", fly gets the value, no .env appears."""
    req = create(live, fakes, sink=SinkSpec(kind="none", path=""))
    page = context.new_page()
    page.goto(live.url(req))
    page.uncheck("#also-0")
    page.fill("textarea[name=API_KEY]", canary)
    assert page.inner_text("#submit-text") == "Send"
    page.click("#submit")
    page.wait_for_selector("#destinations")
    assert [(c.name, c.stdin) for c in fakes.calls()] == [("fly", f"API_KEY={canary}\n")]
    assert not (live.project / ".env").exists()
