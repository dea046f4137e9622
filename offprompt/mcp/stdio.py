"""The stdio side of `offprompt serve`: line framing, stdout hygiene, signals, exit.

Lines are answered synchronously until the first tool call, so `initialize` and `tools/list`
are answered before asyncio (or logging) is imported; then the rest runs on an event loop.
"""

from __future__ import annotations

import os
import signal
import sys

from offprompt.mcp.server import Server, ServerInfo

TYPE_CHECKING = False  # not typing's: the first reply does without it (see jsonrpc)
if TYPE_CHECKING:
    import logging
    from collections.abc import Awaitable, Callable, Iterator, Sequence
    from types import FrameType, TracebackType
    from typing import TypeAlias

    from offprompt.mcp.declaration import Tool

    Hook: TypeAlias = Callable[[], Awaitable[None]]

MAX_LINE = 4 * 1024 * 1024
OVERSIZE = b"\x00oversize"  # not JSON: answered as a parse error, never dispatched


class LineReader:
    """Splits an fd into lines with raw `os.read` (no buffered-reader locks at exit)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buf = bytearray()

    def __iter__(self) -> Iterator[bytes]:
        skipping = False
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                if skipping:
                    skipping = False
                    continue
                yield line
                continue
            if len(self._buf) > MAX_LINE:
                # Too long to be ours: say so once, then drop it up to its newline.
                if not skipping:
                    yield OVERSIZE
                skipping = True
                self._buf.clear()
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                if self._buf.strip() and not skipping:
                    yield bytes(self._buf)
                self._buf.clear()
                return
            self._buf += chunk


class FdWriter:
    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]


class ThreadTransport:
    """Feeds the remaining lines of a `LineReader` to the event loop from a daemon thread."""

    def __init__(self, lines: Iterator[bytes]) -> None:
        import asyncio
        import threading

        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._lines = lines
        threading.Thread(target=self._pump, name="offprompt-stdin", daemon=True).start()

    def _pump(self) -> None:
        try:
            for line in self._lines:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, line)
            self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
        except RuntimeError:
            pass  # the loop closed first: the process is exiting

    async def read(self) -> bytes | None:
        return await self._queue.get()


class App:
    """What `serve` runs: the tools, the server's identity, and what to close at exit."""

    __slots__ = ("info", "on_close", "tools")

    def __init__(
        self, tools: Sequence[Tool], info: ServerInfo, on_close: list[Hook] | None = None
    ) -> None:
        self.tools = tools
        self.info = info
        self.on_close = on_close if on_close is not None else []


class _Stop(BaseException):
    """SIGINT/SIGTERM during the synchronous phase; a BaseException so no handler swallows it.

    Never leaves this module: `run` catches it and shuts down.
    """


def _raise_stop(_signum: int, _frame: FrameType | None) -> None:
    raise _Stop


def _protect_stdout() -> int:
    """Keep the real stdout for the protocol; send fd 1 (prints, children) to stderr."""
    proto = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto


_logging = {"ready": False}


def _logger() -> logging.Logger:
    """The stderr logger, set up on first need: the first replies do without `logging`."""
    from offprompt import log

    if not _logging["ready"]:
        log.setup()
        log.catch_uncaught()
        _logging["ready"] = True
    return log.get()


def _uncaught(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    """Until logging is set up: set it up, then let its hook say it in one prefixed line."""
    _logger()
    sys.excepthook(exc_type, exc, tb)


TERMINAL_NOTE = (
    b"offprompt serve: this is the MCP server your agent starts itself; to set up an agent,"
    b" run `offprompt init` in your project. Serving MCP on stdin/stdout (Ctrl-D ends).\n"
)


def _tell_a_person() -> None:
    """Hosts start `serve` on pipes; a person who types it on a terminal is told what it is."""
    try:
        if os.isatty(0):
            os.write(2, TERMINAL_NOTE)
    except OSError:
        pass  # stderr closed: nobody to tell


def run(make_app: Callable[[], App]) -> int:
    """Serve MCP on stdin/stdout until EOF, SIGINT or SIGTERM; returns the exit status (0)."""
    _tell_a_person()
    sys.excepthook = _uncaught
    app = make_app()
    server = Server(app.tools, app.info, FdWriter(_protect_stdout()), logger=_logger)
    lines = iter(LineReader(0))
    old = {s: signal.signal(s, _raise_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    first: bytes | None = None
    try:
        for line in lines:
            if not server.receive(line, loop_running=False):
                first = line
                break
        else:
            return 0  # end of input before any tool call
    except _Stop:
        return 0
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    import asyncio

    _logger()
    try:
        asyncio.run(_serve(app, server, lines, first))
    except KeyboardInterrupt:  # a second Ctrl-C during shutdown: still quiet
        pass
    return 0


async def _serve(app: App, server: Server, lines: Iterator[bytes], first: bytes) -> None:
    import asyncio

    from offprompt import log

    loop = asyncio.get_running_loop()
    loop.set_exception_handler(log.asyncio_handler)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, server.stop)
    try:
        await server.serve(ThreadTransport(lines), first)
    finally:
        await _close(app)


async def _close(app: App) -> None:
    import asyncio

    from offprompt import log

    for hook in app.on_close:
        try:
            await asyncio.wait_for(hook(), 5)
        except Exception:  # closing must go on whatever one step does
            log.get().warning("a shutdown step failed")
