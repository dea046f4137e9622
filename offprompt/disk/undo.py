"""A write in place that is all or nothing (DESIGN §15 "Every process"): a masked file keeps its
inode, so a mount a running sandbox put over it (a stand-in, a denial) stays there, where a
rename would make Linux drop the mount and show that sandbox the real file.

The undo record lives in offprompt's own state dir (`RECORDS` beside the journal: 0700, each
record 0600), never in a project, the folder denied by the mask (Claude Code: a command that runs
as the person could read the state dir) and blocked by the guard: no process the agent starts in
its sandbox, one left running before the write included, reads it. A record holds the file's
old bytes (or "no file") and the SHA-256 of every state the write is about to leave the file in:
the padded intermediate and the new bytes. It is whole and fsynced before the file is touched and
removed once the file is. A writer killed in between leaves it; the next writer of that file (or
the next start of the server or `collect`) puts the old bytes back only when the file still holds
one of the states the record names: bytes offprompt can prove it wrote. Any other content is a
later change (the person's edit, another tool's write) and stays; the record is then dropped
with a value-free line in the log.

No state mixes old and new: a new content at least as long as the old is one write over it; a
shorter one is written padded to the old length with an inert dotenv comment (no value byte),
then cut to its length, so the old tail never follows the new start. A file sink's file (any
format, no inert padding) is emptied first, then written.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from offprompt.disk.walk import KEEP_NAME, Folder, reach, unlink_quietly

__all__ = [
    "RECORDS",
    "Record",
    "drop",
    "drop_cut_short",
    "evacuate_keep",
    "load",
    "open_records",
    "padded",
    "pending",
    "record_name",
    "remove_empty_keep",
    "remove_records_if_empty",
    "replace",
    "settle",
]

# The records' folder, beside the journal. Named as the project's keep folder was, so the guard's
# staging rule (guard.protected, which imports no disk code) blocks the agent's own file tools
# and commands naming it, as it did that folder: Claude Code's Read is outside its sandbox.
RECORDS = KEEP_NAME
_MAX = 1 << 30  # a record is the old file, which the writer read under a far smaller limit
_MAGIC = b"offprompt-undo 1\n"
_RECORD = re.compile(r"([0-9a-f]{32})(?:\.tmp)?")
_log = logging.getLogger("offprompt")


@dataclass(frozen=True)
class Record:
    """One interrupted write's undo record: where the file is (its project's real folder and
    the parts below it, never a value), its old bytes (None: there was no file), and the
    digests of the states the write made."""

    root: str
    parts: tuple[str, ...]
    old: bytes | None
    made: frozenset[str]
    pad: bool


def record_name(root: Path, parts: tuple[str, ...]) -> str:
    """The record's name for the file at `parts` below the real project folder `root`: one per
    file, so writers of two files under their own folders' locks never share one."""
    place = "\0".join((os.fspath(root), *parts)).encode("utf-8", "surrogateescape")
    return hashlib.sha256(place).hexdigest()[:32]


def open_records(state: Path) -> Folder:
    """The records' folder in the state dir `state` (made when missing, 0700): owned by this
    user and closed to others, else OSError; a folder left looser by hand is narrowed."""
    os.makedirs(state, mode=0o700, exist_ok=True)
    folder = reach(Path(os.path.realpath(state)), (RECORDS,), create=True)
    try:
        st = os.fstat(folder.fd)
        if st.st_uid != os.geteuid():
            raise PermissionError(13, "the undo folder belongs to another user")
        if st.st_mode & 0o077:
            os.fchmod(folder.fd, 0o700)
    except BaseException:
        folder.close()
        raise
    return folder


def remove_records_if_empty(state: Path) -> None:
    """The records' folder in `state` removed when it holds nothing: only once no mask of any
    host may deny it (`remove --everywhere` with nothing left; a record an interrupted write
    left keeps it). Best effort, never through a link."""
    try:
        with reach(Path(os.path.realpath(state)), ()) as folder:
            os.rmdir(RECORDS, dir_fd=folder.fd)
            folder.fsync()
    except OSError:
        pass


