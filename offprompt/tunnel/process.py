"""One `cloudflared tunnel --url` child: spawn, read its URL from stderr, keep draining, stop.

Nothing it prints is logged: only the hostname, once parsed, is ever written to our log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import subprocess
from pathlib import Path
from typing import Any, Final

from offprompt.errors import TunnelFailed

__all__ = ["TunnelProcess", "parse_hostname"]

_log = logging.getLogger("offprompt")

# cloudflared prints the quick tunnel's URL inside a box:
#   INF |  https://word-word-word-word.trycloudflare.com                          |
# Requiring the frame keeps an error that quotes https://api.trycloudflare.com from matching.
_URL_LINE: Final = re.compile(
    r"\|\s*https://([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)\.trycloudflare\.com/?\s*\|"
)
_MAX_LINE: Final = 8192
STOP_GRACE: Final = 2.0


def parse_hostname(line: str) -> str | None:
    """The quick tunnel's hostname if `line` is the boxed URL line, else None."""
    match = _URL_LINE.search(line)
    if match is None or match.group(1) == "api":
        return None
    return f"{match.group(1)}.trycloudflare.com"


class TunnelProcess:
    """A running cloudflared and the hostname it printed."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self._proc = proc
        self._found: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._drains = [
            asyncio.ensure_future(self._drain(stream))
            for stream in (proc.stdout, proc.stderr)
            if stream is not None
        ]
        self.hostname: str | None = None

    @classmethod
    async def start(cls, binary: Path, port: int, *, timeout: float) -> TunnelProcess:
        """Spawn cloudflared for `http://127.0.0.1:<port>`; return once it printed its URL."""
        try:
            proc = await asyncio.create_subprocess_exec(
                str(binary),
                "tunnel",
                "--no-autoupdate",
                "--url",
                f"http://127.0.0.1:{port}",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            raise TunnelFailed(f"cloudflared could not be started ({exc.strerror})") from None
        tunnel = cls(proc)
        exited = asyncio.ensure_future(proc.wait())
        found = tunnel._found
        either: set[asyncio.Future[Any]] = {found, exited}
        try:
            done, _ = await asyncio.wait(
                either, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if found in done:
                tunnel.hostname = tunnel._found.result()
                return tunnel
            if exited in done:
                raise TunnelFailed(
                    f"cloudflared exited (code {proc.returncode}) before printing a tunnel URL"
                )
            raise TunnelFailed(f"cloudflared printed no tunnel URL within {timeout:g} s")
        except BaseException:
            await tunnel.stop()
            raise
        finally:
            exited.cancel()

    @property
    def running(self) -> bool:
        return self._proc.returncode is None

    @property
    def pid(self) -> int:
        return self._proc.pid

    async def wait(self) -> int:
        """The exit code, once cloudflared has exited."""
        return await self._proc.wait()

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        # Read chunks, not readline(): a line longer than the reader's limit would raise.
        pending = b""
        while chunk := await stream.read(4096):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                self._line(line)
            if len(pending) > _MAX_LINE:
                pending = b""
        if pending:
            self._line(pending)

    def _line(self, raw: bytes) -> None:
        if self._found.done():
            return
        host = parse_hostname(raw[:_MAX_LINE].decode("utf-8", "replace"))
        if host is not None:
            self._found.set_result(host)

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """SIGTERM, then SIGKILL after `grace` seconds; waits for the exit. Safe to call twice."""
        if self._proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._proc.terminate()
            try:
                await asyncio.wait_for(self._proc.wait(), grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self._proc.kill()
                await self._proc.wait()
        for task in self._drains:
            task.cancel()
        await asyncio.gather(*self._drains, return_exceptions=True)
        if not self._found.done():
            self._found.cancel()
