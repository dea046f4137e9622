"""PageServer as callers use it: binding, idempotent start, the link, quiet logs, close."""

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from offprompt.page import PageServer
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter


@pytest.fixture
def store() -> RequestStore:
    return RequestStore()


@pytest.fixture
async def server(store: RequestStore, tmp_path: Path) -> AsyncIterator[PageServer]:
    page = PageServer(store, Submitter(store, Journal(tmp_path / "journal.jsonl")))
    yield page
    await page.close()


async def test_start_binds_loopback_on_a_random_port_once(server: PageServer) -> None:
    """start() returns the bound port; a second call returns the same one."""
    port = await server.start()
    assert (port > 0, await server.start(), server.port) == (True, port, port)


async def test_url_for_is_the_loopback_page_link(
    server: PageServer, store: RequestStore, project: Path
) -> None:
    """url_for gives http://127.0.0.1:<port>/r/<token>."""
    port = await server.start()
    req = store.create([SecretSpec("K")], SinkSpec(), project, "r", ttl=60)
    assert server.url_for(req) == f"http://127.0.0.1:{port}/r/{req.token}"


async def test_url_for_before_start_is_an_error(
    server: PageServer, store: RequestStore, project: Path
) -> None:
    """There is no link before the server listens."""
    req = store.create([SecretSpec("K")], SinkSpec(), project, "r", ttl=60)
    with pytest.raises(RuntimeError):
        server.url_for(req)


async def test_close_stops_serving_and_can_be_repeated(server: PageServer) -> None:
    """After close() the port refuses connections and port is None; close() twice is fine."""
    port = await server.start()
    await server.close()
    await server.close()
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.get(f"http://127.0.0.1:{port}/")
    assert server.port is None


async def test_tunnel_host_is_normalized_and_validated(server: PageServer) -> None:
    """The tunnel host is stored lowercase; a URL instead of a hostname is refused."""
    server.tunnel_host = "ABC.trycloudflare.com"
    with pytest.raises(ValueError, match="bare DNS name"):
        server.tunnel_host = "https://abc.trycloudflare.com"
    assert server.tunnel_host == "abc.trycloudflare.com"


async def test_serving_logs_no_token_nonce_or_value(
    server: PageServer,
    store: RequestStore,
    project: Path,
    canary: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A real page GET, a malformed request line and a write log nothing secret, anywhere."""
    await server.start()
    req = store.create([SecretSpec("API_KEY")], SinkSpec(), project, "r", ttl=60)
    url = server.url_for(req)
    with caplog.at_level(logging.DEBUG):
        # A browser's jar: aiohttp's default one keeps no cookie of an IP address (DESIGN §17).
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            await (await session.get(url)).read()
            cookie = req.delivery.browser
            await (await session.post(url, data={"nonce": req.nonce, "API_KEY": canary})).read()
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(f"GET /r/{req.token}\x01 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        await writer.drain()
        await reader.read()
        writer.close()
    text = caplog.text
    assert re.search(r"written API_KEY", text)
    assert cookie is not None
    for secret in (canary, req.token, req.nonce, cookie):
        assert secret not in text
