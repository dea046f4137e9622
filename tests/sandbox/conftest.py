"""Sandbox fixtures: the fake edge (TLS, routing, a record of every byte) and fake cloudflared."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import CHROMIUM_ARGS
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from .edge import FakeEdge

# The protocol helpers (wire.py) live beside the protocol tests, as plain modules.
_PROTOCOL = str(Path(__file__).resolve().parents[1] / "protocol")
if _PROTOCOL not in sys.path:
    sys.path.insert(0, _PROTOCOL)


HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_cloudflared.py"


@pytest.fixture
def edge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEdge]:
    """A running fake edge; this process (and its children) reach and trust it."""
    with FakeEdge(tmp_path / "edge") as running:
        for name, value in running.env().items():
            monkeypatch.setenv(name, value)
        yield running


class FakeCloudflared:
    """The fake binary's path (a wrapper running fake_cloudflared.py) and its start log."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "cloudflared"
        self.log = folder / "starts.jsonl"
        self.path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
        self.path.chmod(0o755)

    def starts(self) -> list[dict[str, object]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def alive(self) -> list[int]:
        """Pids of started fakes that are still running (zombies count as gone)."""
        out = []
        for start in self.starts():
            pid = int(str(start["pid"]))
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                out.append(pid)
        return out


@pytest.fixture
def cloudflared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCloudflared:
    """The fake cloudflared, named by OFFPROMPT_CLOUDFLARED, logging its starts."""
    fake = FakeCloudflared(tmp_path / "bin")
    monkeypatch.setenv("OFFPROMPT_CLOUDFLARED", str(fake.path))
    monkeypatch.setenv("FAKE_CLOUDFLARED_LOG", str(fake.log))
    return fake


@pytest.fixture
def browser(chromium_path: str, edge: FakeEdge) -> Iterator[Browser]:
    """Chromium whose only way to *.trycloudflare.com is the edge, as its HTTPS proxy."""
    with sync_playwright() as p:
        launched = p.chromium.launch(
            executable_path=chromium_path,
            headless=True,
            args=[*CHROMIUM_ARGS, f"--proxy-server={edge.proxy}"],
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    # The edge's certificate is signed by a CA made for the test, which Chromium does not know.
    ctx: BrowserContext = browser.new_context(ignore_https_errors=True)
    try:
        yield ctx.new_page()
    finally:
        ctx.close()


def type_and_submit(tab: Page, url: str, value: str) -> str:
    """Open a remote link, type `value`, submit: the page claims the request once loaded and
    its submit is held (DESIGN §17). Returns the confirmation code the page shows, as typed
    back (without the hyphen)."""
    tab.goto(url)
    tab.locator("#submit:not([disabled])").wait_for(timeout=10_000)
    tab.locator('textarea[name="API_KEY"]').fill(value)
    tab.locator("#submit").click()
    shown = tab.locator("#confirm-code")
    shown.wait_for(timeout=30_000)
    return shown.inner_text().strip().replace("-", "")


def wait_written(tab: Page) -> str:
    """After the code came back, the held page (polling its status every 2 s) says Written,
    and "Fingerprint" with the four emoji it computed itself; returns the emoji."""
    tab.locator("#closed h1").filter(has_text="Written").wait_for(timeout=15_000)
    said = tab.locator("#closed .message").inner_text().strip()
    assert said.startswith("Fingerprint ")
    return said.removeprefix("Fingerprint ")
