"""Reaching a path inside a project by a walk of descriptors, and the one create-write-fsync.

Every folder is opened relative to the one before it with O_NOFOLLOW, the file too, so a folder
swapped for a link after a path was checked makes the walk fail instead of leading elsewhere.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePath
from types import TracebackType
from typing import Final

from offprompt.disk import name_prefix

__all__ = [
    "KEEP_NAME",
    "STAGE_NAME",
    "TEMP_NAME",
    "Changed",
    "Folder",
    "NotCreated",
    "NotRegular",
    "TooLarge",
    "owner",
    "parts_of",
    "reach",
    "unlink_quietly",
    "write_new",
]

_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS: Final = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC

# The staging folder `Folder.replace` makes beside the destination: `.offprompt-<16 hex>`, mode
# 0700. Its first entry is a `.gitignore` holding `*`, written and fsynced before the new file is
# created there, so at every instant git ignores all it holds (the `.gitignore` too): a writer
# killed mid-write leaves nothing `git add -A` would pick up. It stays on the destination's file
# system, which the rename needs.
STAGE_NAME: Final = re.compile(r"\.offprompt-[0-9a-f]{16}")
# The folder at a masked project's root where versions before the undo records moved to the state
# dir (disk.undo) kept a masked file's undo copy. No longer made: a copy one left is moved out of
# the project by the next masked write, and `remove --mask` removes the folder once empty.
KEEP_NAME: Final = ".offprompt-keep"
# What earlier versions named their temporary files, beside the destination; still removed.
TEMP_NAME: Final = re.compile(r"\..{1,64}\.offprompt-[0-9a-f]{16}\.tmp", re.DOTALL)
_STAGE_IGNORE: Final = ".gitignore"
_IGNORE_ALL: Final = b"*\n"

# What a walk's failure means when a part it expected to be a folder is not one any more.
_SWAPPED: Final = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EMLINK})


class NotRegular(Exception):
    """The file is not a regular file (a FIFO, a device, a folder): never read.

    Outside the error root on purpose: disk/ imports nothing of offprompt;
    sinks.atomic and the CLI turn it into a WriteError or a message.
    """


class TooLarge(Exception):
    """The file is larger than the reader's limit.

    Outside the error root on purpose, as NotRegular is.
    """


class NotCreated(OSError):
    """A missing folder on the way could not be made (the OS's errno and words).

    Outside the error root on purpose, as NotRegular is.
    """


class Changed(OSError):
    """A part of the path that was a folder when the path was checked is a link now (or was
    swapped for one): the walk stopped there, nothing was read or written beyond it.

    Outside the error root on purpose, as NotRegular is.
    """


def parts_of(relative: str | PurePath) -> tuple[str, ...]:
    """The parts of a path relative to a folder; ValueError for an absolute path or for an
    empty, `.` or `..` part (a walk goes down only, one named folder at a time)."""
    text = os.fspath(relative)
    if not text or os.path.isabs(text):
        raise ValueError("a walk takes a relative path")
    parts = tuple(text.split(os.sep) if os.sep == "/" else text.replace(os.sep, "/").split("/"))
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError("a walk goes down by named folders only")
    return parts


def _open_dir(name: str, dir_fd: int | None) -> int:
    """Open folder `name` (relative to `dir_fd`) without following a link; Changed when it is a
    link now, ENOTDIR as the OS says it when it is something else that is no folder."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as e:
        if e.errno in _SWAPPED and _is_link(name, dir_fd):
            raise Changed(errno.ELOOP, "a folder on the way became a link") from None
        raise


def _is_link(name: str, dir_fd: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


class Folder:
    """One open folder of a walk, owning the descriptors from the root down to it; closed on
    exit. `created` are the folders the walk made (outermost first), removed by
    `remove_created` when a write fails."""

    def __init__(self, chain: Sequence[int], names: Sequence[str], created: Sequence[int] = ()):
        self._chain = list(chain)  # the root's descriptor, then each folder's below it
        self._names = list(names)  # the name of each folder below the root
        self._created = list(created)  # indexes into `_names` of the folders the walk made
        # (file name, undo records' folder, (project's real folder, the file's parts below it,
        # its record's name)) once sinks.atomic.keep_in_place made the write of that file one
        # in place; `sinks.atomic.replace` then writes it through disk.undo.
        self.kept: tuple[str, Folder, tuple[Path, tuple[str, ...], str]] | None = None

    @property
    def fd(self) -> int:
        return self._chain[-1]

    @property
    def created(self) -> tuple[str, ...]:
        """The folders the walk made, relative to the root, outermost first."""
        return tuple("/".join(self._names[: i + 1]) for i in self._created)

    def __enter__(self) -> Folder:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        while self._chain:
            with contextlib.suppress(OSError):
                os.close(self._chain.pop())

    def remove_created(self) -> None:
        """Remove the folders this walk made (innermost first), if they are still empty."""
        for i in reversed(self._created):
            if i < len(self._chain):  # its parent's descriptor is chain[i]
                with contextlib.suppress(OSError):
                    os.rmdir(self._names[i], dir_fd=self._chain[i])
        self._created = []

    def identity(self) -> tuple[int, int]:
        """(device, inode) of the folder: the same folder whatever name led to it."""
        st = os.fstat(self.fd)
        return st.st_dev, st.st_ino

    def lstat(self, name: str) -> os.stat_result | None:
        """The entry `name` itself (a link is not followed); None when there is none."""
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def read(self, name: str, limit: int) -> bytes | None:
        """The bytes of regular file `name`, or None when there is none. NotRegular for anything
        else (a FIFO or device is never read), ELOOP for a link (never followed), TooLarge past
        `limit`, OSError as the OS says it."""
        flags = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC
        try:
            fd = os.open(name, flags, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotRegular(name)
            if st.st_size > limit:
                raise TooLarge(name)
            chunks: list[bytes] = []
            total = 0
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
                total += len(chunk)
                if total > limit:
                    raise TooLarge(name)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def write_new(
        self, name: str, data: bytes, *, mode: int = 0o600, owner: tuple[int, int] | None = None
    ) -> None:
        """Create `name` here (it must not exist), exactly `mode`, holding `data`, fsynced."""
        write_new(name, data, dir_fd=self.fd, mode=mode, exact=mode, owner=owner)

    def owner(self, name: str) -> tuple[int, int]:
        """Who `name` belongs to, else (no such entry) who this folder belongs to."""
        st = self.lstat(name) or os.fstat(self.fd)
        return st.st_uid, st.st_gid

    def fsync(self) -> None:
        """Make a rename or unlink in this folder durable. Best effort: the change is made."""
        with contextlib.suppress(OSError):
            os.fsync(self.fd)

    def replace(self, name: str, data: bytes, owner: tuple[int, int] | None) -> bool:
        """Make `name` hold exactly `data`, mode 0600, or leave it untouched and raise OSError.

        The new file is made in a fresh staging folder here that git ignores from before the
        first byte of `data` lands (see `STAGE_NAME`), renamed over `name`, and the staging
        folder removed; every step relative to descriptors. `owner` (uid, gid) is applied when
        running as root. False when the staging folder could not be removed afterwards (the next
        write removes it).
        """
        stage = f".offprompt-{secrets.token_hex(8)}"
        temp = f"{name_prefix(name)}.new"  # never the staging folder's own .gitignore
        os.mkdir(stage, 0o700, dir_fd=self.fd)
        try:
            sfd = _open_dir(stage, self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.rmdir(stage, dir_fd=self.fd)
            raise
        try:
            try:
                os.fchmod(sfd, 0o700)  # mkdir's mode is masked by the umask; say it exactly
                _fchown(sfd, owner)
                # Written first thing: a writer killed before its one write leaves an empty
                # .gitignore, which holds nothing; no step depends on its owner or mode.
                write_new(_STAGE_IGNORE, _IGNORE_ALL, dir_fd=sfd, mode=0o600, exact=None)
                with contextlib.suppress(OSError):  # best effort, as for any folder
                    os.fsync(sfd)  # the .gitignore is on disk before the value is
                write_new(temp, data, dir_fd=sfd, mode=0o600, exact=0o600, owner=owner)
                os.rename(temp, name, src_dir_fd=sfd, dst_dir_fd=self.fd)
            except BaseException:
                _discard(self.fd, sfd, stage, temp)
                raise
            self.fsync()
            return _discard(self.fd, sfd, stage, temp)
        finally:
            os.close(sfd)

    def write_in_place(
        self,
        name: str,
        steps: Sequence[tuple[bytes, int]],
        owner: tuple[int, int] | None = None,
    ) -> None:
        """`name` written on its own inode, mode 0600, created when missing: for each step
        (bytes, size) the bytes written at its start, then the file cut (or grown) to `size`,
        fsynced, so a crash leaves it after one step or another (disk.undo picks the steps and
        makes the whole all or nothing). Never through a link and never a file with a second
        hard link, whose other name (maybe outside the project) would change too: NotRegular,
        or EMLINK."""
        flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC
        try:
            fd = os.open(name, flags, 0o600, dir_fd=self.fd)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise NotRegular(name) from None
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotRegular(name)
            if st.st_nlink > 1:
                raise OSError(errno.EMLINK, "it has a second hard link, which would change too")
            os.fchmod(fd, 0o600)
            _fchown(fd, owner)
            for data, size in steps:
                _pwrite_all(fd, data)
                os.ftruncate(fd, size)
                os.fsync(fd)
        finally:
            os.close(fd)
        self.fsync()  # a file made here: its name is durable too

    def remove_stale_temps(self) -> tuple[int, int]:
        """Delete the staging folders (and older temp files) a killed writer left here; how many
        of each. Only while holding the folder's write lock: every writer takes it before
        staging, so any staging folder seen then belongs to a writer that is gone."""
        try:
            names = os.listdir(self.fd)
        except OSError:
            return 0, 0
        stages = temps = 0
        for name in names:
            if STAGE_NAME.fullmatch(name):
                stages += _remove_stage(self.fd, name)
            elif TEMP_NAME.fullmatch(name):
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=self.fd)
                    temps += 1
        return stages, temps


def reach(
    root: Path,
    parts: Iterable[str],
    *,
    create: bool = False,
    owner: tuple[int, int] | None = None,
    folder_mode: int | None = 0o700,
) -> Folder:
    """Open the folder `parts` below the (real, resolved) folder `root`, each part relative to
    the one before and never through a link. With `create`, missing folders are made exactly
    `folder_mode` (None: 0777 less the umask, as an agent makes its config folder), `owner`
    applied when root, and listed in `Folder.created`.

    Raises Changed when a part is a link (a folder swapped after the path was checked),
    NotADirectoryError when a part is a file, FileNotFoundError when one is missing (without
    `create`), NotCreated when a missing folder cannot be made, ValueError for a part that is
    empty, `.` or `..`."""
    names = list(parts)
    if any(part in ("", ".", "..") or "/" in part or os.sep in part for part in names):
        raise ValueError("a walk goes down by named folders only")
    chain = [_open_dir(os.fspath(root), None)]
    created: list[int] = []
    try:
        for part in names:
            made = False
            if create:
                try:
                    os.mkdir(part, 0o777 if folder_mode is None else 0o700, dir_fd=chain[-1])
                    made = True
                except FileExistsError:
                    pass
                except OSError as e:
                    raise NotCreated(e.errno, e.strerror) from None
            try:
                fd = _open_dir(part, chain[-1])
            except BaseException:
                if made:
                    with contextlib.suppress(OSError):
                        os.rmdir(part, dir_fd=chain[-1])
                raise
            chain.append(fd)
            if made:
                created.append(len(chain) - 2)
                if folder_mode is not None:  # mkdir's mode is masked by the umask
                    os.fchmod(fd, folder_mode)
                _fchown(fd, owner)
    except BaseException:
        with Folder(chain, names, created) as partial:
            partial.remove_created()
        raise
    return Folder(chain, names, created)


def owner(root: Path, parts: Sequence[str]) -> tuple[int, int] | None:
    """Who the file at `parts` below `root` belongs to, else its nearest existing folder's
    owner; None when the walk cannot tell (a part is a link or no folder)."""
    *folders, name = parts
    depth = len(folders)
    while True:
        try:
            with reach(root, folders[:depth]) as folder:
                return folder.owner(folders[depth] if depth < len(folders) else name)
        except FileNotFoundError:
            if depth == 0:
                return None
            depth -= 1
        except (OSError, ValueError):
            return None


def write_new(
    name: str | os.PathLike[str],
    data: bytes,
    *,
    dir_fd: int | None = None,
    mode: int = 0o600,
    exact: int | None = 0o600,
    owner: tuple[int, int] | None = None,
    append: bool = False,
    follow: bool = False,
) -> None:
    """The one create, write fully, fsync: `name` (relative to `dir_fd`) created with `mode` (the
    umask applies), set to `exact` when given, handed to `owner` when running as root (best
    effort), written in full (a short write goes on from where it stopped) and fsynced.

    By default the file must not exist and is never reached through a link (O_CREAT | O_EXCL |
    O_NOFOLLOW). `append` adds to the file instead, creating it if missing (one write() per
    piece: lines appended by two processes stay whole), and narrows a mode looser than `exact`;
    `follow` lets a link lead to it. Raises OSError; a file it created is removed again then
    (an appended one is left as it is).
    """
    flags = os.O_WRONLY | os.O_CREAT | _CLOEXEC | getattr(os, "O_BINARY", 0)
    flags |= os.O_APPEND if append else os.O_EXCL
    if not follow:
        flags |= _NOFOLLOW
    fd = os.open(name, flags, mode, dir_fd=dir_fd)
    try:
        if exact is not None and hasattr(os, "fchmod"):
            if not append or stat.S_IMODE(os.fstat(fd).st_mode) & ~exact:
                os.fchmod(fd, exact)
        _fchown(fd, owner)
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        if not append:  # the file is ours, made a moment ago: no torn file is left behind
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
        raise
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # never seen from a file; looping on it would never end
            raise OSError(errno.EIO, "the disk took no byte of a write")
        view = view[written:]


def _pwrite_all(fd: int, data: bytes) -> None:
    """`data` at the file's start, in one write when the OS takes it whole."""
    view, at = memoryview(data), 0
    while at < len(data):
        written = os.pwrite(fd, view[at:], at)
        if written <= 0:  # never seen from a file; looping on it would never end
            raise OSError(errno.EIO, "the disk took no byte of a write")
        at += written


def _fchown(fd: int, owner: tuple[int, int] | None) -> None:
    if owner is not None and hasattr(os, "fchown") and os.geteuid() == 0:
        with contextlib.suppress(OSError):  # best effort: a user namespace may refuse
            os.fchown(fd, *owner)


def _discard(dfd: int, sfd: int, stage: str, temp: str) -> bool:
    """Remove the staging folder: the new file if still there, then its .gitignore, then it;
    False when it could not be removed (still ignored by git if its .gitignore is left)."""
    for leftover in (temp, _STAGE_IGNORE):
        with contextlib.suppress(OSError):
            os.unlink(leftover, dir_fd=sfd)
    try:
        os.rmdir(stage, dir_fd=dfd)
    except FileNotFoundError:
        pass
    except OSError:
        logging.getLogger("offprompt").warning(
            "could not remove a staging folder after a write; the next write will"
        )
        return False
    return True


def unlink_quietly(dfd: int, name: str) -> None:
    """Remove `name` in folder `dfd` if it is there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=dfd)


def _remove_stage(dfd: int, name: str) -> bool:
    """Remove staging folder `name` and the plain files in it; True when it is gone.

    Opened without following symlinks and emptied through its descriptor, so a link planted in
    its place can point the removal nowhere else. A folder holding a subfolder is not ours
    (`replace` makes none) and is left alone.
    """
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dfd)
    except OSError:
        return False
    try:
        entries = os.listdir(fd)
        for entry in entries:
            if stat.S_ISDIR(os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode):
                return False
        # The .gitignore goes last: while anything else is there, git must keep ignoring it.
        for entry in sorted(entries, key=lambda e: e == _STAGE_IGNORE):
            os.unlink(entry, dir_fd=fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=dfd)
    except OSError:
        return False
    return True
