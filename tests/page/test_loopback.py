"""The page server listens before its application is loaded (so a tool call's link goes out
before aiohttp is imported): what connects early is served, and a failed load refuses."""

import asyncio
import importlib
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from offprompt.page import PageServer, loopback
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

APPLICATION = "offprompt.page.server"


@pytest.fixture
def store() -> RequestStore:
    return RequestStore()


@pytest.fixture
async def server(store: RequestStore, tmp_path: Path) -> AsyncIterator[PageServer]:
    page = PageServer(store, Submitter(store, Journal(tmp_path / "journal.jsonl")))
    yield page
    await page.close()


@pytest.fixture
def slow_load(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The application loads (on its worker thread) only once the returned event is set."""
    loaded = threading.Event()
    real = importlib.import_module

    def load(name: str) -> Any:
        if name == APPLICATION:
            loaded.wait(10)
        return real(name)

    monkeypatch.setattr(loopback.importlib, "import_module", load)
    yield loaded
    loaded.set()  # never leave the worker thread waiting


async def test_a_browser_that_connects_before_the_page_is_loaded_gets_it(
    server: PageServer, store: RequestStore, project: Path, slow_load: threading.Event
) -> None:
    """start() returns while the application is still loading; a GET made then waits in the
    socket's backlog and is answered with the page once it is loaded."""
    await server.start()
    req = store.create([SecretSpec("API_KEY")], SinkSpec(), project, "r", ttl=60)
    async with aiohttp.ClientSession() as session:
        get = asyncio.ensure_future(session.get(server.url_for(req)))
        await asyncio.sleep(0.2)
        assert not get.done()
        slow_load.set()
        reply = await asyncio.wait_for(get, 10)
        assert (reply.status, 'name="API_KEY"' in await reply.text()) == (200, True)


async def test_close_while_the_page_is_loading_leaves_nothing_listening(
    server: PageServer, slow_load: threading.Event
) -> None:
    """close() during the load waits for it, then stops serving: the port refuses."""
    port = await server.start()
    closing = asyncio.ensure_future(server.close())
    await asyncio.sleep(0.1)
    slow_load.set()
    await asyncio.wait_for(closing, 10)
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.get(f"http://127.0.0.1:{port}/")
    assert server.port is None


async def test_a_page_that_cannot_be_loaded_refuses_connections_and_says_so(
    server: PageServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A failed load closes the socket (the browser is refused, not left waiting) and logs one
    line naming the kind of failure."""

    real = importlib.import_module

    def broken(name: str) -> Any:
        if name == APPLICATION:
            raise ImportError("no aiohttp here")
        return real(name)

    monkeypatch.setattr(loopback.importlib, "import_module", broken)
    with caplog.at_level(logging.ERROR, logger="offprompt"):
        port = await server.start()
        with pytest.raises(ImportError):
            await server.serving()
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.get(f"http://127.0.0.1:{port}/")
    assert caplog.messages == ["page: could not serve the page (ImportError)"]
    # Not left "started" on the dead port: the next request binds afresh.
    assert server.port is None
    monkeypatch.setattr(loopback.importlib, "import_module", real)
    again = await server.start()
    await server.serving()
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{again}/") as answer:
            assert answer.status in (404, 421)
