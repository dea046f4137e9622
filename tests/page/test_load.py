"""DESIGN §6 "It stays up under load", on a real PageServer in this process: a connection that
sends no headers in time, or no body, is dropped; past the connection bound the oldest silent
one makes room, so the page and a submit still go through; the bound follows the descriptor
limit. (tests/protocol/test_wire_page_flood.py floods a real `offprompt serve`.)"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from offprompt.page import PageServer, loopback
from offprompt.page.claim import COOKIE
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

CANARY = "canary-load-5d1e-body-9b27"
SHORT = 0.5  # the lowered timeouts, seconds


@pytest.fixture
def store() -> RequestStore:
    return RequestStore()


@pytest.fixture
async def server(store: RequestStore, tmp_path: Path) -> AsyncIterator[PageServer]:
    page = PageServer(store, Submitter(store, Journal(tmp_path / "journal.jsonl")))
    yield page
    await page.close()


@pytest.fixture
def short_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loopback, "HEADER_TIMEOUT", SHORT, raising=False)
    monkeypatch.setattr(loopback, "BODY_TIMEOUT", SHORT, raising=False)


# Each request's claim cookie, as the person's browser got it from its first GET (DESIGN §17).
COOKIES: dict[str, str] = {}


async def started(server: PageServer, store: RequestStore, project: Path) -> RequestRecord:
    """A new request whose page the person's browser has opened (and so holds)."""
    await server.start()
    await asyncio.wait_for(server.serving(), 20)
    req = store.create([SecretSpec("API_KEY")], SinkSpec(), project, "r", ttl=60)
    async with aiohttp.ClientSession() as session, session.get(server.url_for(req)) as reply:
        assert reply.status == 200
        COOKIES[req.id] = reply.cookies[COOKIE].value
    return req


