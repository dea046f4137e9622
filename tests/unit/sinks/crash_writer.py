"""A real writer process for the crash tests: it writes .env through offprompt.sinks and dies.

    python crash_writer.py PROJECT at N VALUE     SIGKILL itself just before the N-th call
                                                  `offprompt.sinks.atomic` makes into `os`
                                                  (N = 1: before the first); exit 0 with
                                                  "calls=<count>" when the write ends first
    python crash_writer.py PROJECT loop PREFIX    print "ready", then write PREFIX-0, PREFIX-1…
                                                  until killed from outside

Every step of the write goes through `atomic.os` and `disk.walk.os` (mkdir, open, write, fsync,
rename, unlink, rmdir…), so stopping before each call in turn visits every instant a crash can
leave behind.
"""

import os
import signal
import sys
from pathlib import Path
from typing import Any

from offprompt import sinks
from offprompt.disk import walk
from offprompt.sinks import atomic


class _KillingOs:
    """`os`, except that the `stop_at`-th function call SIGKILLs the process instead."""

    def __init__(self, stop_at: int) -> None:
        self.calls = 0
        self.stop_at = stop_at

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if not callable(real) or isinstance(real, type):
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == self.stop_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)

        return call


def main(project: Path, mode: str, arg: str, value: str | None) -> int:
    if mode == "at":
        shim = _KillingOs(int(arg))
        atomic.os = walk.os = shim  # type: ignore[assignment]
        sinks.write(project, sinks.SinkSpec(), {"API_KEY": value or ""})
        print(f"calls={shim.calls}", flush=True)
        return 0
    print("ready", flush=True)
    i = 0
    while True:
        sinks.write(project, sinks.SinkSpec(), {"API_KEY": f"{arg}-{i}"}, allow_tracked=True)
        i += 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2], sys.argv[3], (sys.argv[4:] or [None])[0]))
