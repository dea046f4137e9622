"""Reading, replacing and removing a config file by a walk of descriptors (disk.walk): every
folder from the walk's root down and the file itself opened with O_NOFOLLOW, so no link (there
before, or swapped in meanwhile) leads a config write elsewhere; a file's mode and owner kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from offprompt.disk import config_temp_name, walk

__all__ = ["read", "remove", "replace"]


def read(root: Path, parts: Sequence[str], limit: int) -> bytes | None:
    """The bytes of the file `parts` below `root`, or None when it (or a folder on the way) is
    missing. walk.Changed when a folder on the way is a link, ELOOP when the file is one (never
    followed), walk.NotRegular, walk.TooLarge, OSError as the OS says it."""
    *folders, name = parts
    try:
        folder = walk.reach(root, folders)
    except FileNotFoundError:
        return None
    with folder:
        return folder.read(name, limit)


def replace(
    root: Path,
    parts: Sequence[str],
    data: bytes,
    before: bytes | None,
    *,
    limit: int,
    new_mode: int,
    owner_for_new: tuple[int, int] | None,
) -> bool:
    """Make the file `parts` below `root` hold `data`, all or nothing: a temporary file beside
    it, renamed over it; False (nothing changed) when it no longer holds `before` (None: when
    it exists now). Missing folders are made as the agent makes them (0777 less the umask,
    `owner_for_new` when root) and removed again when the write fails. An existing file keeps
    its mode and owner exactly; a new one gets `new_mode` less the umask. Raises as `read`, and
    OSError (walk.NotCreated for a folder that could not be made)."""
    *folders, name = parts
    with walk.reach(root, folders, create=True, owner=owner_for_new, folder_mode=None) as folder:
        try:
            st = _regular(folder, name)
            mode = stat.S_IMODE(st.st_mode) if st is not None else None
            owner = (st.st_uid, st.st_gid) if st is not None else owner_for_new
            temp = config_temp_name(name)
            walk.write_new(temp, data, dir_fd=folder.fd, mode=new_mode, exact=mode, owner=owner)
        except BaseException:
            folder.remove_created()
            raise
        try:
            if folder.read(name, limit) != before:
                walk.unlink_quietly(folder.fd, temp)
                return False
            os.rename(temp, name, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
        except BaseException:
            walk.unlink_quietly(folder.fd, temp)
            folder.remove_created()
            raise
        folder.fsync()
        return True


def remove(
    root: Path, parts: Sequence[str], before: bytes | None, *, limit: int, prune: int
) -> bool:
    """Remove the file `parts` below `root` when it still holds `before` (False otherwise,
    nothing changed), then up to `prune` of its folders, innermost first, each only while it is
    empty (an agent's own folder that held only our file). Raises as `read`."""
    *folders, name = parts
    try:
        folder = walk.reach(root, folders)
    except FileNotFoundError:
        return before is None
    with folder:
        if folder.read(name, limit) != before:
            return False
        if before is not None:
            walk.unlink_quietly(folder.fd, name)
    depth = len(folders)
    for _ in range(min(prune, depth)):
        try:
            with walk.reach(root, folders[: depth - 1]) as parent:
                os.rmdir(folders[depth - 1], dir_fd=parent.fd)
        except OSError:
            break
        depth -= 1
    with contextlib.suppress(OSError), walk.reach(root, folders[:depth]) as left:
        left.fsync()
    return True


def _regular(folder: walk.Folder, name: str) -> os.stat_result | None:
    """The entry `name` when it is a regular file, None when there is none; ELOOP for a link,
    walk.NotRegular for anything else (never replaced)."""
    st = folder.lstat(name)
    if st is None:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise OSError(errno.ELOOP, "the config file is a symlink")
    if not stat.S_ISREG(st.st_mode):
        raise walk.NotRegular(name)
    return st
