"""The MCP server core: dispatch of both revisions per message, lifecycle, tools, MRTR.

Revision is decided per message (a request with `_meta` protocolVersion is 2026-07-28; the rest
is the handshake era), never locked per process; each revision's vocabulary is in `revisions`.
Knows nothing of files, values or the page.
"""

from __future__ import annotations

from offprompt.errors import RpcError
from offprompt.mcp import jsonrpc as rpc
from offprompt.mcp.revisions import (
    CACHE_TTL_MS,
    META_CAPS,
    META_VERSION,
    MODERN,
    SUPPORTED,
    Era,
    Legacy,
    handshake,
    modern_era,
)

# The first replies (`initialize`, `server/discover`, `tools/list`) load neither `typing`,
# `dataclasses`, `logging` nor `asyncio` (DESIGN §2): what a tool call needs (its context, the
# event loop, the schema check) is imported when one arrives, and types are for mypy only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
    import logging
    from collections.abc import Awaitable, Callable, Sequence
    from typing import Any, Protocol, TypeAlias

    from offprompt.mcp.declaration import Tool
    from offprompt.mcp.jsonrpc import JSON, RequestId
    from offprompt.mcp.state import StateSigner

    Work: TypeAlias = Callable[[], Awaitable[JSON]]

    class Transport(Protocol):
        """Lines in. `read` returns None at end of input."""

        async def read(self) -> bytes | None: ...

    class Writer(Protocol):
        def write(self, data: bytes) -> None: ...


EOF_GRACE = 0.5


def default_logger() -> logging.Logger:
    """The `offprompt` logger, imported only when there is something to say."""
    import logging

    return logging.getLogger("offprompt")


class ServerInfo:
    """The server's identity and its instructions for the model."""

    __slots__ = ("instructions", "name", "title", "version")

    def __init__(
        self, name: str, version: str, instructions: str | None = None, title: str | None = None
    ) -> None:
        self.name = name
        self.version = version
        self.instructions = instructions
        self.title = title


class _Call:
    __slots__ = ("cancelled", "task")

    def __init__(self, task: asyncio.Task[None]) -> None:
        self.task = task
        self.cancelled = False


class _Outbound:
    __slots__ = ("futures", "next_id")

    def __init__(self) -> None:
        self.futures: dict[RequestId, asyncio.Future[Any]] = {}
        self.next_id = 0