def padded(data: bytes, length: int) -> bytes:
    """`data` then, up to `length`, a dotenv comment line of blanks: no reader (python-dotenv,
    bash, node) takes a value from it, and no value byte is in it."""
    gap = length - len(data)
    if gap <= 0:
        return data
    lead = b"" if not data or data.endswith(b"\n") else b"\n"
    rest = gap - len(lead)
    if rest == 0:
        return data + lead
    if rest == 1:
        return data + lead + b"\n"
    return data + lead + b"#" + b" " * (rest - 2) + b"\n"


def _digest(data: bytes | None) -> str:
    return "absent" if data is None else hashlib.sha256(data).hexdigest()


def _steps(old: bytes | None, data: bytes, pad: bool) -> list[tuple[bytes, int]]:
    """The writes that take the file from `old` to `data`, each (bytes at offset 0, size after):
    never a state where old bytes follow new ones."""
    if old is None or len(data) >= len(old):
        return [(data, len(data))]
    if pad:
        return [(padded(data, len(old)), len(old)), (b"", len(data))]
    return [(b"", 0), (data, len(data))]  # emptied first: a file sink has no inert padding


def _states(old: bytes | None, steps: list[tuple[bytes, int]]) -> list[bytes]:
    """The file's bytes after each step (a missing file is first made empty)."""
    now = b"" if old is None else old
    out = [b""] if old is None else []
    for chunk, size in steps:
        now = (chunk + now[len(chunk) :])[:size]
        out.append(now)
    return out


def _save(records: Folder, name: str, record: Record) -> None:
    head = {
        "root": os.fsencode(record.root).hex(),
        "parts": [os.fsencode(p).hex() for p in record.parts],
        "old": record.old is not None,
        "made": sorted(record.made),
        "pad": record.pad,
    }
    body = _MAGIC + json.dumps(head).encode() + b"\n" + (record.old or b"")
    unlink_quietly(records.fd, f"{name}.tmp")
    records.write_new(f"{name}.tmp", body)
    os.rename(f"{name}.tmp", name, src_dir_fd=records.fd, dst_dir_fd=records.fd)
    records.fsync()  # the record is on disk before the file is touched


def load(records: Folder, name: str) -> Record | None:
    """The record `name`, None when there is none or it is not one of ours (a record cut short
    never got its name: it is `<name>.tmp`, and the file was not touched yet)."""
    body = records.read(name, _MAX)
    if body is None or not body.startswith(_MAGIC):
        return None
    head_line, _, old = body[len(_MAGIC) :].partition(b"\n")
    try:
        head = json.loads(head_line)
        return Record(
            root=os.fsdecode(bytes.fromhex(head["root"])),
            parts=tuple(os.fsdecode(bytes.fromhex(p)) for p in head["parts"]),
            old=old if head["old"] else None,
            made=frozenset(str(d) for d in head["made"]),
            pad=head["pad"] is True,
        )
    except (ValueError, KeyError, TypeError):
        return None


def drop(records: Folder, name: str) -> None:
    """The record removed (its file is whole: new, as before, or someone else's now)."""
    unlink_quietly(records.fd, name)
    unlink_quietly(records.fd, f"{name}.tmp")
    records.fsync()


def pending(records: Folder) -> list[tuple[str, Record | None]]:
    """The records an interrupted write left (or a writer is making now), by name, with what
    each says: the whole record, else the one being made (`<name>.tmp`, whole but not yet
    named: its file not touched yet), else None (a `.tmp` cut short in its first write)."""
    names = {m.group(1) for n in os.listdir(records.fd) if (m := _RECORD.fullmatch(n))}
    return [(n, load(records, n) or load(records, f"{n}.tmp")) for n in sorted(names)]


def drop_cut_short(records: Folder, name: str) -> None:
    """Remove `<name>.tmp` when no writer can still be making it (older than a minute): a
    record cut short in its first write, its file never touched."""
    st = records.lstat(f"{name}.tmp")
    if st is not None and time.time() - st.st_mtime > 60:
        unlink_quietly(records.fd, f"{name}.tmp")