async def connect(server: PageServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    assert server.port is not None
    return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", server.port), 5)


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Whether the server closes the connection within `seconds` (whatever it sent first)."""
    try:
        await asyncio.wait_for(reader.read(), seconds)
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return True


def head(req: RequestRecord, method: str = "GET", extra: str = "") -> bytes:
    cookie = f"Cookie: {COOKIE}={COOKIES[req.id]}\r\n"
    return f"{method} /r/{req.token} HTTP/1.1\r\nHost: 127.0.0.1\r\n{cookie}{extra}\r\n".encode()


def form(req: RequestRecord) -> bytes:
    return f"nonce={req.nonce}&API_KEY={CANARY}".encode()


def post_head(req: RequestRecord, length: int) -> bytes:
    extra = f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {length}\r\n"
    return head(req, "POST", extra)


async def page_and_submit(server: PageServer, req: RequestRecord, project: Path) -> None:
    """A real GET of the page and a real submit, each answered within 10 s."""
    url = server.url_for(req)
    timeout = aiohttp.ClientTimeout(total=10)
    cookie = {"Cookie": f"{COOKIE}={COOKIES[req.id]}"}
    async with aiohttp.ClientSession(timeout=timeout, headers=cookie) as session:
        async with session.get(url) as reply:
            assert reply.status == 200
            assert 'name="API_KEY"' in await reply.text()
        data = {"nonce": req.nonce, "API_KEY": CANARY}
        async with session.post(url, data=data) as reply:
            assert reply.status == 200, await reply.text()
    assert (project / ".env").read_text() == f"API_KEY={CANARY}\n"


def test_the_contracted_timeouts() -> None:
    """10 s for the headers, 30 s for a body (DESIGN §6)."""
    assert (loopback.HEADER_TIMEOUT, loopback.BODY_TIMEOUT) == (10.0, 30.0)


@pytest.mark.usefixtures("short_timeouts")
@pytest.mark.parametrize("sent", [b"", b"GET /r/", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"])
async def test_a_connection_without_its_headers_in_time_is_dropped(
    server: PageServer, store: RequestStore, project: Path, sent: bytes
) -> None:
    """Nothing sent, or headers begun and never ended: closed HEADER_TIMEOUT after connecting,
    not before; the page still answers."""
    req = await started(server, store, project)
    reader, writer = await connect(server)
    began = time.monotonic()
    writer.write(sent)
    assert not await closed_within(reader, SHORT * 0.6)
    assert await closed_within(reader, SHORT + 3)
    assert time.monotonic() - began >= SHORT * 0.9
    writer.close()
    await page_and_submit(server, req, project)


@pytest.mark.usefixtures("short_timeouts")
async def test_a_kept_alive_connection_idle_past_the_header_timeout_is_dropped(
    server: PageServer, store: RequestStore, project: Path
) -> None:
    """After its answer, a kept-alive connection has the same time for its next headers."""
    req = await started(server, store, project)
    reader, writer = await connect(server)
    writer.write(head(req))
    assert (await asyncio.wait_for(reader.readline(), 5)).split()[1] == b"200"
    assert await closed_within(reader, SHORT + 3)
    writer.close()


@pytest.mark.usefixtures("short_timeouts")
async def test_a_body_not_sent_in_time_is_dropped_and_nothing_written(
    server: PageServer, store: RequestStore, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A submit whose body stops short is closed, unanswered, BODY_TIMEOUT after its headers;
    nothing is written, the request stays open, and no log holds the part that was sent."""
    caplog.set_level(logging.DEBUG)
    req = await started(server, store, project)
    body = form(req)
    reader, writer = await connect(server)
    writer.write(post_head(req, len(body) + 10) + body)
    began = time.monotonic()
    assert not await closed_within(reader, SHORT * 0.6)
    assert await closed_within(reader, SHORT + 3)
    assert time.monotonic() - began >= SHORT * 0.9
    writer.close()
    assert not (project / ".env").exists()
    assert req.status == "awaiting"
    assert CANARY not in caplog.text
    await page_and_submit(server, req, project)


async def test_a_slow_body_that_arrives_in_time_is_read(
    server: PageServer, store: RequestStore, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body sent in pieces within BODY_TIMEOUT is a submit like any other."""
    monkeypatch.setattr(loopback, "BODY_TIMEOUT", 3.0, raising=False)
    req = await started(server, store, project)
    body = form(req)
    reader, writer = await connect(server)
    writer.write(post_head(req, len(body)) + body[:5])
    await asyncio.sleep(0.5)
    writer.write(body[5:])
    assert (await asyncio.wait_for(reader.readline(), 5)).split()[1] == b"200"
    writer.close()
    assert (project / ".env").read_text() == f"API_KEY={CANARY}\n"


BOUND = 16


async def test_past_the_bound_the_oldest_silent_connection_makes_room(
    server: PageServer, store: RequestStore, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three times the bound of idle connections: no more than the bound stay open, the
    oldest are the ones closed, and the page and a submit go through meanwhile."""
    monkeypatch.setattr(loopback, "connection_bound", lambda: BOUND, raising=False)
    req = await started(server, store, project)
    idle = [await connect(server) for _ in range(3 * BOUND)]
    await asyncio.sleep(0.3)
    await page_and_submit(server, req, project)
    still_open = [not await closed_within(reader, 0.05) for reader, _ in idle]
    assert sum(still_open) <= BOUND
    assert not any(still_open[:BOUND])  # the oldest went first
    for _, writer in idle:
        writer.close()


async def test_past_the_bound_of_requests_under_way_a_newcomer_is_refused_at_once(
    server: PageServer, store: RequestStore, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When every open connection has sent its headers (submits waiting on their bodies), a
    new one is closed at once rather than opening past the bound; room again once they end."""
    monkeypatch.setattr(loopback, "connection_bound", lambda: BOUND, raising=False)
    req = await started(server, store, project)
    busy = [await connect(server) for _ in range(BOUND)]
    for _, writer in busy:
        writer.write(post_head(req, 100))
    await asyncio.sleep(0.3)
    reader, writer = await connect(server)
    assert await closed_within(reader, 2)
    writer.close()
    for _, w in busy:
        w.close()
    await asyncio.sleep(0.3)
    await page_and_submit(server, req, project)


@pytest.mark.parametrize(("soft", "bound"), [(1024, 256), (256, 64), (20, 8), (1 << 20, 512)])
def test_the_bound_is_a_quarter_of_the_descriptor_limit_within_limits(
    monkeypatch: pytest.MonkeyPatch, soft: int, bound: int
) -> None:
    """Read from RLIMIT_NOFILE each time the server starts: well below it, 8 to 512."""
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda _: (soft, soft))
    assert loopback.connection_bound() == bound
