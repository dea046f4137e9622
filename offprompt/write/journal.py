"""The journal: one JSON line per finished write (names, file, fingerprint), never a value.

Kept in OFFPROMPT_STATE_DIR (else the user state dir), mode 0600; `offprompt fingerprints` reads it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from offprompt.statedir import MASK_RECORD
from offprompt.statedir import journal_path as default_path

if TYPE_CHECKING:
    # Only for from_outcome's signature: `offprompt guard` reads the journal on every tool
    # call and must not load the request store to do it.
    from offprompt.spec import WriteOutcome
    from offprompt.store import RequestRecord

__all__ = ["MASK_RECORD", "Journal", "JournalEntry", "default_path"]

_FIELDS = ("at", "project", "file", "names", "kept", "fingerprint", "client", "request_id")


def _iso_utc(at: datetime) -> str:
    if at.tzinfo is None:
        raise ValueError("journal times must be timezone-aware")
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _str_tuple(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"journal field {key!r} is not a list of strings")
    return tuple(value)


def _str(data: dict[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise ValueError(f"journal field {key!r} is not a string")
    return value


def _str_or_none(data: dict[str, Any], key: str) -> str | None:
    return None if data[key] is None else _str(data, key)


@dataclass(frozen=True)
class JournalEntry:
    """One write as the journal records it: when, where, which names, and the fingerprint.

    `at` is ISO-8601 UTC to the second (`2026-11-30T02:41:07Z`), `project` an absolute path,
    `file` the destination relative to the project with `/` separators.
    """

    at: str
    project: str
    file: str
    names: tuple[str, ...]
    kept: tuple[str, ...]
    fingerprint: str | None
    client: str | None
    request_id: str
    destinations: tuple[tuple[str, str, str], ...] = ()
    """`(kind, target, status)` per `also` destination (DESIGN §13); never a value."""
    checked: tuple[tuple[str, str], ...] = ()
    """`(name, status)` of the provider checks (DESIGN §16) of the names the page supplied."""
    sink: str | None = None
    """`file` when the write was a file sink's (the value is the whole file), else None: status
    and `offprompt keys` then name that file alone, never a `NAME=` read from the value."""
    inode: tuple[int, int] | None = None
    """`(device, inode)` of a file sink's file when it was written, so the same file is known
    wherever it is moved, renamed or linked to (DESIGN §12); None for other writes."""

    @classmethod
    def from_outcome(
        cls, request: RequestRecord, outcome: WriteOutcome, at: datetime | None = None
    ) -> JournalEntry:
        """The entry for `request` finished with `outcome`, at `at` (default: now)."""
        return cls(
            at=_iso_utc(at if at is not None else datetime.now(UTC)),
            project=os.path.abspath(request.project),
            file=outcome.file,
            names=tuple(outcome.names),
            kept=tuple(outcome.kept),
            fingerprint=outcome.fingerprint,
            client=request.client,
            request_id=request.id,
            destinations=tuple((d.kind, d.target, d.status) for d in outcome.destinations),
            checked=outcome.checked,
            sink="file" if request.sink.kind == "file" else None,
            inode=_inode(request.project, outcome.file) if request.sink.kind == "file" else None,
        )

    def to_dict(self) -> dict[str, object]:
        """The entry as plain JSON types, in field order (what `fingerprints --json` prints);
        `destinations` and `checked` only when the write had some."""
        out: dict[str, object] = {
            "at": self.at,
            "project": self.project,
            "file": self.file,
            "names": list(self.names),
            "kept": list(self.kept),
            "fingerprint": self.fingerprint,
            "client": self.client,
            "request_id": self.request_id,
        }
        if self.destinations:
            out["destinations"] = [
                {"kind": k, "target": t, "status": s} for k, t, s in self.destinations
            ]
        if self.checked:
            out["checked"] = dict(self.checked)
        if self.sink is not None:
            out["sink"] = self.sink
        return out

    def to_json(self) -> str:
        """One line of JSON, no newline inside, ASCII-only so any path survives the file."""
        # ensure_ascii also escapes the lone surrogates os.fsdecode makes of non-UTF-8 file
        # names, which a UTF-8 encoder would refuse.
        out = self.to_dict()
        if self.inode is not None:  # for status alone: `fingerprints --json` does not print it
            out["inode"] = list(self.inode)
        return json.dumps(out, separators=(",", ":"), ensure_ascii=True)

    @classmethod
    def from_json(cls, line: str) -> JournalEntry:
        """Parse one line; ValueError if it is not a well-formed entry. Unknown keys are ignored."""
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("a journal line is a JSON object")
        missing = [k for k in _FIELDS if k not in data]
        if missing:
            raise ValueError(f"journal line lacks {', '.join(missing)}")
        return cls(
            at=_str(data, "at"),
            project=_str(data, "project"),
            file=_str(data, "file"),
            names=_str_tuple(data, "names"),
            kept=_str_tuple(data, "kept"),
            fingerprint=_str_or_none(data, "fingerprint"),
            client=_str_or_none(data, "client"),
            request_id=_str(data, "request_id"),
            destinations=_destinations(data.get("destinations", [])),
            checked=_checked(data.get("checked", {})),
            sink="file" if data.get("sink") == "file" else None,
            inode=_inode_field(data.get("inode")),
        )


def _inode(project: str | os.PathLike[str], file: str) -> tuple[int, int] | None:
    """The file's `(device, inode)` now (just after the write), or None when it cannot be told."""
    try:
        st = os.stat(os.path.join(project, file), follow_symlinks=False)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _inode_field(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise ValueError("journal field 'inode' is [device, inode]")
    return int(value[0]), int(value[1])


def _destinations(value: Any) -> tuple[tuple[str, str, str], ...]:
    if not isinstance(value, list):
        raise ValueError("journal field 'destinations' is not a list")
    out: list[tuple[str, str, str]] = []
    for item in value:
        if not isinstance(item, dict):
            raise ValueError("a journal destination is an object")
        fields = (item.get("kind"), item.get("target"), item.get("status"))
        if not all(isinstance(f, str) for f in fields):
            raise ValueError("a journal destination has kind, target and status")
        out.append((str(fields[0]), str(fields[1]), str(fields[2])))
    return tuple(out)


_STATUSES = frozenset({"ok", "rejected", "unreachable", "skipped"})


def _checked(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and v in _STATUSES for k, v in value.items()
    ):
        raise ValueError("journal field 'checked' maps names to check statuses")
    return tuple((str(k), str(v)) for k, v in value.items())


class Journal:
    """Appends entries to, and reads them back from, one JSON-lines file."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_path()

    def append(self, entry: JournalEntry) -> None:
        """Add one line and fsync it; the file is 0600 and new folders 0700. Raises OSError."""
        from offprompt.disk import paths, walk

        paths.make_private_folders(self.path.parent)
        # One write() per line with O_APPEND, so two servers appending at once (one per agent
        # session) add whole lines rather than overwrite or split each other's; a journal made
        # earlier with looser bits (by hand, or an older version) is tightened to 0600.
        data = (entry.to_json() + "\n").encode("ascii")
        walk.write_new(self.path, data, append=True, follow=True, exact=0o600)

    def read(self) -> list[JournalEntry]:
        """Every entry, newest first; lines that do not parse are skipped. [] if no journal."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        entries: list[JournalEntry] = []
        for line in raw.splitlines():
            if not line.strip():
                continue
            try:
                entries.append(JournalEntry.from_json(line.decode("utf-8")))
            except ValueError:
                # A torn last line after a crash, or a hand edit: the rest is still good.
                continue
        entries.reverse()
        return entries

    def file_sinks(self) -> frozenset[str]:
        """The files (absolute, real paths) the journal says a file sink wrote: a file sink's
        value is the whole file, so none of its text is ever shown as a name. Empty when there
        is no journal; OSError when there is one that cannot be read (the caller then shows no
        names, since it cannot rule a file sink out)."""
        entries = self.read()
        return frozenset(
            os.path.realpath(os.path.join(e.project, e.file)) for e in entries if e.sink == "file"
        )

    def file_sink_ids(self) -> frozenset[tuple[int, int]]:
        """`(device, inode)` of every file a file sink wrote: as recorded when written, and of
        what is at each recorded path now. A file with one of these is that file (or a hard
        link to it), however it was moved or renamed. OSError as for `file_sinks`."""
        ids: set[tuple[int, int]] = set()
        for e in self.read():
            if e.sink != "file":
                continue
            if e.inode is not None:
                ids.add(e.inode)
            now = _inode(e.project, e.file)
            if now is not None:
                ids.add(now)
        return frozenset(ids)

    def records_file_sink(self, path: Path) -> bool:
        """Whether a file sink wrote `path`: by its real path, or as the same file (device and
        inode, as recorded or of a recorded path now), however it was moved, renamed or linked.
        False when there is no such file; OSError as for `file_sinks`."""
        if os.path.realpath(path) in self.file_sinks():
            return True
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return False
        return (st.st_dev, st.st_ino) in self.file_sink_ids()
