"""The disk side of a write: strict reads of the existing file, 0700 parent folders, and an
all-or-nothing 0600 replace through a private, git-ignored staging folder beside the file (or,
for a masked project's file, in place with a copy in the project's keep folder), each reached by
`disk.walk` from the real project folder, never by name.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from pathlib import Path

from offprompt import disk, log
from offprompt.disk import undo, walk
from offprompt.errors import WriteError

__all__ = [
    "MAX_EXISTING_BYTES",
    "STAGED_REFUSAL",
    "drop_keep",
    "is_staged",
    "keep_in_place",
    "make_keep",
    "open_keep",
    "open_parents",
    "reach_parent",
    "read_budget",
    "read_existing",
    "read_in",
    "remove_stale_temps",
    "replace",
]

# A .env this large is not a .env; refusing keeps a mistaken path from loading a disk image.
MAX_EXISTING_BYTES = 16 * 1024 * 1024


def read_budget(size: int) -> float:
    """Seconds reading `size` bytes of a .env's text may take: DESIGN §12's 2 s for 1 MiB and
    10 s for 16 MiB, with a margin for what comes before and after the read (python-dotenv is
    slow on some text; past this, a refusal, not a wait). Status, `keys` and `file_keys` alike."""
    return 1 + 7 * size / MAX_EXISTING_BYTES


# The staging folder and old temporary names: see `walk.STAGE_NAME`.
_STAGE_NAME = walk.STAGE_NAME
_TEMP_NAME = walk.TEMP_NAME

STAGED_REFUSAL = (
    "is inside a staging folder that an interrupted write left behind (it may hold a value "
    "being written); offprompt never reads it, and the next write to that folder removes it"
)

# A folder on the way that became a link (or a file) after the path was resolved: the walk
# stopped there. Said without any path: where it led may be outside the project.
CHANGED = "a folder on its way changed while offprompt used it"


def is_staged(path: str | os.PathLike[str]) -> bool:
    """`path`, as given or with its links resolved, is (inside) a staging folder or an old
    temporary file: what a killed writer leaves holding a value, protected like the file it
    was for (the guard's `protected.in_staging` says the same, without importing this)."""
    texts = {os.fspath(path)}
    with contextlib.suppress(OSError, ValueError):
        texts.add(os.path.realpath(path))
    return any(
        _STAGE_NAME.fullmatch(part) or _TEMP_NAME.fullmatch(part) or part == walk.KEEP_NAME
        for text in texts
        for part in Path(text).parts
    )


# O_NOFOLLOW turns a path that became a symlink into ELOOP; say what that means here.
_OUR_REASONS = {
    errno.ELOOP: "the path turned into a symlink during the write",
    # A masked file's other name is outside the mask (it covers the path): say how to mend it.
    errno.EMLINK: (
        "it has a second hard link, another name for the same file, which a write in place"
        " would change too and the mask does not cover: find it with `find . -samefile"
        " <this file>` from the project folder, delete that name, and write again"
    ),
}


def reason(e: OSError) -> str:
    """A person-readable cause for `e`, without any path or value."""
    return disk.reason(e, _OUR_REASONS)


def read_existing(folder: walk.Folder, name: str, display: str) -> bytes | None:
    """The bytes of `name` in `folder`, or None when there is no file; WriteError when it exists
    but cannot be read (not a regular file, too large, permission) — an unreadable file is never
    "empty".
    """
    try:
        return folder.read(name, MAX_EXISTING_BYTES)
    except walk.NotRegular:
        raise WriteError(_unreadable(display, "it is not a regular file")) from None
    except walk.TooLarge:
        raise WriteError(_unreadable(display, "it is larger than 16 MiB")) from None
    except OSError as e:
        raise WriteError(_unreadable(display, reason(e))) from None


def read_in(root: Path, path: Path, display: str) -> bytes | None:
    """`read_existing` of `path` (resolved, inside the real project folder `root`), walked to
    from `root`; None when it or a folder on its way does not exist."""
    folder = reach_parent(root, path, display, unreadable=True)
    if folder is None:
        return None
    with folder:
        return read_existing(folder, path.name, display)


def reach_parent(
    root: Path, path: Path, display: str, *, unreadable: bool = False
) -> walk.Folder | None:
    """The folder of `path` (resolved, inside `root`), walked to from `root`; None when a folder
    on the way does not exist. WriteError when one became a link or a file, worded for a read
    (`unreadable`) or a write."""
    try:
        return walk.reach(root, path.parent.relative_to(root).parts)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        why = reason(e) if isinstance(e, OSError) and not isinstance(e, walk.Changed) else CHANGED
        if unreadable:
            raise WriteError(_unreadable(display, why)) from None
        raise WriteError(f"Could not use {display} ({why}); nothing was changed.") from None


def _unreadable(display: str, why: str) -> str:
    return (
        f"{display} exists but cannot be read ({why}); offprompt never overwrites a file it"
        " cannot read."
    )


def open_parents(
    root: Path, path: Path, display: str, owner: tuple[int, int] | None
) -> walk.Folder:
    """The folder of `path` (resolved, inside `root`), walked to from `root` and the missing
    folders created on the way (mode 0700, `owner` as for `replace`); `Folder.remove_created`
    removes them again after a failed write.
    """
    try:
        return walk.reach(root, path.parent.relative_to(root).parts, create=True, owner=owner)
    except walk.Changed:
        raise WriteError(
            f"A folder on the way to {display} changed during the write (it became a link);"
            " nothing was changed."
        ) from None
    except NotADirectoryError:
        raise WriteError(
            f"A part of {display} is a file, not a folder; nothing was changed."
        ) from None
    except walk.NotCreated as e:
        raise WriteError(
            f"Could not create the folder for {display} ({reason(e)}); nothing was changed."
        ) from None
    except (OSError, ValueError) as e:
        why = reason(e) if isinstance(e, OSError) else CHANGED
        raise WriteError(
            f"Could not open the folder of {display} ({why}); nothing was changed."
        ) from None


def remove_stale_temps(folder: walk.Folder) -> None:
    """Delete the staging folders (and older temp files) that a killed writer left in `folder`.

    Only call while holding the folder's write lock: every writer takes it before staging, so any
    staging folder seen then belongs to a writer that is gone. Such a folder can hold secrets.
    """
    stages, temps = folder.remove_stale_temps()
    for _ in range(stages):
        log.get().info("removed a staging folder left by an interrupted write")
    for _ in range(temps):
        log.get().info("removed a temporary file left by an interrupted write")


def open_keep(root: Path, owner: tuple[int, int] | None, display: str) -> walk.Folder:
    """The project's keep folder (`walk.KEEP_NAME` at the root of the real project folder
    `root`), made when missing: mode 0700, its `.gitignore` holding `*` before anything else
    lands there; never reached through a link. WriteError (for the write of `display`) when it
    cannot be reached or made."""
    try:
        keep = walk.reach(root, (walk.KEEP_NAME,), create=True, owner=owner)
    except (OSError, ValueError) as e:
        why = reason(e) if isinstance(e, OSError) and not isinstance(e, walk.Changed) else CHANGED
        raise WriteError(_no_keep(display, why)) from None
    try:
        if keep.lstat(".gitignore") is None:
            keep.write_new(".gitignore", b"*\n", owner=owner)
            keep.fsync()
    except OSError as e:
        keep.close()
        raise WriteError(_no_keep(display, reason(e))) from None
    return keep


def _no_keep(display: str, why: str) -> str:
    return (
        f"Could not write {display}: the folder {walk.KEEP_NAME} that keeps a masked file's"
        f" writes all or nothing could not be made ({why}); nothing was changed."
    )


def make_keep(root: Path) -> str | None:
    """`open_keep` for init: the keep folder exists before a mask denies it, so a sandbox that
    starts before the first masked write has it covered already. None when made (or there),
    else why not, in words."""
    try:
        with open_keep(root, walk.owner(root, (walk.KEEP_NAME,)), walk.KEEP_NAME):
            return None
    except WriteError as e:
        return str(e)


def drop_keep(root: Path) -> None:
    """Remove the keep folder of the real project folder `root` when the project is no longer
    masked: only when it holds nothing but its `.gitignore` (an undo copy a killed writer left
    is put back by the next write, which needs it). Best effort; never through a link."""
    try:
        with walk.reach(root, ()) as top:
            keep = top.lstat(walk.KEEP_NAME)
            if keep is None:
                return
            with walk.reach(root, (walk.KEEP_NAME,)) as inside:
                if os.listdir(inside.fd) != [".gitignore"]:
                    return
                os.unlink(".gitignore", dir_fd=inside.fd)
            os.rmdir(walk.KEEP_NAME, dir_fd=top.fd)
            top.fsync()
    except (OSError, ValueError):
        log.get().info("left the keep folder in place (it could not be removed)")


def keep_in_place(
    folder: walk.Folder, keep: walk.Folder, root: Path, path: Path, display: str
) -> None:
    """Make the write of `path` (in `folder`, under its lock) keep the file's inode, all or
    nothing by an undo copy in `keep` (`disk.undo`); a write a killed writer
    left half done is undone first. The copy's name is the file's place in the project, hashed:
    one per file, so writers of two files under their own folders' locks never share one."""
    place = path.relative_to(root).as_posix().encode("utf-8", "surrogateescape")
    copy = hashlib.sha256(place).hexdigest()[:32]
    try:
        undo.keep_in_place(folder, path.name, keep, copy)
    except walk.NotRegular:
        raise WriteError(f"{display} is not a regular file; nothing was changed.") from None
    except OSError as e:
        raise WriteError(
            f"Could not undo an interrupted write of {display} ({reason(e)}); nothing new was"
            " written."
        ) from None


def replace(
    folder: walk.Folder, name: str, data: bytes, display: str, owner: tuple[int, int] | None
) -> None:
    """Make `name` in `folder` hold exactly `data`, mode 0600, or leave it untouched and raise
    WriteError: through a fresh, git-ignored staging folder beside it (`walk.Folder.replace`).
    `owner` (uid, gid) is applied when running as root, so `sudo` or a root container does not
    take a person's .env away from them.
    """
    try:
        if folder.kept is not None and folder.kept[0] == name:  # a masked file (DESIGN §15)
            undo.replace(folder, name, data, owner, *folder.kept[1:])
        else:
            folder.replace(name, data, owner)
    except walk.NotRegular:
        raise WriteError(f"{display} is not a regular file; nothing was changed.") from None
    except OSError as e:
        raise WriteError(f"Could not write {display} ({reason(e)}); nothing was changed.") from None
