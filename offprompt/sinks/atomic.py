"""The disk side of a write: strict reads of the existing file, 0700 parent folders, and an
all-or-nothing 0600 replace through a private, git-ignored staging folder beside the file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from pathlib import Path

from offprompt import disk, log
from offprompt.errors import WriteError

__all__ = [
    "MAX_EXISTING_BYTES",
    "ensure_parents",
    "is_staged",
    "read_existing",
    "remove_created",
    "remove_stale_temps",
    "replace",
]

# A .env this large is not a .env; refusing keeps a mistaken path from loading a disk image.
MAX_EXISTING_BYTES = 16 * 1024 * 1024

# The staging folder `replace` makes beside the destination: `.offprompt-<16 hex>`, mode 0700.
# Its first entry is a `.gitignore` holding `*`, written and fsynced before the new file is
# created there, so at every instant git ignores all it holds (the `.gitignore` too): a writer
# killed mid-write leaves nothing `git add -A` would pick up. It stays on the destination's file
# system, which `os.replace` needs.
_STAGE_NAME = re.compile(r"\.offprompt-[0-9a-f]{16}")
_STAGE_IGNORE = ".gitignore"
_IGNORE_ALL = b"*\n"
# What earlier versions named their temporary files, beside the destination; still removed.
_TEMP_NAME = re.compile(r"\..{1,64}\.offprompt-[0-9a-f]{16}\.tmp", re.DOTALL)

STAGED_REFUSAL = (
    "is inside a staging folder that an interrupted write left behind (it may hold a value "
    "being written); offprompt never reads it, and the next write to that folder removes it"
)


def is_staged(path: str | os.PathLike[str]) -> bool:
    """`path`, as given or with its links resolved, is (inside) a staging folder or an old
    temporary file: what a killed writer leaves holding a value, protected like the file it
    was for (the guard's `protected.in_staging` says the same, without importing this)."""
    texts = {os.fspath(path)}
    with contextlib.suppress(OSError, ValueError):
        texts.add(os.path.realpath(path))
    return any(
        _STAGE_NAME.fullmatch(part) or _TEMP_NAME.fullmatch(part)
        for text in texts
        for part in Path(text).parts
    )


# O_NOFOLLOW turns a path that became a symlink into ELOOP; say what that means here.
_OUR_REASONS = {errno.ELOOP: "the path turned into a symlink during the write"}


def reason(e: OSError) -> str:
    """A person-readable cause for `e`, without any path or value."""
    return disk.reason(e, _OUR_REASONS)


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
    """Delete the staging folders (and older temp files) that a killed writer left in `directory`.

    Only call while holding the folder's write lock: every writer takes it before staging, so any
    staging folder seen then belongs to a writer that is gone. Such a folder can hold secrets.
    """
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if _STAGE_NAME.fullmatch(name):
            if _remove_stage(directory, name):
                log.get().info("removed a staging folder left by an interrupted write")
        elif _TEMP_NAME.fullmatch(name):
            with contextlib.suppress(OSError):
                os.unlink(directory / name)
                log.get().info("removed a temporary file left by an interrupted write")


def _remove_stage(directory: Path, name: str) -> bool:
    """Remove staging folder `name` and the plain files in it; True when it is gone.

    Opened without following symlinks and emptied through its descriptor, so a link planted in
    its place can point the removal nowhere else. A folder holding a subfolder is not ours
    (`replace` makes none) and is left alone.
    """
    try:
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        try:
            fd = os.open(
                name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd
            )
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
        os.rmdir(name, dir_fd=dfd)
        return True
    except OSError:
        return False
    finally:
        os.close(dfd)


def replace(path: Path, data: bytes, display: str, owner: tuple[int, int] | None) -> None:
    """Make `path` hold exactly `data`, mode 0600, or leave it untouched and raise WriteError.

    The new file is made in a fresh staging folder beside `path` that git ignores from before
    the first byte of `data` lands (see `_STAGE_NAME`), moved over `path` with `os.replace`, and
    the folder removed. `owner` (uid, gid) is applied when running as root, so `sudo` or a root
    container does not take a person's .env away from them.
    """
    directory = path.parent
    stage = directory / f".offprompt-{secrets.token_hex(8)}"
    failed = f"Could not write {display} ({{}}); nothing was changed."
    try:
        os.mkdir(stage, 0o700)
    except OSError as e:
        raise WriteError(failed.format(reason(e))) from None
    temp = stage / f"{disk.name_prefix(path.name)}.new"  # never the folder's own .gitignore
    try:
        os.chmod(stage, 0o700)  # mkdir's mode is masked by the umask; say it exactly
        _chown(stage, owner)
        _ignore_all(stage)
        disk.fsync_directory(stage)  # the .gitignore is on disk before the value is
        _write_new(temp, data, owner)
        os.replace(temp, path)
    except OSError as e:
        _discard(stage, temp)
        raise WriteError(failed.format(reason(e))) from None
    except BaseException:
        _discard(stage, temp)
        raise
    disk.fsync_directory(directory)
    _discard(stage, temp)


def _ignore_all(stage: Path) -> None:
    # Written first thing after the create: a writer killed in between leaves an empty
    # .gitignore, which holds nothing; no step of `replace` depends on its owner or mode.
    fd = os.open(stage / _STAGE_IGNORE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        if os.write(fd, _IGNORE_ALL) != len(_IGNORE_ALL):
            raise OSError(errno.EIO, "short write")
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_new(path: Path, data: bytes, owner: tuple[int, int] | None) -> None:
    """Create `path` (it must not exist), mode 0600, holding `data`, fsynced."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
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


def _chown(path: Path, owner: tuple[int, int] | None) -> None:
    if owner is not None and os.geteuid() == 0:
        with contextlib.suppress(OSError):
            os.chown(path, *owner, follow_symlinks=False)


def _discard(stage: Path, temp: Path) -> None:
    """Remove the staging folder: the new file if still there, then its .gitignore, then it."""
    for leftover in (temp, stage / _STAGE_IGNORE):
        with contextlib.suppress(OSError):
            os.unlink(leftover)
    try:
        os.rmdir(stage)
    except FileNotFoundError:
        pass
    except OSError:
        # Still ignored by git if its .gitignore is left; the next write removes it.
        log.get().warning("could not remove a staging folder after a write; the next write will")
