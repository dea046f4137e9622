"""A host's TUI in a 120x40 pseudo-terminal: pexpect sends the person's keys, pyte keeps the
screen they would read. Every byte the TUI wrote is kept, to search for a value afterwards."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pexpect  # type: ignore[import-untyped]
import pyte

COLUMNS, LINES = 120, 40
KEYS = {
    "enter": "\r",
    "esc": "\x1b",
    "left": "\x1b[D",
    "right": "\x1b[C",
    "down": "\x1b[B",
    "up": "\x1b[A",
    "tab": "\t",
}


class Terminal:
    """One TUI process in a pty; `screen()` is what a person sees right now."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self._screen = pyte.Screen(COLUMNS, LINES)
        self._stream = pyte.ByteStream(self._screen)
        self._lock = threading.Lock()
        self.raw = bytearray()
        self.child = pexpect.spawn(
            argv[0], argv[1:], env=env, cwd=str(cwd), dimensions=(LINES, COLUMNS), echo=False
        )
        self.pid = self.child.pid
        self._reader = threading.Thread(target=self._read, name="pty-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = self.child.read_nonblocking(65536, timeout=0.2)
            except pexpect.TIMEOUT:
                continue
            except (pexpect.EOF, OSError, ValueError):
                return
            with self._lock:
                self.raw += chunk
                self._stream.feed(chunk)

    def screen(self) -> str:
        with self._lock:
            return "\n".join(line.rstrip() for line in self._screen.display)

    def wait(self, what: str | Callable[[str], bool], timeout: float = 30) -> str:
        """The screen once it shows `what` (a regex, or a test of the whole screen)."""
        test = what if callable(what) else (lambda s: re.search(what, s) is not None)
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if test(shown):
                return shown
            if time.monotonic() > deadline:
                raise TimeoutError(f"the screen never showed {what!r}; it shows:\n{shown}")
            time.sleep(0.05)

    def press(self, *keys: str) -> None:
        for key in keys:
            self.child.send(KEYS.get(key, key))
            time.sleep(0.15)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close(force=True)
        self._reader.join(5)
