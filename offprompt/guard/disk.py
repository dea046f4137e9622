"""What the guard reads from disk besides the event: the journal's list of written files, the
dotenv files under a folder a search would open, and git's word on which of them it ignores.

Imports only what the hook's process already has, for its speed (DESIGN §14: ≤ 50 ms).
"""

from __future__ import annotations

import os
import sys

from offprompt import jsonread, rx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = [
    "dotenv_under",
    "included",
    "journal_files",
    "journal_path",
    "masked_projects",
    "not_ignored",
]

# Folders a search of the project need not be looked into for dotenv files (searches skip them
# anyway), and how many folders the look visits at most.
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".hg"})
_TREE_LIMIT = 2000
_JOURNAL = "journal.jsonl"
# Set, these change where platformdirs puts the user state dir; the guard then asks it.
_STATE_DIR_VARS = ("XDG_STATE_HOME", "ANDROID_DATA", "ANDROID_ROOT")


def journal_path(environ: Mapping[str, str]) -> str:
    """The journal's path, as `offprompt.statedir.journal_path` finds it, without importing
    platformdirs in the usual cases (OFFPROMPT_STATE_DIR set, or Linux with no XDG state dir)."""
    state = environ.get("OFFPROMPT_STATE_DIR", "").strip()
    if state:
        return os.path.join(os.path.expanduser(state), _JOURNAL)
    if sys.platform == "linux" and not any(environ.get(v) is not None for v in _STATE_DIR_VARS):
        return os.path.join(os.path.expanduser("~/.local/state"), "offprompt", _JOURNAL)
    from offprompt.statedir import journal_path as default_path

    return str(default_path(environ))


# offprompt.statedir.MASK_RECORD: the masked projects' record, beside the journal (DESIGN §15).
_MASK_RECORD = "mask.json"


def masked_projects(environ: Mapping[str, str]) -> dict[str, object]:
    """The record's `projects` (a masked project's real path → what offprompt wrote there),
    or nothing when it cannot be read."""
    path = os.path.join(os.path.dirname(journal_path(environ)), _MASK_RECORD)
    try:
        with open(path, "rb") as f:
            record = jsonread.loads(f.read(1 << 20))
    except (OSError, ValueError, RecursionError):
        return {}
    projects = record.get("projects") if isinstance(record, dict) else None
    return projects if isinstance(projects, dict) else {}


def journal_files(environ: Mapping[str, str]) -> list[str]:
    """Every file a journal line says offprompt wrote (project joined with file). Reads the
    lines itself rather than through offprompt.write.journal (dataclasses, datetime, pathlib), and
    counts any line with a project and a file, more than the journal's reader would."""
    try:
        with open(journal_path(environ), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return []
    files = []
    for line in _lines(raw):
        if not line or line.isspace():
            continue  # never JSON; skipped here, json's error (and json with it) is not loaded
        try:
            entry = jsonread.loads(line)
        except ValueError:
            continue  # a torn last line after a crash, or a hand edit
        if isinstance(entry, dict):
            project, file = entry.get("project"), entry.get("file")
            # `file` is "" for a write that went only to `also` destinations (sink none).
            if isinstance(project, str) and isinstance(file, str) and file:
                files.append(os.path.join(project, *file.split("/")))
    return files


def _lines(raw: bytes) -> list[str] | list[bytes]:
    """The journal's lines, each of which `jsonread.loads` reads as it reads that line's bytes
    (as `json.loads` would): decoded at once where every line is UTF-8 with no BOM, NUL or CR
    (json then takes each line as UTF-8, and only LF ends one), which saves the hook a
    fraction of a millisecond a call; else as bytes."""
    if b"\x00" not in raw and b"\r" not in raw and b"\xef\xbb\xbf" not in raw:
        try:
            return raw.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            pass
    return raw.splitlines()


def dotenv_under(
    root: str,
    is_dotenv: Callable[[str], bool],
    is_staging: Callable[[str], bool],
    *,
    staged: bool = False,
    linked: frozenset[tuple[int, int]] = frozenset(),
) -> list[str]:
    """The dotenv files under `root` (`is_dotenv` of the name), and every file inside a staging
    folder or named as an old temporary file (`is_staging` of a component), and every file
    whose device and inode are in `linked` (a hard link to a protected file), found by a look
    through at most _TREE_LIMIT folders, skipping _SKIP_DIRS. `staged`: `root` itself is (a
    link to) a staging folder, so everything under it counts."""
    found = []
    pending, seen = [(root, staged)], 0
    while pending and seen < _TREE_LIMIT:
        here, staged = pending.pop()
        seen += 1
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in _SKIP_DIRS:
                            pending.append((entry.path, staged or is_staging(entry.name)))
                    elif staged or is_dotenv(entry.name) or is_staging(entry.name):
                        found.append(entry.path)
                    elif linked and _inode(entry) in linked:
                        found.append(entry.path)  # a hard link to a protected file
        except OSError:
            continue
    return found


def _inode(entry: os.DirEntry[str]) -> tuple[int, int] | None:
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def included(path: str, folder: str, pattern: str) -> bool:
    """A search's file filter (`*.py`, `src/**/*.ts`) takes `path` in."""
    rel = os.path.relpath(path, folder)
    # fnmatch.fnmatch: the names and the pattern in the system's case.
    pattern = os.path.normcase(pattern)
    return rx.fnmatchcase(os.path.normcase(os.path.basename(path)), pattern) or rx.fnmatchcase(
        os.path.normcase(rel), pattern
    )


def not_ignored(folder: str, paths: list[str]) -> list[str]:
    """Those of `paths` git does not ignore in `folder`: all of them outside a repository or
    when git cannot answer."""
    # Loaded only here, with the subprocess machinery it brings: most calls never ask git. The
    # runner leaves out GIT_DIR, GIT_WORK_TREE… of the host, which would name another repository.
    from offprompt.disk import git

    data = "\0".join(paths).encode("utf-8", "surrogateescape")
    try:
        # check-ignore prints back only names it was given: a bound above the input's size never
        # cuts an answer short.
        done = git.run(
            ["-C", folder, "check-ignore", "-z", "--stdin"],
            input=data,
            timeout=5,
            most=git.MOST + len(data),
        )
    except git.GitError:
        return paths
    if done.returncode not in (0, 1):
        return paths
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    ignored = {os.path.normpath(os.path.join(folder, p)) for p in names if p}
    return [p for p in paths if os.path.normpath(p) not in ignored]