def evacuate_keep(root: Path, records: Folder) -> int:
    """Move every undo copy an earlier version left in the keep folder at the root of the real
    project folder `root` (`walk.KEEP_NAME`, inside the project, where a process the agent left
    running could read it) into `records`, as `legacy-<n>`; how many. Such a copy carries no
    proof of what its write left, so it is never put back. The folder is not trusted: never
    reached through a link, and only regular files of this user are read and removed."""
    try:
        keep = reach(root, (KEEP_NAME,))
    except (OSError, ValueError):  # none, or a link or file in its place: nothing of ours
        return 0
    moved = 0
    with keep:
        if keep.identity() == records.identity():  # a state dir set inside the project
            return 0
        for entry in sorted(os.listdir(keep.fd)):
            st = keep.lstat(entry)
            if entry == ".gitignore" or st is None or not stat.S_ISREG(st.st_mode):
                continue
            if st.st_uid != os.geteuid():
                continue
            data = keep.read(entry, _MAX)
            if data is None:
                continue
            dest = "legacy-" + hashlib.sha256(os.fsencode(entry)).hexdigest()[:32]
            unlink_quietly(records.fd, dest)
            records.write_new(dest, data)
            records.fsync()
            os.unlink(entry, dir_fd=keep.fd)
            moved += 1
        keep.fsync()
    return moved


def remove_empty_keep(root: Path) -> None:
    """Remove the keep folder an earlier version made at the root of the real project folder
    `root` when it holds nothing but its `.gitignore`; never through a link. Raises OSError or
    ValueError when it could not be removed (it is left as it was)."""
    with reach(root, ()) as top:
        if top.lstat(KEEP_NAME) is None:
            return
        with reach(root, (KEEP_NAME,)) as inside:
            if os.listdir(inside.fd) != [".gitignore"]:
                return
            os.unlink(".gitignore", dir_fd=inside.fd)
        os.rmdir(KEEP_NAME, dir_fd=top.fd)
        top.fsync()


def settle(folder: Folder, name: str, records: Folder, record_file: str) -> None:
    """Under the lock of `folder`: undo what a killed writer left of its write of `name`, when
    the file still holds a state that writer made; otherwise leave the file as it is. The
    record goes either way. OSError (or walk.NotRegular) when the undo cannot be done: the
    record stays for the next try."""
    unlink_quietly(records.fd, f"{record_file}.tmp")  # cut short before the file was touched
    record = load(records, record_file)
    if record is None:
        unlink_quietly(records.fd, record_file)
        return
    now = folder.read(name, _MAX)
    if _digest(now) == _digest(record.old):
        drop(records, record_file)  # killed before it touched the file
        return
    if now is None or _digest(now) not in record.made:
        drop(records, record_file)
        _log.warning(
            "left a file as it is: it changed after an interrupted write, which is not undone"
        )
        return
    _move(folder, name, now, record.old, records, record_file, record)
    drop(records, record_file)
    _log.info("undid a write in place that was interrupted")


def replace(
    folder: Folder,
    name: str,
    data: bytes,
    owner: tuple[int, int] | None,
    records: Folder,
    record: tuple[Path, tuple[str, ...], str],
    *,
    pad: bool,
) -> None:
    """Make `name` (settled first by `settle`) hold exactly `data`, mode 0600, on its inode, or
    leave it as it was and raise OSError. `record`: the project's real folder, the file's parts
    below it and its record's name; `pad`: the file is a dotenv file (inert padding allowed)."""
    root, parts, record_file = record
    old = folder.read(name, _MAX)
    base = Record(os.fspath(root), parts, old, frozenset(), pad)
    try:
        base = _move(folder, name, old, data, records, record_file, base, owner)
    except BaseException:
        # Our own write failed under our lock: whatever it left is ours, put the old bytes
        # back (when this fails too, the record stays for the next writer).
        _move(folder, name, folder.read(name, _MAX), old, records, record_file, base)
        drop(records, record_file)
        raise
    drop(records, record_file)


def _move(
    folder: Folder,
    name: str,
    before: bytes | None,
    after: bytes | None,
    records: Folder,
    record_file: str,
    record: Record,
    owner: tuple[int, int] | None = None,
) -> Record:
    """Take `name` from `before` (its bytes now; None: no file) to `after`, the record, with
    every state on the way added to what it names, saved first; that record."""
    if after is None:
        unlink_quietly(folder.fd, name)
        folder.fsync()
        return record
    steps = _steps(before, after, record.pad)
    made = record.made | {_digest(s) for s in [before or b"", *_states(before, steps)]}
    record = Record(record.root, record.parts, record.old, made, record.pad)
    _save(records, record_file, record)
    folder.write_in_place(name, steps, owner)
    return record
