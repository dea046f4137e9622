"""The one way offprompt runs git (DESIGN §2): the binary found on PATH by an absolute path, none
of this process's GIT_* variables, run through the one runner (disk.process: no shell, no stdin
unless given, a time limit and bounded output, always).

Light enough for the guard's hook: it imports only `os`, `errno` and the runner at first, and
the subprocess machinery when git is run. What git's answer means stays with each caller.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence

from offprompt.disk import process

__all__ = [
    "MOST",
    "TIMEOUT",
    "Answer",
    "GitError",
    "NotFound",
    "NotStarted",
    "TimedOut",
    "TooLong",
    "find",
    "run",
]

TIMEOUT = 5.0
"""Seconds git has to answer unless the caller says otherwise."""
MOST = 4 * 1024 * 1024
"""Bytes git may print on stdout, and apart on stderr, unless the caller says otherwise: a crafted
repository (a huge blob, a config of many megabytes) cannot fill this process's memory."""

# Configuration git takes as if given with `-c` (it is how git hands `-c` to its own children),
# so no caller's argv changes. core.fsmonitor names a program a repository can configure; none of
# offprompt's questions needs it, and a crafted project must not get one run by asking.
_PROTECTIONS = "'core.fsmonitor=false'"


class GitError(Exception):
    """git gave no answer: not found, could not start, too slow, or too much output.

    Outside the error root on purpose (disk/ imports nothing of offprompt): each caller that
    runs git catches it and says what it means in its own words.
    """


class NotStarted(GitError):
    """The git found could not be started, or its pipes failed (`error` is the OSError, as the
    system gave it)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(f"git could not run: {error.strerror}")
        self.error = error


class NotFound(NotStarted):
    """No git on PATH: an ENOENT, as starting a missing program gives."""

    def __init__(self) -> None:
        super().__init__(FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), "git"))


class TimedOut(GitError):
    """git did not finish within `seconds`; it was killed. `argv` is what was run."""

    def __init__(self, argv: list[str], seconds: float) -> None:
        super().__init__(f"git took longer than {seconds:g} s")
        self.argv = argv
        self.seconds = seconds


class TooLong(GitError):
    """git printed more than `most` bytes on stdout or on stderr; it was killed."""

    def __init__(self, most: int) -> None:
        super().__init__(f"git printed more than {most} bytes")
        self.most = most


class Answer(process.Frozen):
    """git's exit status and what it printed (raw bytes). Frozen; the repr shows only sizes, as
    the output can be a file's content."""

    __slots__ = ("returncode", "stderr", "stdout")
    returncode: int
    stdout: bytes
    stderr: bytes

    def __init__(self, returncode: int, stdout: bytes, stderr: bytes) -> None:
        object.__setattr__(self, "returncode", returncode)
        object.__setattr__(self, "stdout", stdout)
        object.__setattr__(self, "stderr", stderr)

    def __repr__(self) -> str:
        return (
            f"Answer(returncode={self.returncode}, stdout=<{len(self.stdout)} bytes>,"
            f" stderr=<{len(self.stderr)} bytes>)"
        )


def find() -> str | None:
    """git's absolute path, as PATH names it, or None (an empty or relative PATH entry is
    skipped: it would name a folder of wherever offprompt runs, and a project can hold a program
    called `git`)."""
    return process.find(("git",), os.environ)


def run(
    args: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    input: bytes | None = None,
    timeout: float = TIMEOUT,
    most: int = MOST,
    keep_locale: bool = False,
) -> Answer:
    """Run `git ARGS` in `cwd` and wait for it, at most `timeout` seconds (disk.process: no
    shell, its own process group, killed with what it started at the limit).

    Its environment is this process's without any GIT_* variable (GIT_DIR, GIT_WORK_TREE,
    GIT_CONFIG_PARAMETERS... would make git answer about another repository, or configure it),
    with LC_ALL=C unless `keep_locale` (a caller that shows git's own words to a person keeps
    their language). stdin is `input`, or nothing. Any exit status is an Answer; GitError when
    git gives none (NotFound, NotStarted, TimedOut, TooLong).
    """
    git = find()
    if git is None:
        raise NotFound()
    argv = [git, *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_PARAMETERS"] = _PROTECTIONS
    if not keep_locale:
        env["LC_ALL"] = "C"
    try:
        ended = process.run(argv, env=env, cwd=cwd, stdin=input, timeout=timeout, most=most)
    except OSError as e:  # could not start, or a pipe that failed under us: no answer either
        raise NotStarted(e) from None
    if ended.too_long:
        raise TooLong(most)
    if ended.code is None:
        raise TimedOut(argv, timeout)
    return Answer(ended.code, ended.out, ended.err)
