"""The real MCP `Server` and collect core in-process: an in-memory transport in place of stdio,
a fake opener in place of the browser, the real aiohttp page server on loopback.

No subprocess: a ladder case runs in milliseconds. The fakes are the seams the product passes
in (`Transport`, `Writer`, `Opener`); everything between them is the shipping code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import aiohttp

from offprompt.collect.parts import Parts
from offprompt.collect.settings import Settings
from offprompt.mcp.server import Server, ServerInfo
from offprompt.page.claim import COOKIE
from offprompt.tools import build
from offprompt.tools.service import Service

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
URL_CAPS: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
_NONCE = re.compile(r'name="nonce" value="([^"]+)"')

# A server→client request's answer: a JSON result, or None to never answer it.
Answerer = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]


class MemoryTransport:
    """`Transport`: the lines the test sends, then None (end of input) on `close`."""

    def __init__(self) -> None:
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def read(self) -> bytes | None:
        return await self._lines.get()

    def send(self, message: Mapping[str, Any]) -> None:
        self._lines.put_nowait(json.dumps(message).encode())

    def close(self) -> None:
        self._lines.put_nowait(None)


class MemoryWriter:
    """`Writer`: every line the server writes, parsed; each must be one JSON object."""

    def __init__(self) -> None:
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def write(self, data: bytes) -> None:
        for line in data.splitlines():
            message = json.loads(line)
            assert isinstance(message, dict)
            self.messages.put_nowait(message)


# The person's browser keeps each page's claim cookie (DESIGN §17), by the page's URL.
_CLAIMS: dict[str, str] = {}


def as_person(url: str) -> dict[str, str]:
    cookie = _CLAIMS.get(url)
    return {"Cookie": f"{COOKIE}={cookie}"} if cookie else {}


# One browser loads a page at a time per URL, as the tab offprompt opened and the person's
# reload would: the second load carries the cookie the first got.
_LOADING: dict[str, asyncio.Lock] = {}


# The nonce each claimed page handed out, by URL: a later GET of a claimed page serves an empty
# one (DESIGN §17: the cookie alone is no way in), and the page's script puts back the one it
# kept in its own origin's storage, as this does.
_KEPT: dict[str, str] = {}


async def load(url: str) -> str:
    """GET the page as the person's browser would (keeping its claim cookie); its HTML."""
    async with _LOADING.setdefault(url, asyncio.Lock()):
        return await _load(url)


async def _load(url: str) -> str:
    async with (
        aiohttp.ClientSession(headers=as_person(url)) as session,
        session.get(url) as reply,
    ):
        assert reply.status == 200
        claim = reply.cookies.get(COOKIE)
        if claim is not None:
            _CLAIMS[url] = claim.value
        html = await reply.text()
    found = _NONCE.search(html)
    if found is not None:
        _KEPT[url] = found.group(1)
    return html


async def visit(url: str) -> str:
    """GET the page as the person's browser would; its nonce (the one it kept, once claimed)."""
    await load(url)
    assert url in _KEPT, "the page handed out no nonce"
    return _KEPT[url]


async def submit(url: str, values: Mapping[str, str]) -> int:
    """The person: load the page, type `values`, press the button; the HTTP status."""
    nonce = await visit(url)
    async with (
        aiohttp.ClientSession(headers=as_person(url)) as session,
        session.post(url, data={"nonce": nonce, **values}) as reply,
    ):
        return reply.status


class FakeOpener:
    """The browser: records each link it is asked to open; `visits` GETs it like a browser."""

    def __init__(self, *, opens: bool = True, visits: bool = True) -> None:
        self.opened: list[str] = []
        self._opens = opens
        self._visits = visits

    async def open(self, url: str) -> bool:
        self.opened.append(url)
        if self._opens and self._visits:
            await visit(url)
        return self._opens


class Session:
    """One MCP client connected to the real server: requests, answers, notifications."""

    def __init__(self, server: Server, transport: MemoryTransport, writer: MemoryWriter) -> None:
        self._server = server
        self._transport = transport
        self._writer = writer
        self._next = 0
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.notes: list[tuple[str, dict[str, Any]]] = []
        self.answerer: Answerer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._serving = asyncio.ensure_future(server.serve(transport))
        self._routing = asyncio.ensure_future(self._route())

    async def _route(self) -> None:
        while True:
            message = await self._writer.messages.get()
            if "method" in message and "id" in message:  # server → client request
                self.asked.append((message["method"], message.get("params", {})))
                task = asyncio.ensure_future(self._answer(message))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            elif "method" in message:
                self.notes.append((message["method"], message.get("params", {})))
            else:
                future = self._pending.pop(message.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(message)

    async def _answer(self, message: dict[str, Any]) -> None:
        if self.answerer is None:
            return
        result = await self.answerer(message["method"], message.get("params", {}))
        if result is not None:
            self._transport.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def request(
        self, method: str, params: dict[str, Any], *, timeout: float = 10
    ) -> dict[str, Any]:
        self._next += 1
        rid = self._next
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        self._transport.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return await asyncio.wait_for(future, timeout)

    async def initialize(self, caps: dict[str, Any], name: str = "ladder-test") -> None:
        await self.request(
            "initialize",
            {"protocolVersion": LEGACY, "capabilities": caps, "clientInfo": {"name": name}},
        )
        self._transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        modern: dict[str, Any] | None = None,
        timeout: float = 10,
        **extra: Any,
    ) -> dict[str, Any]:
        """tools/call; `modern` is the client's capabilities for a 2026-07-28 call; `timeout`
        the wait for its answer (a store's programs can take longer on a busy machine)."""
        params: dict[str, Any] = {"name": tool, "arguments": arguments, **extra}
        if modern is not None:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "ladder-test", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": modern,
            }
        reply = await self.request("tools/call", params, timeout=timeout)
        assert "result" in reply, reply
        result = reply["result"]
        assert isinstance(result, dict)
        return result

    async def close(self) -> None:
        self._transport.close()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self._serving, 10)
        self._routing.cancel()


def settings(state: Path, **env: str) -> Settings:
    """Local settings from a mapping of our own, never the process environment."""
    base = {
        "OFFPROMPT_SANDBOX": "0",
        "OFFPROMPT_STATE_DIR": str(state),
        "OFFPROMPT_ELICIT_WAIT_MS": "300",
        "OFFPROMPT_DIALOG_WAIT_MS": "300",
        "OFFPROMPT_TTL": "20",
    }
    return Settings.read({**base, **env})


async def connect(project: Path, made: Settings, opener: FakeOpener) -> tuple[Session, Service]:
    """A server whose tools run on a collect core with `opener`, as `offprompt serve` runs."""
    service = Service(cwd=project, settings=made, parts=Parts.build(made, opener=opener))
    server = Server(
        build(lambda: service),
        ServerInfo("offprompt", "test"),
        writer := MemoryWriter(),
        progress_interval=0.05,
    )
    return Session(server, MemoryTransport(), writer), service


def structured(result: dict[str, Any]) -> dict[str, Any]:
    assert result.get("isError") is not True, result
    content = result["structuredContent"]
    assert isinstance(content, dict)
    return content


def refusal(result: dict[str, Any]) -> str:
    """The reason of a tool failure, without the prefix every refusal has."""
    assert result.get("isError") is True, result
    (block,) = result["content"]
    text = block["text"]
    assert isinstance(text, str)
    prefix = "offprompt refused that request: "
    assert text.startswith(prefix)
    return text[len(prefix) :]
