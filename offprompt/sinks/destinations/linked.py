"""Reading the project's own files a destination's link is made of: its first git remote, and
config files (TOML, JSON, JSONC) by their project-relative name. Read-only; what a file must
say to link a kind is that kind's module's, and nothing here runs a destination's program.

Every file is read only when it is a regular file inside the project under 1 MiB, and within
`READ_SECONDS`: a FIFO, a device, a link out of the project or a stuck file system is "not
linked", never a wait (the agent can put any of them where a config should be).
"""

from __future__ import annotations

import os
import stat
import threading
import time
import tomllib
from pathlib import Path
from typing import Any, Final

from offprompt.configedit import jsonc
from offprompt.disk import git as runner

__all__ = ["MAX_READERS", "READ_SECONDS", "first_remote", "read_config"]

READ_SECONDS: Final = 2.0
MAX_READERS: Final = 8
"""Reads at once, process-wide: a read stuck on a hung file system is left behind in its thread,
so past this many a further read is refused instead of leaving one more thread for ever."""
_READERS: Final = threading.BoundedSemaphore(MAX_READERS)
_MAX_CONFIG: Final = 1024 * 1024
_KEYS: Final = r"^remote\..+\.url$"


def read_file(project: Path, rel: str) -> bytes | None:
    """The bytes of `project/rel`, None when it is absent. ValueError, naming `rel`, when it
    is not a regular file inside the project, is 1 MiB or larger, or is not read within
    `READ_SECONDS` (the wait for a reader included, when `MAX_READERS` reads are stuck)."""
    box: dict[str, bytes | BaseException | None] = {}
    deadline = time.monotonic() + READ_SECONDS
    if not _READERS.acquire(timeout=READ_SECONDS):
        raise ValueError(
            f"{rel} was not read: {MAX_READERS} earlier reads of the project's files are still "
            "waiting on them (a file system that does not answer?)"
        )

    def work() -> None:
        try:
            box["data"] = _read_file(project, rel)
        except BaseException as e:  # handed to the caller's thread
            box["error"] = e
        finally:
            _READERS.release()

    # A read of a hung mount cannot be interrupted; it is left behind in its own thread.
    reader = threading.Thread(target=work, name=f"offprompt-read-{rel}", daemon=True)
    try:
        reader.start()
    except BaseException:
        _READERS.release()
        raise
    reader.join(max(deadline - time.monotonic(), 0))
    if reader.is_alive():
        raise ValueError(f"{rel} was not read in time ({READ_SECONDS:g} s)")
    error = box.get("error")
    if isinstance(error, BaseException):
        raise error
    data = box.get("data")
    return data if isinstance(data, bytes) else None


def _read_file(project: Path, rel: str) -> bytes | None:
    root = os.path.realpath(project)
    real = os.path.realpath(project / rel)
    if not os.path.lexists(real):
        return None
    if os.path.commonpath([root, real]) != root:
        raise ValueError(f"{rel} links to a file outside the project")
    try:
        # O_NONBLOCK: opening a FIFO waits for a writer otherwise. O_NOFOLLOW: a link put in
        # place since realpath is refused, not followed.
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ValueError(f"{rel} cannot be read ({e.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{rel} is not a regular file")
        if info.st_size > _MAX_CONFIG:
            raise ValueError(f"{rel} is larger than 1 MiB")
        chunks: list[bytes] = []
        size = 0
        while size <= _MAX_CONFIG:
            chunk = os.read(fd, _MAX_CONFIG + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise ValueError(f"{rel} cannot be read ({e.strerror})") from None
    finally:
        os.close(fd)
    if size > _MAX_CONFIG:  # grew since fstat
        raise ValueError(f"{rel} is larger than 1 MiB")
    return b"".join(chunks)


def first_remote(project: Path) -> tuple[str, str] | None:
    """(name, url) of the project's first git remote, in the order its config lists them (the
    order they were added; `git remote` sorts by name); None when there is none.

    OSError or ValueError when git cannot answer. The url may hold credentials: never show it.
    When the project holds its own `.git` folder, its config is read like any project file
    and git parses those very bytes from stdin (so what git reads is what was checked).
    """
    if runner.find() is None:
        raise OSError("git is not installed")
    dot_git = project / ".git"
    config: bytes | None = None
    if dot_git.is_symlink():
        root = os.path.realpath(project)
        if os.path.commonpath([root, os.path.realpath(dot_git)]) != root:
            raise ValueError(".git links to a folder outside the project")
    if dot_git.is_dir():
        config = read_file(project, ".git/config")
        if config is None:
            raise ValueError("the project is not a git repository (.git has no config)")
        where = ["--file", "-"]
    else:
        # A worktree or submodule (`.git` is a file naming the real folder), or a project
        # inside a repository: git finds the config; its own time limit bounds the wait.
        where = ["--local"]
    # Our own repository only: the runner leaves out GIT_DIR & co., which would name another one.
    argv = ["-c", "safe.directory=*", "config", *where, "--null", "--get-regexp", _KEYS]
    try:
        done = runner.run(
            argv, cwd=project, input=config if config is not None else b"", timeout=5.0
        )
    except runner.NotFound:
        raise OSError("git is not installed") from None
    except runner.NotStarted as e:
        raise e.error from None
    except runner.TimedOut as e:
        # In the words subprocess's TimeoutExpired gave before the runner (GitHub's link says it).
        raise ValueError(f"Command '{e.argv}' timed out after {e.seconds} seconds") from None
    except runner.GitError as e:
        raise ValueError(str(e)) from None
    if done.returncode == 1:  # no such key: no remote
        return None
    if done.returncode == 128 and config is None:  # --local outside a repository
        raise ValueError("the project is not a git repository")
    if done.returncode != 0:
        raise ValueError(f"git config exited with {done.returncode}")
    for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        key, _, url = entry.partition("\n")
        if key.startswith("remote.") and key.endswith(".url"):
            return key[len("remote.") : -len(".url")], url.strip()
    return None


def read_config(project: Path, rel: str) -> dict[str, Any] | None:
    """The top-level table of the TOML, JSON or JSONC config `project/rel`; None when the file
    is absent. ValueError when it is not one (see `read_file`; or not a table)."""
    data = read_file(project, rel)
    if data is None:
        return None
    path = Path(rel)
    try:
        text = data.decode("utf-8-sig")
        if path.suffix == ".toml":
            parsed: Any = tomllib.loads(text)
        else:
            # JSON with comments and trailing commas, as wrangler reads it: the reader init's
            # editors use, which knows a comma or `//` inside a string from one outside.
            parsed = jsonc.parse(text).root.value
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, jsonc.JsoncError, RecursionError):
        # RecursionError: tomllib's answer to arrays nested thousands deep.
        raise ValueError(f"{rel} is not valid {_format(path)}") from None
    if not isinstance(parsed, dict):
        raise ValueError(f"{rel} does not hold a table of settings")
    return parsed


def _format(path: Path) -> str:
    return {".toml": "TOML", ".jsonc": "JSONC"}.get(path.suffix, "JSON")
