"""The disk side of a write: strict reads of the existing file, 0700 parent folders, and an
all-or-nothing 0600 replace through a private, git-ignored staging folder beside the file (or,
for a masked project's file, in place with an undo record in offprompt's state dir), each reached by
`disk.walk` from the real project folder, never by name.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Mapping
from pathlib import Path

from offprompt import disk, log, statedir
from offprompt.disk import undo, walk
from offprompt.errors import WriteError

__all__ = [
    "MAX_EXISTING_BYTES",
    "STAGED_REFUSAL",
    "drop_keep",
    "is_staged",
    "keep_in_place",
    "open_parents",
    "open_records",
    "reach_parent",
    "read_budget",
    "read_existing",
    "read_in",
    "remove_stale_temps",
    "replace",
    "settle_interrupted",
    "undo_state",
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


def undo_state(env: Mapping[str, str] | None = None) -> Path:
    """The state dir whose `undo` folder holds a masked write's undo record: beside the journal
    (`statedir`), outside every project, so no sandboxed process of the agent reaches it."""
    return statedir.journal_path(env).parent


def open_records(display: str, state: Path | None = None) -> walk.Folder:
    """The undo records' folder (`disk.undo.open_records`) in `state` (default `undo_state()`);
    WriteError (for the write of `display`) when it cannot be reached or made."""
    try:
        return undo.open_records(undo_state() if state is None else state)
    except (OSError, ValueError) as e:
        why = reason(e) if isinstance(e, OSError) and not isinstance(e, walk.Changed) else CHANGED
        raise WriteError(
            f"Could not write {display}: the folder in offprompt's state dir that keeps a masked"
            f" file's writes all or nothing could not be used ({why}); nothing was changed."
        ) from None


def drop_keep(root: Path) -> None:
    """Remove the keep folder an earlier version made at the root of the real project folder
    `root` when the project is no longer masked: only when it holds nothing but its
    `.gitignore` (a copy still there is moved out by `keep_in_place`). Best effort; never
    through a link."""
    try:
        undo.remove_empty_keep(root)
    except (OSError, ValueError):
        log.get().info("left the keep folder in place (it could not be removed)")


def keep_in_place(
    folder: walk.Folder, records: walk.Folder, root: Path, path: Path, display: str
) -> None:
    """Make the write of `path` (in `folder`, under its lock) keep the file's inode, all or
    nothing by an undo record in `records` (`disk.undo`); a write a killed writer left half
    done is undone first when the file still holds what it wrote. Copies an earlier version
    left in the project's keep folder are moved out of the project first (never put back)."""
    parts = path.relative_to(root).parts
    record_file = undo.record_name(root, parts)
    folder.kept = (path.name, records, (root, parts, record_file))
    try:
        moved = undo.evacuate_keep(root, records)
        if moved:
            log.get().warning(
                "moved %d undo copies an earlier version left in the project's %s out of the"
                " project, into offprompt's state dir; none was put back",
                moved,
                walk.KEEP_NAME,
            )
        undo.settle(folder, path.name, records, record_file)
    except walk.NotRegular:
        raise WriteError(f"{display} is not a regular file; nothing was changed.") from None
    except OSError as e:
        raise WriteError(
            f"Could not undo an interrupted write of {display} ({reason(e)}); nothing new was"
            " written."
        ) from None


def settle_interrupted(state: Path) -> None:
    """At a start of the server or `collect`: every write in place a killed writer left half
    done (an undo record in `state`) undone where the file still holds what it wrote, under
    its folder's lock; any other file left as it is. Best effort, never raising: the next
    write of a file settles it too."""
    from offprompt.sinks.lock import locked

    if not os.path.isdir(state / undo.RECORDS):  # no masked write ever ran here
        return
    try:
        with undo.open_records(state) as records:
            for record_file, record in undo.pending(records):
                if record is None or not record.parts:
                    undo.drop_cut_short(records, record_file)
                    continue
                *inner, name = record.parts
                try:
                    with walk.reach(Path(record.root), inner) as folder:
                        with locked(folder, "a file"):
                            undo.settle(folder, name, records, record_file)
                except (OSError, ValueError, WriteError):
                    log.get().warning("could not settle an interrupted write (it is kept)")
    except (OSError, ValueError):
        log.get().warning("could not look for interrupted writes in offprompt's state dir")


def replace(
    folder: walk.Folder,
    name: str,
    data: bytes,
    display: str,
    owner: tuple[int, int] | None,
    *,
    pad: bool = False,
) -> None:
    """Make `name` in `folder` hold exactly `data`, mode 0600, or leave it untouched and raise
    WriteError: through a fresh, git-ignored staging folder beside it (`walk.Folder.replace`).
    `owner` (uid, gid) is applied when running as root, so `sudo` or a root container does not
    take a person's .env away from them. `pad`: a dotenv file, which a write in place may pad
    with an inert comment (`disk.undo`).
    """
    try:
        if folder.kept is not None and folder.kept[0] == name:  # a masked file (DESIGN §15)
            undo.replace(folder, name, data, owner, *folder.kept[1:], pad=pad)
        else:
            folder.replace(name, data, owner)
    except walk.NotRegular:
        raise WriteError(f"{display} is not a regular file; nothing was changed.") from None
    except OSError as e:
        raise WriteError(f"Could not write {display} ({reason(e)}); nothing was changed.") from None
