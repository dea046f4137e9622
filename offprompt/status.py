"""Which of a project's keys are set, empty, missing or a placeholder (DESIGN §12), never a value.

The one answer behind the `secret_status` tool and `offprompt status`: values are read and judged
here and go no further; what leaves is names, statuses and the registry's own words.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from offprompt.errors import RefusedRequest, Unreadable, WriteError
from offprompt.names import NAME, check_names
from offprompt.spec import SinkSpec

if TYPE_CHECKING:
    from offprompt.registry import CheckVerdict, Field
    from offprompt.sinks.dotenv_read import Read
    from offprompt.write.journal import Journal

__all__ = [
    "BARE_LINE",
    "EXAMPLES",
    "FILE_SINK",
    "MAX_NAMES",
    "NOT_DOTENV",
    "NOT_DOTENV_NAME",
    "NO_JOURNAL",
    "KeyState",
    "Shown",
    "StatusReport",
    "how_shown",
    "is_dotenv_name",
    "is_file_sink",
    "is_stand_in",
    "looks_like_name",
    "report",
    "table",
]

EXAMPLES: Final = (".env.example", ".env.sample", ".env.template", ".env.dist")
"""The example files looked for beside the target, in this order; the first one there is used."""
MAX_NAMES: Final = 64

KeyStatus = Literal["missing", "empty", "placeholder", "set"]
"""What `secret_status` says of one key name (DESIGN §12)."""
KeyCheck = Literal["ok", "mismatch"]

# The usual stand-ins a template ships with (DESIGN §12), matched case-insensitively against the
# whole value, blanks around it aside.
_STAND_INS: Final = re.compile(
    r"changeme|change-me|replace-me|replace_me|todo|placeholder|dummy|example"
    r"|your.*here|your-.*|<.*>|x+",
    re.IGNORECASE | re.DOTALL,
)


@dataclass(frozen=True)
class KeyState:
    """One name's status and, for a set name the registry knows, its check. Never a value."""

    name: str
    status: KeyStatus
    check: KeyCheck | None = None
    hint: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"name": self.name, "status": self.status}
        if self.check is not None:
            out["check"] = self.check
        if self.hint is not None:
            out["hint"] = self.hint
        return out


@dataclass(frozen=True)
class StatusReport:
    """The answer for one target: where it is, which example named the keys, and each key."""

    file: str
    exists: bool
    example: str | None
    keys: tuple[KeyState, ...]
    whole: bool = False
    """The file is shown by its name alone (a file sink's, or no dotenv file): `keys` is that
    one row, and nothing is known of the key names inside it."""

    @property
    def missing(self) -> tuple[str, ...]:
        """The names whose status is not `set`, in the order of `keys`."""
        return tuple(k.name for k in self.keys if k.status != "set")

    @property
    def mismatched(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys if k.check == "mismatch")

    @property
    def note(self) -> str:
        """What the model should do next."""
        never = f"Never open, print or read {self.file}; call secret_status again to check it."
        parts: list[str] = []
        if self.whole:
            held = "holds a value" if not self.missing else "is empty"
            parts.append(
                f"offprompt reads {self.file} as one value (a file sink's, or text that is no "
                f"dotenv file), so it names no keys in it and cannot say which are set; it "
                f"{held}. If the project needs keys from it, ask the person, and call "
                f'collect_secret with sink {{"kind": "file", "path": "{self.file}"}} for a '
                "single value."
            )
        elif not self.keys:
            where = f"{self.file} does not exist" if not self.exists else f"{self.file} sets no key"
            parts.append(
                f"{where} and no example file names the keys. Call collect_secret with every "
                "key the project needs, in one call."
            )
        elif self.missing:
            names = ", ".join(self.missing)
            parts.append(
                f"Call collect_secret for {names} (all in one call) so the person can type "
                "them on the page; ask only for these."
            )
        else:
            parts.append(f"Every key is set in {self.file}; nothing needs collecting.")
        if self.mismatched:
            parts.append(
                f"{', '.join(self.mismatched)} may hold the wrong credential (see hint); tell "
                "the person, and call collect_secret for it if they want to replace it."
            )
        parts.append(never)
        return " ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The tool's structuredContent, and what `offprompt status --json` prints."""
        return {
            "file": self.file,
            "exists": self.exists,
            "example": self.example,
            "keys": [k.to_json() for k in self.keys],
            "missing": list(self.missing),
            "note": self.note,
        }


