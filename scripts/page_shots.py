"""Render each state of the page to PNG in headless Chromium, so anyone can look at it.

    python scripts/page_shots.py [--out shots] [--chromium /usr/bin/chromium]

States: empty, partly filled with errors (after a paste), tracked file, written, expired, and
the empty page in dark mode and without script; each at desktop (1280 px) and phone (375 px)
width. Prints the path of every PNG. Values typed here are made up; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from playwright.sync_api import Browser, Page, sync_playwright

from offprompt.page import PageServer
from offprompt.spec import GenerateSpec, SecretSpec, SinkSpec
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

T = TypeVar("T")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WIDTHS = {"desktop": (1280, 900), "phone": (375, 740)}
REASON = (
    "The **billing** module needs live keys to charge cards and send receipts:\n\n"
    "- `STRIPE_SECRET_KEY` from the Stripe dashboard\n"
    "- `RESEND_API_KEY` for the receipt emails\n"
    "- `DATABASE_URL` for the orders table\n\n"
    "See [the setup notes](https://example.com/setup) if unsure."
)
SECRETS = (
    SecretSpec("STRIPE_SECRET_KEY", caption="Developers → API keys → Secret key"),
    SecretSpec("RESEND_API_KEY", provider="resend"),
    SecretSpec("DATABASE_URL", format="postgres_url", secret=False),
    SecretSpec("SESSION_SECRET", generate=GenerateSpec()),
)
PASTE = (
    "# copied from the team vault\n"
    "STRIPE_SECRET_KEY=pk_live_51Hx8fakefakefakefakefakefake\n"
    "RESEND_API_KEY=sk-proj-Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3Fak3\n"
    "NODE_ENV=production\n"
)


class Live:
    """A page server on a background event loop, with its own store and project folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.store = RequestStore()
        journal = Journal(root / "state" / "journal.jsonl")
        self.server = PageServer(self.store, Submitter(self.store, journal))
        self.call(self.server.start())
        self.count = 0

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    def project(self, setup: Callable[[Path], None] | None = None) -> Path:
        self.count += 1
        folder = self.root / f"billing-app-{self.count}"
        folder.mkdir()
        if setup is not None:
            setup(folder)
        return folder

    def url(self, project: Path, *, ttl: float = 300, client: str = "claude-code") -> str:
        async def make() -> RequestRecord:
            return self.store.create(SECRETS, SinkSpec(), project, REASON, ttl=ttl, client=client)

        return self.server.url_for(self.call(make()))

    def close(self) -> None:
        self.call(self.server.close())
        self.loop.call_soon_threadsafe(self.loop.stop)


def tracked(folder: Path) -> None:
    (folder / ".env").write_text("STRIPE_SECRET_KEY=sk_test_old\nPORT=3000\n")
    git = shutil.which("git") or "git"
    subprocess.run([git, "init", "-q"], cwd=folder, check=True)  # noqa: S603 - a test repo
    subprocess.run([git, "add", ".env"], cwd=folder, check=True)  # noqa: S603


def paste(page: Page, selector: str, text: str) -> None:
    page.locator(selector).focus()
    page.evaluate(
        """([sel, text]) => {
            const data = new DataTransfer();
            data.setData("text/plain", text);
            const event = new ClipboardEvent(
                "paste", {clipboardData: data, bubbles: true, cancelable: true});
            document.querySelector(sel).dispatchEvent(event);
        }""",
        [selector, text],
    )


def errors_state(page: Page) -> None:
    paste(page, "textarea[name=STRIPE_SECRET_KEY]", PASTE)
    page.locator("#submit").click()
    page.locator("#e-DATABASE_URL li").first.wait_for()


def written_state(page: Page) -> None:
    page.fill("textarea[name=STRIPE_SECRET_KEY]", "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc")
    page.fill("textarea[name=RESEND_API_KEY]", "re_" + "123456789abcdefghijk")
    page.fill("textarea[name=DATABASE_URL]", "postgres://app:pw@localhost:5432/orders")
    page.locator("#submit").click()
    page.locator("#fp-check").wait_for()


def expired_state(page: Page) -> None:
    time.sleep(2.2)
    page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    page.locator("#closed").wait_for()


def shoot(browser: Browser, live: Live, out: Path) -> list[Path]:
    states: list[tuple[str, dict[str, Any], Callable[[Page], None] | None, dict[str, Any]]] = [
        ("empty", {}, None, {}),
        ("errors", {}, errors_state, {}),
        ("tracked", {"setup": tracked}, None, {}),
        ("written", {}, written_state, {}),
        ("expired", {"ttl": 2}, expired_state, {}),
        ("dark", {}, None, {"color_scheme": "dark"}),
        ("noscript", {}, None, {"java_script_enabled": False}),
    ]
    paths: list[Path] = []
    for name, made, act, options in states:
        for width_name, (width, height) in WIDTHS.items():
            project = live.project(made.get("setup"))
            url = live.url(project, ttl=made.get("ttl", 300))
            context = browser.new_context(viewport={"width": width, "height": height}, **options)
            try:
                page = context.new_page()
                page.goto(url)
                if act is not None:
                    act(page)
                page.wait_for_timeout(150)
                path = out / f"{name}-{width_name}.png"
                page.screenshot(path=str(path), full_page=True)
                paths.append(path)
            finally:
                context.close()
    return paths


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("shots"))
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        live = Live(Path(tmp))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=args.chromium, headless=True, args=ARGS)
                try:
                    paths = shoot(browser, live, args.out)
                finally:
                    browser.close()
        finally:
            live.close()
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
