"""The disk side of a write: strict reads of the existing file, 0700 parent folders, and an
all-or-nothing 0600 replace through a temporary file in the same folder.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from pathlib import Path

from offprompt import log
from offprompt.errors import WriteError

__all__ = [
    "MAX_EXISTING_BYTES",
    "ensure_parents",
    "read_existing",
    "remove_created",
    "remove_stale_temps",
    "replace",
]

# A .env this large is not a .env; refusing keeps a mistaken path from loading a disk image.
MAX_EXISTING_BYTES = 16 * 1024 * 1024

# What `replace` names its temporary files: `.<name, at most 64 bytes>.offprompt-<16 hex>.tmp`.
_TEMP_NAME = re.compile(r"\..{1,64}\.offprompt-[0-9a-f]{16}\.tmp", re.DOTALL)

_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "the operation is not permitted (is the file or its folder immutable?)",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.ELOOP: "the path turned into a symlink during the write",
    errno.EISDIR: "the path is a folder",
}


def reason(e: OSError) -> str:
    """A person-readable cause for `e`, without any path or value."""
    return _REASONS.get(e.errno or 0) or (e.strerror or type(e).__name__).lower()


def read_existing(path: Path, display: str) -> bytes | None:
    """The file's bytes, or None when there is no file; WriteError when it exists but cannot be
    read (not a regular file, too large, permission) — an unreadable file is never "empty".
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise WriteError(_unreadable(display, reason(e))) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise WriteError(_unreadable(display, "it is not a regular file"))
        if st.st_size > MAX_EXISTING_BYTES:
            raise WriteError(_unreadable(display, "it is larger than 16 MiB"))
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_EXISTING_BYTES:
                raise WriteError(_unreadable(display, "it is larger than 16 MiB"))
        return b"".join(chunks)
    except OSError as e:
        raise WriteError(_unreadable(display, reason(e))) from None
    finally:
        os.close(fd)


def _unreadable(display: str, why: str) -> str:
    return (
        f"{display} exists but cannot be read ({why}); offprompt never overwrites a file it"
        " cannot read."
    )


def ensure_parents(
    path: Path, root: Path, display: str, owner: tuple[int, int] | None
) -> list[Path]:
    """Create the missing folders between `root` and `path` (mode 0700); return those created,
    outermost first, so a failed write can remove them again. `owner` as for `replace`.
    """
    missing: list[Path] = []
    parent = path.parent
    while parent != root and not parent.exists():
        missing.append(parent)
        parent = parent.parent
    if not parent.is_dir():
        raise WriteError(f"A part of {display} is a file, not a folder; nothing was changed.")
    created: list[Path] = []
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
            created.append(folder)
            os.chmod(folder, 0o700)  # mkdir's mode is masked by the umask; say it exactly
            if owner is not None and os.geteuid() == 0:
                with contextlib.suppress(OSError):
                    os.chown(folder, *owner)
        except OSError as e:
            remove_created(created)
            raise WriteError(
                f"Could not create the folder for {display} ({reason(e)}); nothing was changed."
            ) from None
    return created


def remove_created(created: list[Path]) -> None:
    """Remove folders `ensure_parents` made (innermost first), if they are still empty."""
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            folder.rmdir()


def remove_stale_temps(directory: Path) -> None:
    """Delete temp files that a killed writer left in `directory`.

    Only call while holding the folder's write lock: every writer takes it before making a temp
    file, so any temp file seen then belongs to a writer that is gone. Such a file holds
    secrets and could be committed by mistake.
    """
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if _TEMP_NAME.fullmatch(name):
            with contextlib.suppress(OSError):
                os.unlink(directory / name)
                log.get().info("removed a temporary file left by an interrupted write")


def replace(path: Path, data: bytes, display: str, owner: tuple[int, int] | None) -> None:
    """Make `path` hold exactly `data`, mode 0600, or leave it untouched and raise WriteError.

    `owner` (uid, gid) is applied when running as root, so `sudo` or a root container does not
    take a person's .env away from them.
    """
    directory = path.parent
    temp = directory / f".{_prefix(path.name)}.offprompt-{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(temp, flags, 0o600)
    except OSError as e:
        raise WriteError(f"Could not write {display} ({reason(e)}); nothing was changed.") from None
    try:
        try:
            os.fchmod(fd, 0o600)  # the umask can only narrow it, but say it exactly
            if owner is not None and os.geteuid() == 0:
                with contextlib.suppress(OSError):  # best effort: a user namespace may refuse
                    os.fchown(fd, *owner)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise WriteError(f"Could not write {display} ({reason(e)}); nothing was changed.") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_directory(directory)


def _prefix(name: str) -> str:
    """The first 64 bytes of `name` (a cut inside a character stays those bytes on disk), so the
    temporary name fits NAME_MAX, 255 bytes, whatever the target's own name: 1 + 64 + 31."""
    return os.fsdecode(os.fsencode(name)[:64])


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable. The new file is already in place, so a file system that
    # cannot fsync a folder is no reason to report failure.
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
