"""The page server of one process (DESIGN §6): a loopback socket bound and listening at once,
so a tool call's link goes out before aiohttp is even imported; the application serves it next.

aiohttp and the application (`page.server`) load on a worker thread, so the event loop sends
the link meanwhile; a browser that connects first waits in the socket's backlog.

It stays up under load: every connection passes a `_Gate` that bounds how many are open (well
below the descriptor limit, read at start) and drops one that has not sent its headers within
HEADER_TIMEOUT; the body's deadline (BODY_TIMEOUT) is kept where the form is read.
"""

from __future__ import annotations

import asyncio
import errno
import importlib
import logging
import secrets
import socket
import sys
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol, cast

from offprompt.errors import PortUnavailable
from offprompt.page.guards import normalize_tunnel_host

if TYPE_CHECKING:
    from collections.abc import Callable

    from aiohttp import web

    from offprompt.store import RequestRecord, RequestStore
    from offprompt.write.submit import Submitter

__all__ = ["BODY_TIMEOUT", "HEADER_TIMEOUT", "PageServer", "PageSettings", "connection_bound"]

_log = logging.getLogger("offprompt")
_BACKLOG = 128

# Seconds a connection has to send its request's headers (from connecting, or from the last
# answer on a kept-alive connection), and a submit's body once its headers are in. Read when
# used, so a test can lower them.
HEADER_TIMEOUT: Final[float] = 10.0
BODY_TIMEOUT: Final[float] = 30.0

# Open page connections at most: a quarter of the descriptor limit, the rest left to the MCP
# tools, files, pipes and programs; within these bounds whatever the limit. A browser opens six.
_FEWEST: Final = 8
_MOST: Final = 512
# The end of a header block; a lone LF is what lenient parsers take for a CRLF.
_HEADERS_END: Final = (b"\r\n\r\n", b"\n\n")


