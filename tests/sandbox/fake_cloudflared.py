"""A fake `cloudflared` for tests: `fake_cloudflared.py tunnel --no-autoupdate --url URL`.

Like the real one it connects out to an edge (FAKE_EDGE=host:port, see edge.py), which names a
`*.trycloudflare.com` hostname for URL, and prints that hostname's https URL on stderr inside
cloudflared's box of `|` lines; then it stays up until SIGTERM, and the hostname dies with it.

FAKE_CLOUDFLARED_MODE changes what it does:
- `ok` (default): as above;
- `exit`: exits 1 at once, printing an error;
- `silent`: never prints a URL (and never exits);
- `deaf`: prints a URL the edge does not route (registers nothing);
- `stubborn`: as `ok`, but ignores SIGTERM (only SIGKILL stops it).
Each start appends one JSON line `{"pid", "argv"}` to FAKE_CLOUDFLARED_LOG, when set.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time

EXPECTED = ["tunnel", "--no-autoupdate", "--url"]


def log(line: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    sys.stderr.write(f"{stamp} INF {line}\n")
    sys.stderr.flush()


def box(url: str) -> None:
    width = 92
    log("+" + "-" * width + "+")
    log(
        "|  Your quick Tunnel has been created! Visit it at "
        "(it may take some time to be reachable):  |"
    )
    log("|  " + url.ljust(width - 2) + "|")
    log("+" + "-" * width + "+")


def main() -> int:
    args = sys.argv[1:]
    if args[:3] != EXPECTED or len(args) != 4 or not args[3].startswith("http://127.0.0.1:"):
        sys.stderr.write(f"fake cloudflared: unexpected arguments {args}\n")
        return 2
    record = os.environ.get("FAKE_CLOUDFLARED_LOG")
    if record:
        with open(record, "a", encoding="utf-8") as out:
            out.write(json.dumps({"pid": os.getpid(), "argv": args}) + "\n")
    mode = os.environ.get("FAKE_CLOUDFLARED_MODE", "ok")
    log(
        "Thank you for trying Cloudflare Tunnel. Doing so, without a Cloudflare account, "
        "is a quick way"
    )
    log("Requesting new quick Tunnel on trycloudflare.com...")
    if mode == "exit":
        sys.stderr.write(
            'ERR failed to request quick Tunnel: Post "https://api.trycloudflare.com/tunnel"\n'
        )
        return 1
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if mode == "silent":
        while True:
            time.sleep(3600)
    if mode == "deaf":
        box("https://nobody-routes-this-name.trycloudflare.com")
        while True:
            time.sleep(3600)
    host, _, port = os.environ["FAKE_EDGE"].rpartition(":")
    conn = socket.create_connection((host, int(port)), timeout=10)
    conn.sendall(f"REGISTER {args[3]}\n".encode())
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = conn.recv(256)
        if not chunk:
            sys.stderr.write("fake cloudflared: the edge hung up\n")
            return 1
        answer += chunk
    hostname = answer.decode().split()[1]
    box(f"https://{hostname}")
    log(f"Registered tunnel connection connIndex=0 location=test protocol=quic url={hostname}")
    conn.settimeout(None)
    while True:
        if not conn.recv(256):  # the edge closed: nothing left to serve
            return 1


if __name__ == "__main__":
    raise SystemExit(main())
