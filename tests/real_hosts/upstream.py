"""A provider's API on this machine over HTTPS, for the mask's injection (DESIGN §15): a CA of its
own and a certificate for the names given, one thread serving, and every request's headers kept,
so a test can see what a program inside Claude Code's sandbox actually sent once the proxy
rewrote it."""

from __future__ import annotations

import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tls_helpers import make_ca_and_cert

ANSWER = b'{"object": "list", "data": [{"id": "upstream-model"}]}\n'


@dataclass
class Upstream:
    """`with Upstream(folder, names, address) as up:` serves HTTPS on `address`:`up.port`;
    `up.seen` holds each request as (method, path, headers and body as one text block)."""

    folder: Path
    names: list[str]
    address: str = "127.0.0.1"
    port: int = 0
    seen: list[tuple[str, str, str]] = field(default_factory=list)

    def __enter__(self) -> Upstream:
        self.ca, cert, key = make_ca_and_cert(self.folder, self.names, "offprompt test upstream CA")
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = self._body().decode(errors="replace")
                seen.append((self.command, self.path, str(self.headers) + body))
                # /echo answers with what it received, as an API that stores what it is sent
                # and hands it back (a file upload, a log) would.
                answer = ANSWER
                if self.path.startswith("/echo"):
                    answer = f"{self.path}\n{self.headers}{body}".encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_POST = do_GET

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
                    return self.rfile.read(int(self.headers.get("Content-Length") or 0))
                out = b""
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    out += self.rfile.read(size)
                    self.rfile.readline()
                self.rfile.readline()
                return out

            def log_message(self, *_args: object) -> None:
                return

        self._server = ThreadingHTTPServer((self.address, 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
