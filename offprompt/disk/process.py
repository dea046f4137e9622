"""The one way offprompt runs a program and waits for it (DESIGN §2): no shell, the whole
environment given by the caller, stdin closed or fed the bytes given (a value goes there, never
into argv or the environment), a time limit after which the program and everything it started
are killed, and each of its outputs read up to a bound.

Every bounded run of a child program starts here: git (disk.git), a destination's program
(sinks.destinations.runner), a declared command's `--version` (agents.version_check). What an
answer means, and which variables a program must not see, stays with each caller. A program
that must outlive the call (the tunnel, the person's browser) is not a bounded run and does not
come here.

Light enough for the guard's hook, which loads it only when it asks git: `os` at import, the
subprocess machinery when a program is run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

# No subprocess, selectors or signal at import (signal brings enum): see the docstring.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess

__all__ = ["GRACE", "MOST", "Ended", "Frozen", "find", "run"]

MOST = 4 * 1024 * 1024
"""Bytes a program may print on stdout, and apart on stderr, unless the caller says otherwise:
a program (or a crafted repository git reads) cannot fill this process's memory."""
GRACE = 1.0
"""Seconds what a killed program left in its pipes is still read (the last line it printed
before it hung says why), when something outside its group holds them open."""

_CHUNK = 32768
_PIPE_BUF = 4096  # a write of at most this much to a pipe poll calls writable does not block


class Frozen:
    """A record set once in `__init__` (with `object.__setattr__`), without dataclasses (the
    guard's start-up loads none): any later change raises."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")


class Ended(Frozen):
    """How a run ended. Frozen; the repr shows sizes only, as the output can hold a value.

    `code` is the exit status (negative: the signal that ended it), None when offprompt
    stopped it: at the time limit (`stopped`) or for printing more than its bound
    (`too_long`). `out` and `err` are what it printed (up to the bound), in memory only."""

    __slots__ = ("code", "err", "out", "stopped", "too_long")
    code: int | None
    out: bytes
    err: bytes
    stopped: bool
    too_long: bool

    def __init__(
        self,
        code: int | None,
        out: bytes,
        err: bytes,
        *,
        stopped: bool = False,
        too_long: bool = False,
    ) -> None:
        for name, value in (
            ("code", code),
            ("out", out),
            ("err", err),
            ("stopped", stopped),
            ("too_long", too_long),
        ):
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return (
            f"Ended(code={self.code}, out=<{len(self.out)} bytes>, err=<{len(self.err)} bytes>,"
            f" stopped={self.stopped}, too_long={self.too_long})"
        )


def find(names: Sequence[str], env: Mapping[str, str]) -> str | None:
    """The absolute path of the first of `names` on `env`'s PATH (an executable file, as
    shutil.which looks, without its import), else None.

    An empty or relative PATH entry is skipped: it names a folder of wherever offprompt runs,
    and a project can hold a program called `git` or `gh`.
    """
    folders = [f for f in env.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(f)]
    for name in names:
        for folder in folders:
            path = os.path.join(folder, name)
            if os.access(path, os.X_OK) and not os.path.isdir(path):
                return os.path.abspath(path)
    return None


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    timeout: float,
    cwd: str | os.PathLike[str] | None = None,
    stdin: bytes | None = None,
    most: int = MOST,
) -> Ended:
    """Run `argv` (no shell) with exactly `env`, in `cwd`, and wait at most `timeout` seconds.

    stdin is `stdin`, written while the outputs are read (so neither side stalls), or nothing
    (None: closed from the start). The program runs in a session of its own: at the limit, or
    past `most` bytes on stdout or on stderr, it is killed with everything it started. An
    interruption (KeyboardInterrupt, a cancelled thread's exception) kills them too. OSError,
    as the system gave it, when the program cannot be started or its pipes fail.
    """
    import subprocess
    import time

    deadline = time.monotonic() + timeout
    proc = subprocess.Popen(  # noqa: S603 - argv from each caller's checked parts, no shell
        list(argv),
        bufsize=0,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        close_fds=True,
        start_new_session=True,  # its own group, so a kill reaches what it started
    )
    out: list[bytes] = []
    err: list[bytes] = []
    try:
        ended = _exchange(proc, stdin or b"", deadline, most, out, err)
        if ended == "too long":
            _kill(proc)
            return Ended(None, b"".join(out), b"".join(err), too_long=True)
        if ended == "done":
            try:
                code = proc.wait(max(deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                _kill(proc)
                return Ended(None, b"".join(out), b"".join(err), stopped=True)
            return Ended(code, b"".join(out), b"".join(err))
        # The limit passed with its outputs still open.
        exited = proc.poll()
        _kill(proc)
        if exited is not None:
            # It ended in time; something it left running still held its output open (killed
            # now with its group, or out of reach in a session of its own). Its exit status is
            # the answer.
            return Ended(exited, b"".join(out), b"".join(err))
        # What it printed before it hung says why: read what is left, briefly.
        if _exchange(proc, b"", time.monotonic() + GRACE, most, out, err) == "too long":
            return Ended(None, b"".join(out), b"".join(err), too_long=True)
        return Ended(None, b"".join(out), b"".join(err), stopped=True)
    finally:
        if proc.returncode is None:
            _kill(proc)
            proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the program's whole group (it leads it), and the program itself whatever came of
    that, and reap it."""
    import contextlib
    import signal

    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(OSError):
        proc.wait()


def _exchange(
    proc: subprocess.Popen[bytes],
    data: bytes,
    deadline: float,
    most: int,
    out: list[bytes],
    err: list[bytes],
) -> str:
    """Feed `data` to the program and read both outputs at once (a pipe left full would stall
    it) into `out` and `err`, each up to `most` bytes in all: subprocess.communicate with
    bounds. "done" when both ended, "late" when the deadline passed first, "too long" past
    `most`."""
    import selectors
    import time

    if proc.stdout is None or proc.stderr is None:  # not the case: both are opened as pipes
        raise ValueError("the program's output is not piped")
    if proc.stdout.closed:  # read to the end before
        return "done"
    fds = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    size = {fd: sum(map(len, chunks)) for fd, chunks in fds.items()}
    stdin = proc.stdin if proc.stdin is not None and not proc.stdin.closed else None
    offset = 0
    with selectors.DefaultSelector() as selector:
        for fd in fds:
            selector.register(fd, selectors.EVENT_READ)
        if stdin is not None:
            if data:
                selector.register(stdin.fileno(), selectors.EVENT_WRITE)
            else:
                stdin.close()
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return "late"
            for key, _ in selector.select(left):
                fd = key.fd
                if fd in fds:
                    chunk = os.read(fd, min(_CHUNK, most + 1 - size[fd]))
                    if not chunk:
                        selector.unregister(fd)
                        continue
                    size[fd] += len(chunk)
                    if size[fd] > most:
                        fds[fd].append(chunk[: len(chunk) - (size[fd] - most)])
                        return "too long"
                    fds[fd].append(chunk)
                elif stdin is not None:
                    try:
                        offset += os.write(fd, data[offset : offset + _PIPE_BUF])
                    except BrokenPipeError:  # it stopped reading: what it prints still counts
                        offset = len(data)
                    if offset >= len(data):
                        selector.unregister(fd)
                        stdin.close()
    proc.stdout.close()
    proc.stderr.close()
    return "done"