class Server:
    """Serves `tools` until end of input or `stop()`.

    `receive` handles one line; `serve` reads lines from a `Transport` in a loop. Nothing here
    needs a running event loop until a tool call arrives.
    """

    def __init__(
        self,
        tools: Sequence[Tool],
        info: ServerInfo,
        writer: Writer,
        *,
        progress_interval: float = 10.0,
        signer: StateSigner | None = None,
        logger: Callable[[], logging.Logger] = default_logger,
    ) -> None:
        """`logger()` is called only when a line is to be logged (`offprompt serve` sets up its
        stderr handler then)."""
        self._tools = {t.name: t for t in tools}
        self._logger = logger
        self._info = info
        self._writer = writer
        self.progress_interval = progress_interval
        self._signer_given = signer
        self._legacy: Legacy | None = None
        self._calls: dict[RequestId, _Call] = {}
        self._out = _Outbound()
        self._stopping: asyncio.Event | None = None
        self._closed = False

    # -- the loop -------------------------------------------------------------------------------

    async def serve(self, transport: Transport, first: bytes | None = None) -> None:
        """Read and dispatch until end of input or `stop()`; then cancel what is in flight.

        `first` is a line already read but not handled (see `receive`).
        """
        import asyncio

        self._stopping = asyncio.Event()
        if first is not None:
            self.receive(first)
        reader = asyncio.ensure_future(self._read_loop(transport))
        stopper = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if reader.done() and self._calls:
                # End of input: give calls that are about to answer a moment, then stop.
                await asyncio.wait([c.task for c in self._calls.values()], timeout=EOF_GRACE)
        finally:
            for t in (reader, stopper):
                t.cancel()
            await self._shutdown()

    def stop(self) -> None:
        if self._stopping is not None:
            self._stopping.set()

    async def _read_loop(self, transport: Transport) -> None:
        while True:
            line = await transport.read()
            if line is None:
                return
            self.receive(line)

    async def _shutdown(self) -> None:
        import asyncio

        self._closed = True
        for call in list(self._calls.values()):
            call.cancelled = True
            call.task.cancel()
        tasks = [c.task for c in self._calls.values()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for fut in self._out.futures.values():
            fut.cancel()
        self._out.futures.clear()

    def _send(self, message: JSON) -> None:
        try:
            self._writer.write(rpc.dumps(message))
        except OSError:
            # The client went away (broken pipe): nothing more can be said to it.
            self.stop()

    # -- receiving ------------------------------------------------------------------------------

    def receive(self, line: bytes, *, loop_running: bool = True) -> bool:
        """Handle one line. Without a running loop, answer what needs none and return False
        for anything that does (a tool call), leaving it unconsumed.

        That lets `offprompt serve` answer `initialize` and `tools/list` before asyncio is even
        imported: hosts spawn the server at the start of every session and wait for it.
        """
        try:
            return self._receive(line, loop_running)
        except Exception:  # the protocol boundary: never die on a message
            self._logger().error("unexpected error handling a message (%s)", _kind())
            return True

    def _receive(self, line: bytes, loop_running: bool) -> bool:
        msg = rpc.classify(line)
        if msg is None:
            return True
        if isinstance(msg, rpc.Invalid):
            self._send(rpc.error(msg.id, msg.error))
        elif isinstance(msg, rpc.Response):
            self._resolve(msg)
        elif isinstance(msg, rpc.Notification):
            self._notification(msg)
        elif msg.method == "tools/call" and not loop_running:
            return False
        elif msg.id in self._calls:
            err = RpcError(rpc.INVALID_REQUEST, "Invalid Request: id already in use")
            self._send(rpc.error(msg.id, err))
        else:
            try:
                routed = self._route(msg)
            except RpcError as err:
                self._send(rpc.error(msg.id, err))
                return True
            if isinstance(routed, dict):
                self._send(rpc.result(msg.id, routed))
                return True
            import asyncio

            task = asyncio.ensure_future(self._answer(msg, routed))
            self._calls[msg.id] = _Call(task)
            rid = msg.id
            task.add_done_callback(lambda _t: self._calls.pop(rid, None))
        return True

    def _notification(self, note: rpc.Notification) -> None:
        params = note.params or {}
        if note.method == "notifications/initialized":
            if self._legacy is not None:
                self._legacy.initialized = True
        elif note.method == "notifications/cancelled":
            rid = params.get("requestId")
            call = self._calls.get(rid) if isinstance(rid, str | int) else None
            if call is not None:
                call.cancelled = True
                call.task.cancel()
        # Every other notification (roots/list_changed, progress, unknown) needs nothing.

    def _resolve(self, response: rpc.Response) -> None:
        fut = self._out.futures.pop(response.id, None)
        if fut is None or fut.done():
            return
        from offprompt.mcp.tool import ClientError

        if response.error is not None:
            fut.set_exception(ClientError(str(response.error.get("message", "error"))))
        else:
            fut.set_result(response.result)

    async def _answer(self, req: rpc.Request, work: Work) -> None:
        import asyncio

        try:
            value = await work()
        except asyncio.CancelledError:
            return  # cancelled by the client or by shutdown: nothing is sent for this id
        except RpcError as err:
            self._send(rpc.error(req.id, err))
            return
        except Exception:
            self._logger().error("internal error in %s (%s)", _short(req.method), _kind())
            self._send(rpc.error(req.id, RpcError(rpc.INTERNAL_ERROR, "Internal error")))
            return
        call = self._calls.get(req.id)
        if call is not None and call.cancelled:
            return
        self._send(rpc.result(req.id, value))

    # -- routing --------------------------------------------------------------------------------

    def _route(self, req: rpc.Request) -> JSON | Work:
        """The answer for `req`, or the work that will produce it (tool calls)."""
        params = req.params or {}
        if req.method == "initialize":
            return self._initialize(params)
        meta = params.get("_meta")
        if isinstance(meta, dict) and META_VERSION in meta:
            return self._modern(req.method, params, meta)
        if req.method == "ping":
            return {}
        if self._legacy is None:
            raise RpcError(
                rpc.INVALID_PARAMS,
                f"Invalid params: missing _meta keys {META_VERSION}, {META_CAPS} "
                "(or send initialize first)",
            )
        era = Era(self._legacy.version, self._legacy.capabilities, self._legacy.client_info)
        if req.method == "tools/list":
            return {"tools": self._tool_list()}
        if req.method == "tools/call":
            return self._prepare_call(params, era)
        raise RpcError(rpc.METHOD_NOT_FOUND, f"Method not found: {_short(req.method)}")

    def _initialize(self, params: JSON) -> JSON:
        self._legacy = handshake(params)
        result: JSON = {
            "protocolVersion": self._legacy.version,
            "capabilities": {"tools": {}},
            "serverInfo": self._server_info(),
        }
        if self._info.instructions:
            result["instructions"] = self._info.instructions
        return result

    def _modern(self, method: str, params: JSON, meta: JSON) -> JSON | Work:
        era = modern_era(meta)
        if method == "server/discover":
            out: JSON = {
                "resultType": "complete",
                "supportedVersions": SUPPORTED,
                "capabilities": {"tools": {}},
                "serverInfo": self._server_info(),
                "ttlMs": CACHE_TTL_MS,
                "cacheScope": "public",
            }
            if self._info.instructions:
                out["instructions"] = self._info.instructions
        elif method == "tools/list":
            out = {
                "resultType": "complete",
                "tools": self._tool_list(),
                "ttlMs": CACHE_TTL_MS,
                "cacheScope": "public",
            }
        elif method == "tools/call":
            work = self._prepare_call(params, era)

            async def modern_call() -> JSON:
                answer = await work()
                answer.setdefault("resultType", "complete")
                answer["_meta"] = self._meta()
                return answer

            return modern_call
        else:
            raise RpcError(rpc.METHOD_NOT_FOUND, f"Method not found: {_short(method)}")
        out["_meta"] = self._meta()
        return out

    def _meta(self) -> JSON:
        return {"io.modelcontextprotocol/serverInfo": self._server_info()}

    def _server_info(self) -> JSON:
        info: JSON = {"name": self._info.name, "version": self._info.version}
        if self._info.title:
            info["title"] = self._info.title
        return info

    def _tool_list(self) -> list[JSON]:
        return [t.describe() for t in self._tools.values()]

    # -- tools/call -----------------------------------------------------------------------------

    def _prepare_call(self, params: JSON, era: Era) -> Work:
        """Check the call's shape now (JSON-RPC errors); return the work of running it."""
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(rpc.INVALID_PARAMS, "Invalid params: name must be a string")
        tool = self._tools.get(name)
        if tool is None:
            raise RpcError(rpc.INVALID_PARAMS, f"Unknown tool: {_short(name)}")
        # Absent is no arguments; sent, it is an object (`null` is not: the CallToolRequest shape).
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise RpcError(rpc.INVALID_PARAMS, "Invalid params: arguments must be an object")
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        token = meta.get("progressToken")
        if not (isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool))):
            token = None
        from offprompt.mcp import calls

        ctx = calls.context(self, name, era, meta, token)
        if era.version == MODERN:
            calls.open_state(self.signer, params, ctx, arguments)
        return lambda: calls.run(self, tool, arguments, ctx)

    @property
    def signer(self) -> StateSigner:
        """What signs and verifies requestState, made on the first 2026-07-28 call."""
        if self._signer_given is None:
            from offprompt.mcp.state import StateSigner

            self._signer_given = StateSigner()
        return self._signer_given

    # -- server → client ------------------------------------------------------------------------

    @property
    def legacy_ready(self) -> bool:
        """Legacy server→client requests are allowed only after `notifications/initialized`."""
        return self._legacy is not None and self._legacy.initialized and not self._closed

    async def request_client(self, method: str, params: JSON, timeout: float) -> Any:
        """Send a legacy request and await the answer; TimeoutError or ClientError otherwise."""
        import asyncio

        self._out.next_id += 1
        rid = f"offprompt-{self._out.next_id}"
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._out.futures[rid] = fut
        self._send(rpc.request(rid, method, params))
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            # A late answer after a timeout finds no future and is ignored.
            self._out.futures.pop(rid, None)

    def notify(self, method: str, params: JSON) -> None:
        self._send(rpc.notification(method, params))


def _kind() -> str:
    """The current exception's type and where it was raised, never its message: a message can
    quote anything, a value included."""
    import sys

    exc = sys.exc_info()[1]
    if exc is None:
        return "unknown"
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb is not None else ""
    return f"{type(exc).__name__}{where}"


def _short(text: str) -> str:
    return text if len(text) <= 80 else text[:80] + "…"
