"""Where a value touches disk: look at a destination, check values, and write them all or none.

Facade over `paths`, `git`, `dotenv` (format), `verify` (the three readers), `lock`, `atomic`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from offprompt import log
from offprompt.errors import RefusedRequest, TrackedFile, UnsafeValue, WriteError
from offprompt.sinks import atomic, dotenv, git, verify
from offprompt.sinks.lock import locked
from offprompt.sinks.paths import display, display_of, real_project, resolve_target
from offprompt.spec import SinkKind, SinkSpec

__all__ = [
    "SinkSpec",
    "Target",
    "WriteResult",
    "check_values",
    "display_of",
    "inspect_target",
    "resolve_target",
    "write",
]


@dataclass(frozen=True)
class Target:
    """What the page shows about a destination before writing.

    `present`: the asked names the file already sets to a non-empty value (an empty `KEY=` is a
    placeholder, not a value); for a file sink, the name when the file exists and is non-empty.
    `problem`: why a write cannot happen (unreadable file, read-only disk…), else None.
    """

    path: Path
    display: str
    exists: bool
    present: frozenset[str]
    tracked: bool
    ignored: bool
    in_git_repo: bool
    writable: bool
    problem: str | None


@dataclass(frozen=True)
class WriteResult:
    """What a write did, by name; `read_back` holds the values parsed back from the file."""

    path: Path
    display: str
    added: tuple[str, ...]
    replaced: tuple[str, ...]
    kept: tuple[str, ...]
    file_keys: tuple[str, ...]
    read_back: Mapping[str, str] = field(repr=False)


def check_values(sink: SinkSpec, values: Mapping[str, str]) -> dict[str, str]:
    """{name: reason} for each value `sink` cannot carry exactly; {} when all can. No I/O."""
    problems: dict[str, str] = {}
    for name, value in values.items():
        if sink.kind == "file":
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                problems[name] = "It is not valid Unicode text; type or paste it again."
        else:
            why = dotenv.unsafe_reason(value)
            if why is not None:
                problems[name] = why
    return problems


def inspect_target(project: Path, sink: SinkSpec, names: Sequence[str]) -> Target:
    """Look at the destination without changing it; RefusedRequest for a path offprompt refuses."""
    _check_names(sink, names)
    path = resolve_target(project, sink)
    shown = display(real_project(project), path)
    problem: str | None = None
    present: frozenset[str] = frozenset()
    exists = os.path.lexists(path)
    if exists:
        try:
            present = _present(sink.kind, path, shown, names)
            if sink.kind == "dotenv":
                problem = _lines_in_the_way(path, shown, names)
        except WriteError as e:
            problem = str(e)
    tracked = ignored = in_repo = False
    try:
        g = git.status(path)
        tracked, ignored, in_repo = g.tracked, g.ignored, g.in_git_repo
    except git.GitUnanswered as e:
        problem = problem or f"Could not tell whether {shown} is tracked by git ({e})."
    why_not = _why_not_writable(path)
    if why_not and problem is None:
        problem = f"{shown} cannot be written: {why_not}."
    return Target(
        path=path,
        display=shown,
        exists=exists,
        present=present,
        tracked=tracked,
        ignored=ignored,
        in_git_repo=in_repo,
        writable=why_not is None,
        problem=problem,
    )


def write(
    project: Path,
    sink: SinkSpec,
    values: Mapping[str, str],
    *,
    keep_if_present: frozenset[str] = frozenset(),
    allow_tracked: bool = False,
) -> WriteResult:
    """Write `values` to the sink's file in one atomic step, or change nothing and raise.

    Raises RefusedRequest (bad names or path), UnsafeValue (a value no form carries exactly),
    TrackedFile (tracked by git and not `allow_tracked`) or WriteError (the disk said no).
    """
    _check_names(sink, tuple(values))
    path = resolve_target(project, sink)
    root = real_project(project)
    shown = display(root, path)
    unsafe = check_values(sink, values)
    if unsafe:
        raise UnsafeValue(
            f"No .env quoting keeps the value of {', '.join(unsafe)} exactly for python-dotenv,"
            f" Node and bash, so nothing was written to {shown}; {dotenv.FILE_SINK_HINT}."
            if sink.kind == "dotenv"
            else f"The value of {', '.join(unsafe)} is not valid Unicode text; nothing was written."
        )
    if not allow_tracked:
        _refuse_if_tracked(path, shown)
    owner = _owner(path, root)
    created = atomic.ensure_parents(path, root, shown, owner)
    try:
        with locked(path.parent, shown):
            atomic.remove_stale_temps(path.parent)
            if sink.kind == "file":
                result = _write_file(path, shown, values, keep_if_present, owner)
            else:
                result = _write_dotenv(path, shown, values, keep_if_present, owner)
    except BaseException:
        atomic.remove_created(created)
        raise
    log.get().debug(
        "wrote %s to %s (added %s, replaced %s, kept %s)",
        ", ".join(values),
        shown,
        len(result.added),
        len(result.replaced),
        len(result.kept),
    )
    return result


def _refuse_if_tracked(path: Path, shown: str) -> None:
    try:
        tracked = git.status(path).tracked
    except git.GitUnanswered as e:
        raise WriteError(
            f"Could not tell whether {shown} is tracked by git ({e}); nothing was changed."
        ) from None
    if tracked:
        raise TrackedFile(
            f"{shown} is tracked by git, so a secret written there could be committed; nothing"
            " was changed. Untrack it (git rm --cached) and ignore it, or allow the tracked file."
        )


def _write_dotenv(
    path: Path,
    shown: str,
    values: Mapping[str, str],
    keep_if_present: Collection[str],
    owner: tuple[int, int] | None,
) -> WriteResult:
    text = _read_text(path, shown)
    up = dotenv.upsert(text, values, keep_if_present)
    written = [n for n in values if n not in up.kept]
    after = text
    if written:
        # Readers must see exactly these values before anything is written: if an existing line
        # would swallow ours (an unclosed quote, a bare `X=` Node reads on past), stop, say which.
        why = verify.hidden(up.text, text, {n: values[n] for n in written}, shown)
        if why is not None:
            raise WriteError(f"{why} Nothing was changed.")
        atomic.replace(path, up.text.encode("utf-8"), shown, owner)
        after = _read_text(path, shown)
    held = dotenv.values(after)
    read_back = {n: held[n] for n in written if n in held}
    if len(read_back) != len(written) or any(read_back[n] != values[n] for n in read_back):
        log.get().warning("%s changed under the write; its fingerprint will differ", shown)
    return WriteResult(
        path=path,
        display=shown,
        added=up.added,
        replaced=up.replaced,
        kept=up.kept,
        file_keys=dotenv.keys(after),
        read_back=read_back,
    )


def _write_file(
    path: Path,
    shown: str,
    values: Mapping[str, str],
    keep_if_present: Collection[str],
    owner: tuple[int, int] | None,
) -> WriteResult:
    ((name, value),) = values.items()
    present = bool(_present("file", path, shown, (name,)))
    if name in keep_if_present and present:
        return WriteResult(
            path=path,
            display=shown,
            added=(),
            replaced=(),
            kept=(name,),
            file_keys=(),
            read_back={},
        )
    atomic.replace(path, value.encode("utf-8"), shown, owner)
    data = atomic.read_existing(path, shown) or b""
    try:
        read_back = {name: data.decode("utf-8")}
    except UnicodeDecodeError:
        read_back = {}
        log.get().warning("%s changed under the write; its fingerprint will differ", shown)
    return WriteResult(
        path=path,
        display=shown,
        added=() if present else (name,),
        replaced=(name,) if present else (),
        kept=(),
        file_keys=(),
        read_back=read_back,
    )


def _lines_in_the_way(path: Path, shown: str, names: Sequence[str]) -> str | None:
    """Whether existing lines would hide any of `names` from a reader, tried with a stand-in."""
    text = _read_text(path, shown)
    stand_in = {n: "x" for n in names}
    return verify.hidden(dotenv.upsert(text, stand_in).text, text, stand_in, shown)


def _read_text(path: Path, shown: str) -> str:
    data = atomic.read_existing(path, shown)
    if data is None:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise WriteError(
            f"{shown} is not UTF-8 text; offprompt never rewrites a file it cannot read."
        ) from None


def _present(kind: SinkKind, path: Path, shown: str, names: Sequence[str]) -> frozenset[str]:
    if kind == "file":
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return frozenset()
        except OSError as e:
            raise WriteError(f"{shown} cannot be inspected ({atomic.reason(e)}).") from None
        if not stat.S_ISREG(st.st_mode):
            raise WriteError(f"{shown} is not a regular file; offprompt only replaces files.")
        return frozenset(names) if st.st_size > 0 else frozenset()
    held = dotenv.values(_read_text(path, shown))
    return frozenset(n for n in names if held.get(n))


def _check_names(sink: SinkSpec, names: Sequence[str]) -> None:
    if not names:
        raise RefusedRequest("No secret was named; name at least one.")
    if len(set(names)) != len(names):
        raise RefusedRequest("A secret was named twice; name each once.")
    for name in names:
        if not dotenv.NAME_PATTERN.fullmatch(name):
            raise RefusedRequest(f"{name!r} is not a variable name bash can read.")
    if sink.kind == "file" and len(names) != 1:
        raise RefusedRequest("A file sink holds exactly one secret; ask for one name.")


def _owner(path: Path, root: Path) -> tuple[int, int] | None:
    """Who the file should belong to: its current owner, else its nearest existing folder's."""
    probe = path
    while True:
        try:
            st = os.stat(probe)
            return st.st_uid, st.st_gid
        except FileNotFoundError:
            if probe == root:
                return None
            probe = probe.parent
        except OSError:
            return None


def _why_not_writable(path: Path) -> str | None:
    folder = path.parent
    while not os.path.lexists(folder):
        folder = folder.parent
    if not folder.is_dir():
        return "a part of its path is a file, not a folder"
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "the file system is read-only"
    except OSError:
        pass
    if not os.access(folder, os.W_OK | os.X_OK):
        return "no permission to write in its folder"
    return None