def report(
    project: Path,
    path: str = ".env",
    names: Sequence[str] | None = None,
    *,
    journal: Path | None = None,
) -> StatusReport:
    """The status of `names` (else the example's keys, else the target's own) in `path`.

    `path` resolves as a dotenv sink's (DESIGN §8). A target that `journal` (default: the usual
    journal) records as a file sink's, or whose text is not a dotenv file's (`Parsed.opaque`),
    is reported by its file alone. Raises RefusedRequest for names or a path offprompt refuses,
    ProjectError for a project folder it cannot use, and Unreadable for a target or example
    file that exists but cannot be read.
    """
    from offprompt.sinks import paths

    if names is not None:
        check_names(names, most=MAX_NAMES)  # 1-64 key names, each of DESIGN §3.1, none twice
    root = paths.real_project(project)
    try:
        target = paths.resolve_target(project, SinkSpec(kind="dotenv", path=path))
    except RefusedRequest:
        if _is_folder_inside(root, path):
            raise Unreadable(
                f"{path} is a folder, not a dotenv file, so offprompt cannot tell which keys "
                "it sets; name the file inside it."
            ) from None
        raise
    shown = paths.display(root, target)
    started = time.monotonic()  # one deadline for the call: the target's read and the example's
    held, held_names = _read(root, target, shown, journal=journal, started=started)
    exists = held is not None
    if isinstance(held, _WholeFile):
        # Never a name from inside a value (DESIGN §12): the file is the one thing named.
        state: KeyStatus = "set" if held.set else "empty"
        return StatusReport(
            file=shown, exists=True, example=None, keys=(KeyState(shown, state),), whole=True
        )
    example, example_names = _example(project, root, target, started)
    if names is None:
        # Names as dotenv.Parsed.keys gives them: never a line of a value read as a key.
        names = example_names if example is not None else held_names
    keys = tuple(_state(n, held) for n in names)
    return StatusReport(file=shown, exists=exists, example=example, keys=keys)


def read_budget(size: int) -> float:
    """`sinks.atomic.read_budget`: the seconds a read of `size` bytes may take."""
    from offprompt.sinks import atomic

    return atomic.read_budget(size)


FILE_SINK: Final = "offprompt wrote it as a file sink (the value is the whole file)"
NO_JOURNAL: Final = "offprompt's journal cannot be read, so a file sink cannot be ruled out"
NOT_DOTENV: Final = "it is not a dotenv file (python-dotenv reads names no .env would have)"
NOT_DOTENV_NAME: Final = "its name is not a dotenv file's (.env, .env.*, *.env)"
BARE_LINE: Final = "a line in it is no assignment, comment or blank (a bare word with no =)"


@dataclass(frozen=True)
class Shown:
    """What offprompt may show of a file (DESIGN §12): python-dotenv's reading of its text, or
    why it is shown by its name alone (`whole`; then `read` is None and no name is shown)."""

    read: Read | None
    whole: str | None = None


def is_dotenv_name(name: str) -> bool:
    """Whether a file's name says it is a dotenv file (DESIGN §12): `.env`, `.env.*`, `*.env`."""
    from offprompt.sinks import dotenv_read

    return dotenv_read.is_dotenv_name(name)


