"""A stand-in for Cloudflare's edge: quick-tunnel hostnames, TLS, and a record of what crossed.

It listens on one loopback port for two kinds of connection:
- `REGISTER <origin>` from fake_cloudflared.py: the edge names a fresh
  `<a>-<b>-<c>-<d>.trycloudflare.com` for that origin, answers `HOST <name>`, and routes it
  until that connection closes (cloudflared gone = hostname dead, as on the real edge);
- `CONNECT <name>:443` from a browser or client using the edge as its HTTPS proxy: TLS is
  terminated here with a certificate for `*.trycloudflare.com` (signed by a test CA), and the
  decrypted bytes are piped to the origin unchanged, so the Host header the page server sees
  is the tunnel's hostname. Every byte sent towards the origin is kept in `captured`.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tls_helpers import make_ca_and_cert

WORDS = ("amber", "brisk", "cedar", "delta", "ember", "fjord", "glade", "harbor", "iris", "jade")


@dataclass
class Certificates:
    """A throwaway CA (its PEM file, for SSL_CERT_FILE) and the edge's server context."""

    ca_file: Path
    context: ssl.SSLContext


def make_certificates(folder: Path) -> Certificates:
    """A CA and a `*.trycloudflare.com` certificate it signed, valid for a day."""
    names = ["*.trycloudflare.com", "trycloudflare.com", "127.0.0.1"]
    ca_file, chain, key_file = make_ca_and_cert(folder, names, "offprompt test edge CA", "edge-")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(chain, key_file)
    return Certificates(ca_file, context)


@dataclass
class Route:
    origin_host: str
    origin_port: int


@dataclass
class FakeEdge:
    """The edge on its own thread and event loop. Start with `with FakeEdge(folder) as edge:`."""

    folder: Path
    port: int = 0
    routes: dict[str, Route] = field(default_factory=dict)
    captured: dict[str, bytearray] = field(default_factory=dict)
    registered: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.certs = make_certificates(self.folder)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._lock = threading.Lock()
        self._writers: set[asyncio.StreamWriter] = set()

    # -- life ---------------------------------------------------------------------------------

    def __enter__(self) -> FakeEdge:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        self.port = future.result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _start(self) -> int:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for writer in list(self._writers):
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    # -- what tests look at ---------------------------------------------------------------------

    @property
    def proxy(self) -> str:
        """The URL to use as HTTPS proxy (HTTPS_PROXY, Chromium's --proxy-server)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def address(self) -> str:
        """`host:port` for FAKE_EDGE, where fake_cloudflared.py registers."""
        return f"127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """What a process needs to reach hostnames through this edge, and trust it."""
        return {
            "FAKE_EDGE": self.address,
            "HTTPS_PROXY": self.proxy,
            "https_proxy": self.proxy,
            "NO_PROXY": "",
            "no_proxy": "",
            "SSL_CERT_FILE": str(self.certs.ca_file),
        }

    def traffic(self) -> bytes:
        """Every byte any client sent through the edge towards an origin."""
        with self._lock:
            return b"".join(bytes(b) for b in self.captured.values())

    def live(self) -> list[str]:
        with self._lock:
            return list(self.routes)

    # -- connections ----------------------------------------------------------------------------

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            first = await reader.readline()
            words = first.decode("latin-1").split()
            if len(words) >= 2 and words[0] == "REGISTER":
                await self._register(words[1], reader, writer)
            elif len(words) >= 2 and words[0] == "CONNECT":
                await self._connect(words[1], reader, writer)
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _register(
        self, origin: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        hostport = origin.removeprefix("http://").rstrip("/")
        host, _, port = hostport.rpartition(":")
        name = "-".join(secrets.choice(WORDS) for _ in range(3)) + "-" + secrets.token_hex(3)
        hostname = f"{name}.trycloudflare.com"
        with self._lock:
            self.routes[hostname] = Route(host, int(port))
            self.registered.append(hostname)
        writer.write(f"HOST {hostname}\n".encode())
        await writer.drain()
        try:
            await reader.read()  # until cloudflared goes away
        finally:
            with self._lock:
                self.routes.pop(hostname, None)

    async def _connect(
        self, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass  # the proxy request's headers
        host = target.rpartition(":")[0].lower()
        with self._lock:
            route = self.routes.get(host)
        if route is None:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            return
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await writer.drain()
        await writer.start_tls(self.certs.context)
        up_reader, up_writer = await asyncio.open_connection(route.origin_host, route.origin_port)
        self._writers.add(up_writer)
        with self._lock:
            sink = self.captured.setdefault(host, bytearray())
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer, sink), self._pipe(up_reader, writer, None)
            )
        finally:
            with contextlib.suppress(Exception):
                up_writer.close()

    async def _pipe(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        record: bytearray | None,
    ) -> None:
        try:
            while chunk := await source.read(65536):
                if record is not None:
                    with self._lock:
                        record.extend(chunk)
                sink.write(chunk)
                await sink.drain()
        except (ConnectionError, ssl.SSLError, OSError):
            pass
        finally:
            with contextlib.suppress(Exception):
                if sink.can_write_eof():
                    sink.write_eof()


@contextlib.contextmanager
def running_edge(folder: Path) -> Iterator[FakeEdge]:
    with FakeEdge(folder) as edge:
        yield edge
