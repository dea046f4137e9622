"""The folders the mask denies beside a masked project's files (DESIGN §15 "Every copy offprompt
makes"): the state dir's folder of undo records (`disk.undo`), and the keep folder an earlier
version made in the project.
"""

from __future__ import annotations

import os
from pathlib import Path

from offprompt.disk import undo
from offprompt.disk.walk import KEEP_NAME

__all__ = ["keep_folder", "legacy_keep", "undo_folder"]


def keep_folder(key: str) -> str:
    return os.path.join(key, KEEP_NAME)


def undo_folder(record: Path, *, make: bool = False) -> str:
    """The folder of a masked write's undo records (`disk.undo`), beside `record` in the state
    dir: outside every project, yet a sandboxed command could read it as this user, so it is
    denied; `make`: made first (0700), as a denial covers a command started after the folder
    existed (measured for the keep folder in 2.1.332)."""
    if make:
        undo.open_records(record.parent).close()
    return os.path.join(os.path.realpath(record.parent), undo.RECORDS)


def legacy_keep(folder: str) -> bool:
    """The keep folder an earlier version made is there (a real folder, not a link): its deny
    entry stays while it does, for the copies a killed write of that version may have left
    until the next write moves them out. A masked write no longer uses it (disk.undo)."""
    return os.path.isdir(folder) and not os.path.islink(folder)
