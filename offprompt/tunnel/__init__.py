"""The process's one cloudflared quick tunnel to the page server (DESIGN §5).

Started on the first remote request and shared; its link is handed out only after a GET through
it reached our own server. Finding or fetching cloudflared (`binary`), running it (`process`)
and aiohttp (for that GET) are imported on the first remote request, not by a local one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from offprompt.tunnel.process import TunnelProcess

__all__ = ["TUNNEL_SECONDS", "Tunnel", "TunnelLink"]

_log = logging.getLogger("offprompt")

TUNNEL_SECONDS: Final = 20.0
_RETRY: Final = 0.5


class PageServer(Protocol):
    """What the tunnel needs of the page server (offprompt.page.loopback's): its port, the
    host it answers for, and a one-off probe path. Said here, so the tunnel stays below the
    page in the house rather than importing it."""

    tunnel_host: str | None

    async def start(self) -> int: ...

    def probe_begin(self) -> tuple[str, str]: ...

    def probe_end(self) -> None: ...


@dataclass(frozen=True)
class TunnelLink:
    """The tunnel's origin (`https://<host>`), or why there is none."""

    origin: str | None
    problem: str | None = None


class Tunnel:
    """Owns the cloudflared child for one page server; `link()` starts it on first use."""

    def __init__(self, env: Mapping[str, str], *, budget: float = TUNNEL_SECONDS) -> None:
        self._env = dict(env)
        self._budget = budget
        self._off = env.get("OFFPROMPT_TUNNEL", "").strip().lower() == "off"
        self._lock = asyncio.Lock()
        self._process: TunnelProcess | None = None
        self._watch: asyncio.Task[None] | None = None
        self._failed: str | None = None
        self._page: PageServer | None = None

    @property
    def off(self) -> bool:
        """OFFPROMPT_TUNNEL=off: every link is a loopback one, and none is started."""
        return self._off

    @property
    def hostname(self) -> str | None:
        """The live tunnel's hostname, or None."""
        process = self._process
        return process.hostname if process is not None and process.running else None

    async def link(self, page: PageServer) -> TunnelLink:
        """The live tunnel's origin, starting it if needed; or why there is none.

        A start that failed is not retried in this process (it would fail the same way, each
        time costing the agent the whole budget); a tunnel that came up and later exited is.
        """
        if self._off:
            return TunnelLink(None, "OFFPROMPT_TUNNEL=off")
        from offprompt.errors import NoBinary, TunnelFailed

        async with self._lock:
            if self.hostname is not None:
                return TunnelLink(f"https://{self.hostname}")
            if self._failed is not None:
                return TunnelLink(None, self._failed)
            try:
                host = await self._start(page)
            except (NoBinary, TunnelFailed) as err:
                self._failed = str(err)
                # Info, not a warning: both doors tell the person themselves (the terminal's
                # line, the result's note), so a warning here would say it twice.
                _log.info("tunnel: none (%s)", err)
                return TunnelLink(None, self._failed)
            return TunnelLink(f"https://{host}")

    async def _start(self, page: PageServer) -> str:
        from offprompt.tunnel.binary import ensure
        from offprompt.tunnel.process import TunnelProcess

        binary = await ensure(self._env)
        port = await page.start()
        deadline = time.monotonic() + self._budget
        process = await TunnelProcess.start(binary, port, timeout=self._budget)
        host = process.hostname or ""  # start() returns only once the URL was read
        page.tunnel_host = host
        try:
            await _verify(page, host, deadline, process, self._budget)
        except BaseException:
            page.tunnel_host = None
            await process.stop()
            raise
        _log.info("tunnel: https://%s reaches this server", host)
        self._process, self._page = process, page
        self._watch = asyncio.ensure_future(self._until_exit(process, page))
        return host

    async def _until_exit(self, process: TunnelProcess, page: PageServer) -> None:
        code = await process.wait()
        if page.tunnel_host == process.hostname:
            page.tunnel_host = None
        _log.warning("tunnel: cloudflared exited (code %s); the tunnel link no longer works", code)

    async def close(self) -> None:
        """Stop cloudflared (SIGTERM, then SIGKILL) and stop accepting its hostname."""
        async with self._lock:
            process, self._process = self._process, None
            watch, self._watch = self._watch, None
            if watch is not None:
                watch.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watch
            if process is not None:
                if self._page is not None and self._page.tunnel_host == process.hostname:
                    self._page.tunnel_host = None
                await process.stop()


async def _verify(
    page: PageServer, host: str, deadline: float, process: TunnelProcess, budget: float
) -> None:
    """GET a one-off path through the tunnel until our own server answers it, or TunnelFailed.

    The URL can take a few seconds to become reachable after cloudflared prints it, so this
    retries until the deadline.
    """
    import ssl

    import aiohttp

    from offprompt.errors import TunnelFailed

    path, answer = page.probe_begin()
    url = f"https://{host}{path}"
    # The system's trust store as it is now (SSL_CERT_FILE included), and HTTPS_PROXY honoured:
    # a machine that reaches the internet through a proxy probes through it.
    connector = aiohttp.TCPConnector(ssl=ssl.create_default_context())
    try:
        async with aiohttp.ClientSession(connector=connector, trust_env=True) as session:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                if not process.running:
                    raise TunnelFailed("cloudflared exited before the tunnel reached this server")
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    timeout = aiohttp.ClientTimeout(total=min(left, 5.0))
                    async with session.get(url, timeout=timeout, allow_redirects=False) as reply:
                        body = await reply.content.read(256)
                        if reply.status == 200 and body == answer.encode():
                            return
                await asyncio.sleep(min(_RETRY, max(0.0, deadline - time.monotonic())))
    finally:
        page.probe_end()
    raise TunnelFailed(f"the tunnel https://{host} did not reach this server within {budget:g} s")
