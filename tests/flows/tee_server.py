"""Run `offprompt serve` (or the command given), copying every byte of its stdio to $TEE_DIR.

Usage as an MCP server command: `python tests/flows/tee_server.py [CMD...]`. Writes
`<pid>.in` (what the client sent) and `<pid>.out` (what the server answered), so a test can
prove a value never crossed the MCP pipe in either direction. stderr passes straight through.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path


def _copy(src: int, dst: int, log: Path) -> None:
    with log.open("ab", buffering=0) as out:
        while True:
            try:
                chunk = os.read(src, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                return
            out.write(chunk)
            view = memoryview(chunk)
            try:
                while view:
                    view = view[os.write(dst, view) :]
            except OSError:
                return


def main() -> int:
    folder = Path(os.environ["TEE_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    cmd = sys.argv[1:] or [sys.executable, "-m", "offprompt", "serve"]
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None
    assert child.stdout is not None
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, _frame: child.send_signal(signum))
    stem = folder / str(os.getpid())
    child_in = child.stdin.fileno()

    def upstream() -> None:
        _copy(0, child_in, stem.with_suffix(".in"))
        child.stdin.close()  # type: ignore[union-attr]

    threading.Thread(target=upstream, daemon=True).start()
    _copy(child.stdout.fileno(), 1, stem.with_suffix(".out"))
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
