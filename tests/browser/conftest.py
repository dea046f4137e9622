"""A real PageServer on its own event loop thread, and headless Chromium driven by Playwright."""

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers import CHROMIUM_ARGS
from playwright.sync_api import Browser, BrowserContext, Playwright, sync_playwright

from offprompt.page import PageServer
from offprompt.spec import ReasonAuthor, SecretSpec, SinkSpec
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

T = TypeVar("T")


class LiveServer:
    """PageServer serving from a background thread; the store is only touched on its loop."""

    def __init__(self, project: Path, journal: Journal) -> None:
        self.project = project
        self.journal = journal
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.store = RequestStore()
        self.submitter = Submitter(self.store, journal)
        self.server = PageServer(self.store, self.submitter)
        self.port = self.call(self.server.start())

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    def create(
        self,
        *secrets: SecretSpec,
        sink: SinkSpec | None = None,
        ttl: float = 300,
        client: str | None = "Browser Test Agent",
        reason_by: ReasonAuthor = "agent",
    ) -> RequestRecord:
        async def make() -> RequestRecord:
            return self.store.create(
                secrets or (SecretSpec("API_KEY"),),
                sink or SinkSpec(),
                self.project,
                "The billing module needs the live key.",
                ttl=ttl,
                client=client,
                reason_by=reason_by,
            )

        return self.call(make())

    def cancel(self, request: RequestRecord) -> bool:
        async def cancel() -> bool:
            return self.store.cancel(request)

        return self.call(cancel())

    def confirm(self, request: RequestRecord, code: str) -> str:
        """The person's code coming back through the host (DESIGN §17), as the collect core
        takes it: tried against the held submit, and the held values written when right."""

        async def confirm() -> str:
            answer = self.store.try_code(request, code)
            if answer == "right":
                prepared = self.store.take_pending(request)
                assert prepared is not None
                await self.submitter.commit(request, prepared)
            return answer

        return self.call(confirm())

    def url(self, request: RequestRecord) -> str:
        return self.server.url_for(request)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.call(self.server.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


@pytest.fixture
def live(project: Path, tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(project, Journal(tmp_path / "state" / "journal.jsonl"))
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture
def browser(playwright: Playwright, chromium_path: str) -> Iterator[Browser]:
    browser = playwright.chromium.launch(
        executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
    )
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def clip(browser: Browser) -> Iterator[BrowserContext]:
    """A context whose pages may write to the clipboard, so Ctrl+V pastes for real."""
    ctx = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh browser context (cookies, storage) for one test."""
    ctx = browser.new_context()
    try:
        yield ctx
    finally:
        ctx.close()