def how_shown(
    path: Path,
    data: bytes,
    display: str,
    *,
    journal: Path | None = None,
    sinks: bool = True,
    started: float | None = None,
) -> Shown:
    """How `offprompt status`, `secret_status`, `offprompt keys` and results' `file_keys` all
    show the file at `path` holding `data` (`display` names it in messages), by DESIGN §12's
    one rule: python-dotenv's reading (within `read_budget`) only when the file is a dotenv
    file by its name, no journal entry (default: the usual journal; unless `sinks` is False)
    records it as a file sink's by path or as the same device and inode, and every line is an
    assignment, a comment or blank; else by its name alone, whichever journal is read or none.
    A journal that cannot be read rules no file sink out, so the file is shown by name alone.
    Unreadable when the text is not UTF-8 or is not read in time: by `read_budget` of its size
    after `started` (`time.monotonic()`; default now), the start of the call it serves, so
    every read of one call ends by one deadline however many files it reads."""
    from offprompt.sinks import dotenv_read
    from offprompt.write.journal import Journal

    if not is_dotenv_name(path.name):
        return Shown(None, NOT_DOTENV_NAME)
    if sinks:
        try:
            if is_file_sink(path, Journal(journal)):
                return Shown(None, FILE_SINK)
        except OSError:
            return Shown(None, NO_JOURNAL)  # fail closed: the file may be a file sink's
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable(
            f"{display} is not UTF-8 text, so offprompt cannot tell which keys it sets."
        ) from None
    # python-dotenv's answer, linear in the file's size; on shapes its own parser is slow on,
    # a refusal within DESIGN §12's times (1 MiB in 2 s, 16 MiB in 10 s) rather than no answer.
    budget = read_budget(len(data))
    try:
        anchor = started if started is not None else time.monotonic()
        found = dotenv_read.read(text, deadline=anchor + budget)
    except dotenv_read.TooSlow:
        raise Unreadable(
            f"{display} could not be read within {math.ceil(budget)} s (python-dotenv is slow "
            "on some text, such as a quote left open), so offprompt cannot tell which keys it "
            "sets; name the keys in a smaller file."
        ) from None
    if found.bare:
        return Shown(None, BARE_LINE)
    return Shown(None, NOT_DOTENV) if found.opaque else Shown(found)


def is_file_sink(path: Path, journal: Journal | None = None) -> bool:
    """Whether `journal` records `path` as a file sink's: by its real path, or as the same file
    (device and inode, recorded when written or of the recorded path now). OSError when the
    journal, or the file's own inode, cannot be read (the caller fails closed)."""
    from offprompt.write.journal import Journal

    journal = journal if journal is not None else Journal()
    if os.path.realpath(path) in journal.file_sinks():
        return True
    st = os.stat(path)
    return (st.st_dev, st.st_ino) in journal.file_sink_ids()


@dataclass(frozen=True)
class _WholeFile:
    """A file shown by its name alone: only whether it holds anything but blanks."""

    set: bool


def _read(
    root: Path,
    path: Path,
    shown: str,
    *,
    journal: Path | None = None,
    sinks: bool = True,
    started: float | None = None,
) -> tuple[dict[str, str] | _WholeFile | None, tuple[str, ...]]:
    """What python-dotenv reads from `path` (resolved inside the real project folder `root`;
    uninterpolated; None when there is no file), and the key names it sets as offprompt shows
    them; a _WholeFile when `how_shown` says the file is shown by its name alone. Read by a walk
    from `root`, so a folder swapped for a link out of the project is never read through."""
    from offprompt.sinks import atomic

    try:
        data = atomic.read_in(root, path, shown)
    except WriteError as e:
        # Its message ends on what a write would do; here only the reason matters.
        reason = str(e).split("; offprompt never", 1)[0]
        raise Unreadable(f"{reason}, so offprompt cannot tell which keys it sets.") from None
    if data is None:
        return None, ()
    found = how_shown(path, data, shown, journal=journal, sinks=sinks, started=started)
    if found.read is None:
        return _WholeFile(bool(data.strip())), ()
    return found.read.values, found.read.keys


def _exists(root: Path, path: Path, shown: str) -> bool:
    """Whether `path` (inside `root`) names an entry, walked to from `root`; True when the walk
    cannot tell (a folder on the way changed), so the strict read that follows says why."""
    from offprompt.sinks import atomic

    try:
        folder = atomic.reach_parent(root, path, shown, unreadable=True)
    except WriteError:
        return True
    if folder is None:
        return False
    with folder:
        try:
            return folder.lstat(path.name) is not None
        except OSError:
            return True


def _is_folder_inside(root: Path, path: str) -> bool:
    try:
        real = Path(os.path.realpath(root / path))
        # is_dir too may fail: a part too long for the file system (ENAMETOOLONG), a loop.
        return real != root and real.is_relative_to(root) and real.is_dir()
    except (OSError, ValueError):
        return False


