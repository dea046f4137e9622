"""A write in place that is all or nothing (DESIGN §15 "Every process"): a masked file keeps its
inode, so a mount a running sandbox put over it (a stand-in, a denial) stays there, where a
rename would make Linux drop the mount and show that sandbox the real file.

The undo copy lives in the project's keep folder (`walk.KEEP_NAME`), which the masks deny before
it holds anything: the file's old bytes as `<copy>` (or, for a file not there yet, an empty
`<copy>.absent`), fsynced before the file is touched and removed after. A writer killed between
the two leaves the copy; the next writer of that file puts it back before it reads, so the file
is as it was before the killed write, unless the file changed well after the copy was made (the
person's edit, another tool's write): that change is theirs and stays. Everything happens under
the file's folder lock.
"""

from __future__ import annotations

import logging
import os

from offprompt.disk.walk import Folder, unlink_quietly

__all__ = ["keep_in_place", "replace"]

_MAX = 1 << 30  # a copy is the old file, which the writer read under a far smaller limit
# A file whose last change came this long after its undo copy was made was changed by someone
# else since the write was cut short: the copy is dropped, not put back over their change.
_TORN_WITHIN_NS = 60 * 1_000_000_000


def keep_in_place(folder: Folder, name: str, keep: Folder, copy: str) -> None:
    """Make the write of `name` in `folder` one in place, its undo copy `copy` in `keep`; a
    write a killed writer left half done is undone first. OSError (or walk.NotRegular) when
    that cannot be done."""
    folder.kept = (name, keep, copy)
    unlink_quietly(keep.fd, f"{copy}.tmp")  # a copy cut short: `name` was not touched yet
    old = keep.read(copy, _MAX)  # whole: a copy gets its name once written and fsynced
    left = keep.lstat(copy) or keep.lstat(f"{copy}.absent")
    if left is None:
        return
    now = folder.lstat(name)
    if now is not None and now.st_ctime_ns > left.st_mtime_ns + _TORN_WITHIN_NS:
        # Changed well after the interrupted write began (the person edited it, another tool
        # replaced it): theirs now, not a torn write of ours; undoing would lose their change.
        _drop_copy(keep, copy)
        logging.getLogger("offprompt").warning(
            "left a file as it is: it changed after an interrupted write, which is not undone"
        )
        return
    _undo(folder, name, old)
    _drop_copy(keep, copy)
    logging.getLogger("offprompt").info("undid a write in place that was interrupted")


def replace(
    folder: Folder, name: str, data: bytes, owner: tuple[int, int] | None, keep: Folder, copy: str
) -> None:
    """Make `name` (made one in place by `keep_in_place`, `folder.kept`) hold exactly `data`,
    mode 0600, on its inode, or leave it as it was and raise OSError."""
    old = folder.read(name, _MAX)
    if old is None:
        keep.write_new(f"{copy}.absent", b"")
    else:
        keep.write_new(f"{copy}.tmp", old)
        os.rename(f"{copy}.tmp", copy, src_dir_fd=keep.fd, dst_dir_fd=keep.fd)
    keep.fsync()  # the undo copy is on disk before the file is touched
    try:
        folder.write_in_place(name, data, owner)
    except BaseException:
        _undo(folder, name, old)  # when this fails too, the copy stays for the next writer
        _drop_copy(keep, copy)
        raise
    _drop_copy(keep, copy)


def _undo(folder: Folder, name: str, old: bytes | None) -> None:
    """`name` as it was before a write in place: `old`, or no file (None)."""
    if old is None:
        unlink_quietly(folder.fd, name)
        folder.fsync()
    else:
        folder.write_in_place(name, old)


def _drop_copy(keep: Folder, copy: str) -> None:
    """The undo copy removed (its file is whole, new or as before)."""
    unlink_quietly(keep.fd, copy)
    unlink_quietly(keep.fd, f"{copy}.absent")
    keep.fsync()