def connection_bound() -> int:
    """How many page connections may be open at once, from the descriptor limit now."""
    try:
        import resource
    except ImportError:  # Windows: no such limit to stay under
        return _MOST
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return _FEWEST  # fail closed: the smallest bound
    if soft == resource.RLIM_INFINITY:
        return _MOST
    return max(_FEWEST, min(_MOST, soft // 4))


class _Inner(Protocol):
    """What the gate hands on to: aiohttp's request handler (an asyncio protocol)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None: ...
    def data_received(self, data: bytes) -> None: ...
    def eof_received(self) -> bool | None: ...
    def connection_lost(self, exc: Exception | None) -> None: ...
    def pause_writing(self) -> None: ...
    def resume_writing(self) -> None: ...


class _Gate:
    """The page's connections: at most `bound` open; past it, the oldest one still silent
    (no header block yet) is closed to make room, or, when every open one has spoken, the
    newcomer is. A silent connection is closed HEADER_TIMEOUT after it connected."""

    def __init__(self, factory: Callable[[], _Inner], bound: int) -> None:
        self.factory = factory
        self.bound = bound
        self.open = 0
        self.silent: OrderedDict[_Guarded, None] = OrderedDict()  # oldest first

    def __call__(self) -> asyncio.Protocol:
        return _Guarded(self)

    def admit(self, conn: _Guarded) -> bool:
        if self.open >= self.bound:
            if not self.silent:
                return False
            oldest, _ = self.silent.popitem(last=False)
            oldest.evict()
        self.open += 1
        self.silent[conn] = None
        return True

    def spoke(self, conn: _Guarded) -> None:
        self.silent.pop(conn, None)

    def gone(self, conn: _Guarded) -> None:
        """`conn` no longer counts: closed, or being closed to make room."""
        self.silent.pop(conn, None)
        self.open -= 1


class _Guarded(asyncio.Protocol):
    """One connection through the gate: aiohttp's handler behind a header deadline."""

    def __init__(self, gate: _Gate) -> None:
        self._gate = gate
        self._inner: _Inner | None = None
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._tail = b""
        self._counted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = cast("asyncio.Transport", transport)  # a TCP connection's
        self._transport = transport
        if not self._gate.admit(self):
            transport.abort()  # refused at once: every open connection is a request under way
            return
        self._counted = True
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(HEADER_TIMEOUT, self._late)
        self._inner = self._gate.factory()
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._timer is not None:
            seen = self._tail + data
            if any(end in seen for end in _HEADERS_END):
                self._spoke()
            else:
                self._tail = seen[-3:]
        if self._inner is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._inner is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        self._spoke()
        self._uncount()
        inner, self._inner = self._inner, None
        if inner is not None:
            inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def evict(self) -> None:
        """Closed to make room: it stops counting now, before its socket is closed."""
        self._uncount()
        self.drop()

    def _uncount(self) -> None:
        if self._counted:
            self._counted = False
            self._gate.gone(self)

    def drop(self) -> None:
        """Close the connection now (its bytes, if any, unread)."""
        self._spoke()
        if self._transport is not None:
            self._transport.abort()

    def _spoke(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._gate.spoke(self)

    def _late(self) -> None:
        self._timer = None
        _log.debug("page: a connection sent no request within %g s; dropped", HEADER_TIMEOUT)
        self.drop()


@dataclass
class PageSettings:
    """What the guards accept besides loopback; changed while the server runs."""

    tunnel_host: str | None = None
    # A one-off `(token, answer)`: GET /r/<token> answers `answer`, so a GET through a tunnel
    # can tell it reached this very server.
    probe: tuple[str, str] | None = None


def _unavailable(port: int, err: OSError) -> PortUnavailable:
    """Why the fixed port cannot be listened on, in words a person can act on."""
    if err.errno == errno.EADDRINUSE:
        why = "is in use (by another offprompt, or another program)"
    elif err.errno == errno.EACCES:
        why = "is not allowed to this user (ports below 1024 need privileges)"
    else:
        why = f"cannot be listened on ({(err.strerror or type(err).__name__).lower()})"
    return PortUnavailable(
        f"port {port} on 127.0.0.1 (OFFPROMPT_PORT) {why}: stop what holds it, set"
        " OFFPROMPT_PORT to another port, or unset OFFPROMPT_PORT for a random one."
    )


class PageServer:
    """The page server of one process: started on first use, on 127.0.0.1 and a random port,
    or the fixed `port` (OFFPROMPT_PORT) so one port forward serves every request."""

    def __init__(
        self,
        store: RequestStore,
        submitter: Submitter,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
    ) -> None:
        self._store = store
        self._submitter = submitter
        self._host = host
        self._fixed_port = port
        self._settings = PageSettings()
        self._runner: web.AppRunner | None = None
        self._listening: asyncio.Server | None = None
        self._serving: asyncio.Task[None] | None = None
        self._port: int | None = None
        self._lock = asyncio.Lock()

    @property
    def port(self) -> int | None:
        """The bound port, or None before `start` and after `close`."""
        return self._port

    @property
    def tunnel_host(self) -> str | None:
        """The live tunnel's hostname, accepted by the Host and Origin checks (https)."""
        return self._settings.tunnel_host

    @tunnel_host.setter
    def tunnel_host(self, host: str | None) -> None:
        self._settings.tunnel_host = normalize_tunnel_host(host)

    async def start(self) -> int:
        """Bind and listen; returns the port at once, and the page is served as soon as the
        application is loaded (`serving`). Calling it again returns the same port.

        PortUnavailable when the fixed port cannot be listened on (a later call tries again).
        """
        async with self._lock:
            if self._port is not None:
                return self._port
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            fixed = self._fixed_port
            try:
                if fixed is not None and sys.platform != "win32":
                    # A fixed port is rebound right after the last offprompt closed it: let
                    # its TIME_WAIT connections not stop us (Unix's SO_REUSEADDR still lets
                    # no two listeners share it; Windows' would, so it is left off there).
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((self._host, fixed or 0))
                sock.listen(_BACKLOG)
                sock.setblocking(False)
            except OSError as err:
                sock.close()
                if fixed is None:
                    raise
                raise _unavailable(fixed, err) from None
            except BaseException:
                sock.close()
                raise
            self._port = int(sock.getsockname()[1])
            self._serving = asyncio.ensure_future(self._serve(sock))
            _log.debug("page: listening on %s:%d", self._host, self._port)
            return self._port

    async def serving(self) -> None:
        """Wait until the page is served (it is listening from `start` on)."""
        if self._serving is None:
            raise RuntimeError("the page server is not started")
        await asyncio.shield(self._serving)

    async def _serve(self, sock: socket.socket) -> None:
        try:
            # The import takes longer than everything else a first call does: off the loop.
            server = await asyncio.to_thread(importlib.import_module, "offprompt.page.server")
            from aiohttp import web

            app = server.create_app(self._store, self._submitter, settings=self._settings)
            runner = web.AppRunner(
                app,
                access_log=None,  # an access log would record every page token
                logger=server.protocol_logger(),
                # aiohttp waits this long twice for a handler under way (to finish, then once
                # cancelled): a write takes milliseconds, and a handler stuck on a file system
                # that never answers must not keep the server from exiting within 2 s.
                shutdown_timeout=0.5,
                # A kept-alive connection has as long for its next request's headers as a new
                # one has for its first (the gate's deadline): aiohttp closes it while idle.
                keepalive_timeout=HEADER_TIMEOUT,
            )
            await runner.setup()
            try:
                handler = runner.server
                if handler is None:
                    raise RuntimeError("aiohttp's runner made no server")
                gate = _Gate(handler, connection_bound())
                listening = await asyncio.get_running_loop().create_server(
                    gate, sock=sock, backlog=_BACKLOG
                )
            except BaseException:
                await runner.cleanup()
                raise
            self._runner, self._listening = runner, listening
        except BaseException as exc:
            sock.close()  # a browser gets "connection refused", not a page that never comes
            # Not started any more: the next request binds afresh instead of handing out a
            # link to this dead port.
            self._port = None
            if not isinstance(exc, asyncio.CancelledError):
                _log.error("page: could not serve the page (%s)", type(exc).__name__)
            raise

    def url_for(self, request: RequestRecord, *, origin: str | None = None) -> str:
        """The page link for `request` on this server, or through `origin` (a tunnel's)."""
        if self._port is None:
            raise RuntimeError("the page server is not started")
        return f"{origin or f'http://{self._host}:{self._port}'}/r/{request.token}"

    def probe_begin(self) -> tuple[str, str]:
        """A one-off path and the body this server answers there, until `probe_end`."""
        token, answer = secrets.token_hex(16), secrets.token_urlsafe(24)
        self._settings.probe = (token, answer)
        return f"/r/{token}", answer

    def probe_end(self) -> None:
        self._settings.probe = None

    async def close(self) -> None:
        """Stop serving; a request under way gets about a second to finish. Safe to call twice."""
        async with self._lock:
            serving, self._serving, self._port = self._serving, None, None
            if serving is not None:
                # Let a start under way finish (the import cannot be stopped), then undo it.
                await asyncio.gather(serving, return_exceptions=True)
            listening, self._listening = self._listening, None
            if listening is not None:
                listening.close()  # accept no more; aiohttp's shutdown closes what is open
            runner, self._runner = self._runner, None
            if runner is not None:
                await runner.cleanup()