def _example(
    project: Path, root: Path, target: Path, started: float
) -> tuple[str | None, tuple[str, ...]]:
    """The first example file beside `target` and the key names it assigns; (None, ()) if none.

    The example only names keys: no value of it, committed or not, is ever compared with the
    target's (DESIGN §12), so no edit or commit of an example can test a guess (`KEY=guess`,
    then `placeholder`); only the usual stand-ins make a value a placeholder."""
    from offprompt.sinks import paths

    for name in EXAMPLES:
        beside = target.parent / name
        if not _exists(root, beside, name):
            continue
        shown = paths.display(root, beside)
        try:
            # Resolved as strictly as the target: a link out of the project is never read.
            real = paths.resolve_target(project, SinkSpec(kind="dotenv", path=shown))
        except RefusedRequest:
            raise Unreadable(
                f"{shown} is not a file inside the project, so offprompt does not read it as "
                "the example file; replace it with a file, or name the keys."
            ) from None
        # A file sink's, even named .env.example: no names. Within the call's one deadline.
        _, names = _read(root, real, shown, started=started)
        return shown, names
    return None, ()


def looks_like_name(text: str) -> bool:
    """Whether a command-line word is a key name (STRIPE_SECRET_KEY) rather than a file."""
    return NAME.fullmatch(text) is not None


def is_stand_in(value: str) -> bool:
    """Whether `value` is one of the usual stand-ins of DESIGN §12 (`changeme`, `<...>`, …)."""
    return _STAND_INS.fullmatch(value.strip()) is not None


def _state(name: str, held: Mapping[str, str] | None) -> KeyState:
    value = (held or {}).get(name)
    if value is None:
        return KeyState(name, "missing")
    if not value.strip():
        # Blanks alone are no credential: a reader gets nothing it can use.
        return KeyState(name, "empty")
    if is_stand_in(value):
        return KeyState(name, "placeholder")
    return _checked(name, value)


def _checked(name: str, value: str) -> KeyState:
    """`set`, with the registry's check when it knows the name (resolved by the name alone)."""
    from offprompt import registry

    try:
        field = registry.resolve(name)
    except registry.RegistryError:  # a name alone never raises; kept so a change cannot crash
        field = None
    if field is None:
        return KeyState(name, "set")
    verdict = registry.check(field, value)
    return KeyState(
        name,
        "set",
        check="ok" if verdict.ok else "mismatch",
        hint=_hint(field, verdict, value),
    )


def _hint(field: Field, verdict: CheckVerdict, value: str) -> str | None:
    """In registry terms only: the credential the value looks like, and the rules it fails.

    The failing lines' details are left out: one counts the value's characters, another names
    a character of it.
    """
    parts: list[str] = []
    looks = _looks_like(field, value) if verdict.hint is not None else None
    if looks is not None:
        parts.append(f"looks like the {looks}")
    failing = [line.text for line in verdict.lines if not line.passed]
    if len(failing) == 1 and failing[0].startswith("starts with"):
        parts.append(f"the {_what(field)} {failing[0]}")
    elif failing:
        parts.append(f"the {_what(field)}: {'; '.join(failing)}")
    return "; ".join(parts) if parts else None


def _what(field: Field) -> str:
    return f"{field.provider_name} {field.noun}" if field.provider_name else field.noun


def _looks_like(field: Field, value: str) -> str | None:
    """The other credential `value` looks like, named as the registry's hint names it."""
    from offprompt.registry import rules

    known = rules.looks_like(field, value)
    return None if known is None else f"{known.provider_name} {known.noun}"


def table(found: StatusReport) -> list[str]:
    """`offprompt status` for a person: where, then one row per key, then what to do."""
    source = f"keys from {found.example}" if found.example else None
    head = found.file + ("" if found.exists else " (no such file)")
    lines = [f"{head}, {source}" if source else head]
    if not found.keys:
        lines.append("No keys to look at: name them, or add an example file such as .env.example.")
        return lines
    rows = [("NAME", "STATUS", "CHECK")]
    for k in found.keys:
        check: str = k.check or ""
        if k.hint:
            check = f"{check}: {k.hint}"
        rows.append((k.name, k.status, check))
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    for name, state, check in rows:
        lines.append(f"{name:<{widths[0]}}  {state:<{widths[1]}}  {check}".rstrip())
    if found.whole:
        lines.append(
            f"{found.file} is read as one value (a file sink's, or no dotenv file): offprompt"
            " names no keys in it."
        )
    elif found.missing:
        file = [] if found.file == ".env" else ["--file", found.file]
        command = shlex.join(["offprompt", "collect", *found.missing, *file])
        lines.append(f"{len(found.missing)} of {len(found.keys)} not set; to set them: {command}")
    else:
        lines.append("Every key is set.")
    return lines
