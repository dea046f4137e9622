"""Files offprompt keeps outside any project, reached by path: its state and cache folders, a
lock folder an agent shares with it, a private temporary folder, a downloaded program, and the
files the developers' generators write. Each creates what it writes without following a link.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

from offprompt.disk import fsync_directory, name_prefix, remove_file, walk

__all__ = [
    "fill_new",
    "install_executable",
    "make_lock_folder",
    "make_private_folders",
    "private_temp_folder",
    "remove_folder_if_empty",
    "replace_file",
    "temp_name",
]

_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


def make_private_folders(folder: Path) -> None:
    """Create `folder` and any missing folder above it, each exactly 0700 (ours, nobody else's:
    mkdir's mode passes through the umask). Folders that exist already are left as they are."""
    missing: list[Path] = []
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC)
        try:
            os.fchmod(fd, 0o700)
        finally:
            os.close(fd)


def temp_name(path: Path) -> Path:
    """A fresh name beside `path` for the temporary file a replace of it writes first."""
    return path.with_name(f".{name_prefix(path.name)}.offprompt-{secrets.token_hex(8)}.tmp")


def replace_file(path: Path, data: bytes, *, mode: int | None = 0o600) -> None:
    """Make `path` hold exactly `data`, all or nothing: a new file beside it (created, never
    through a link, `mode` exactly, or 0666 less the umask for None), fsynced, renamed over it.
    A link at `path` is replaced, not followed. Raises OSError; nothing is left behind then."""
    temp = temp_name(path)
    walk.write_new(temp, data, mode=0o666 if mode is None else mode, exact=mode)
    try:
        os.rename(temp, path)
    except BaseException:
        remove_file(temp)
        raise
    fsync_directory(path.parent)


def fill_new(path: Path, chunks: Iterable[bytes]) -> None:
    """Create `path` (it must not exist, never through a link), 0600, holding each of `chunks`
    in turn (a download, read as it comes), fsynced. Whatever `chunks` raises is raised, and
    the file is removed then: no part of a download is left."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb", closefd=False) as out:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
        os.fsync(fd)
    except BaseException:
        remove_file(path)
        raise
    finally:
        os.close(fd)


def install_executable(temp: Path, dest: Path) -> None:
    """Make the file `temp` (ours, beside `dest`) runnable by its owner alone (0700) and put it
    in place of `dest` in one rename. Raises OSError; `temp` is removed then."""
    try:
        fd = os.open(temp, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
        try:
            os.fchmod(fd, 0o700)
        finally:
            os.close(fd)
        os.rename(temp, dest)
    except BaseException:
        remove_file(temp)
        raise
    fsync_directory(dest.parent)


def make_lock_folder(path: Path) -> None:
    """Take a lock held as a folder (proper-lockfile's way, which agents use): FileExistsError
    while another program holds it, OSError when it cannot be made."""
    os.mkdir(path)


def remove_folder_if_empty(path: Path) -> bool:
    """Remove the folder `path` when it is empty (a lock folder, a folder we made); False when
    it is not there, not empty, or could not be removed."""
    try:
        os.rmdir(path)
    except OSError:
        return False
    return True


@contextlib.contextmanager
def private_temp_folder(prefix: str) -> Iterator[Path]:
    """A new folder only its owner can open (0700), outside every project, removed with what it
    holds on exit."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        yield Path(folder)
