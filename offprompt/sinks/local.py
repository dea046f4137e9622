"""The disk side every file-writing sink shares: where the file is, whether git tracks it,
whether it can be written, and the locked, all-or-nothing write around the kind's own format.
"""

from __future__ import annotations

import contextlib
import os
from abc import abstractmethod
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from offprompt import log
from offprompt.disk import walk
from offprompt.errors import RefusedRequest, TrackedFile, UnsafeValue, WriteError
from offprompt.sinks import atomic, dotenv, git
from offprompt.sinks.interface import Sink, Target, WriteResult
from offprompt.sinks.lock import locked
from offprompt.sinks.paths import display, real_project, resolve_target
from offprompt.spec import SinkSpec

__all__ = ["LocalFileSink"]


class LocalFileSink(Sink):
    """A sink that keeps its values in one file inside the project.

    A kind says how it reads what the file holds (`look`), which values it refuses
    (`check_values`, `unsafe_message`) and how it writes them (`write_locked`); the path rules,
    git, the folder lock and cleanup are the same for all.
    """

    def check_takes(self, names: Sequence[str]) -> None:
        if not names:
            raise RefusedRequest("No secret was named; name at least one.")
        if len(set(names)) != len(names):
            raise RefusedRequest("A secret was named twice; name each once.")
        for name in names:
            if not dotenv.NAME_PATTERN.fullmatch(name):
                raise RefusedRequest(f"{name!r} is not a variable name bash can read.")

    @abstractmethod
    def unsafe_message(self, names: Collection[str], shown: str) -> str:
        """Why nothing was written, for values `check_values` refused (names only, no value)."""

    @abstractmethod
    def look(
        self, folder: walk.Folder, path: Path, shown: str, names: Sequence[str]
    ) -> tuple[frozenset[str], str | None]:
        """Which of `names` the existing file at `path` (`path.name` in `folder`) already holds,
        and why it cannot take them (None when it can), from one read; WriteError if it cannot
        be read."""

    @abstractmethod
    def write_locked(
        self,
        folder: walk.Folder,
        path: Path,
        shown: str,
        values: Mapping[str, str],
        keep_if_present: Collection[str],
        owner: tuple[int, int] | None,
    ) -> WriteResult:
        """Write `values` to `path` (`path.name` in `folder`, walked to and locked); raise
        WriteError to refuse."""

    def inspect(self, project: Path, spec: SinkSpec, names: Sequence[str]) -> Target:
        self.check_takes(names)
        path = resolve_target(project, spec)
        root = real_project(project)
        shown = display(root, path)
        problem: str | None = None
        present: frozenset[str] = frozenset()
        try:
            # Walked to from the project, never by name: a folder swapped for a link out of the
            # project since `resolve_target` stops the walk instead of leading there.
            folder = atomic.reach_parent(root, path, shown, unreadable=True)
        except WriteError as e:
            folder, problem = None, str(e)
        exists = problem is not None and os.path.lexists(path)
        if folder is not None:
            with folder:
                try:
                    exists = folder.lstat(path.name) is not None
                except OSError:  # as os.path.lexists answers it
                    exists = False
                if exists:
                    try:
                        present, problem = self.look(folder, path, shown, names)
                    except WriteError as e:
                        problem = str(e)
        tracked = ignored = in_repo = False
        try:
            g = git.status(path)
            tracked, ignored, in_repo = g.tracked, g.ignored, g.in_git_repo
        except git.GitUnanswered as e:
            problem = problem or f"Could not tell whether {shown} is tracked by git ({e})."
        why_not = _why_not_writable(root, path)
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
        self,
        project: Path,
        spec: SinkSpec,
        values: Mapping[str, str],
        *,
        keep_if_present: frozenset[str],
        allow_tracked: bool,
        in_place: bool = False,
    ) -> WriteResult:
        self.check_takes(tuple(values))
        path = resolve_target(project, spec)
        root = real_project(project)
        shown = display(root, path)
        unsafe = self.check_values(values)
        if unsafe:
            raise UnsafeValue(self.unsafe_message(tuple(unsafe), shown))
        if not allow_tracked:
            _refuse_if_tracked(path, shown)
        owner = walk.owner(root, path.relative_to(root).parts)
        # Every folder from the project down is opened by descriptor, without following links;
        # the lock, the read, the staging and the rename all happen relative to the last one.
        # A masked project's file is written in place (`in_place`), its undo record in
        # offprompt's state dir: a rename would show a running sandbox the real file (§15).
        with atomic.open_parents(root, path, shown, owner) as folder:
            try:
                with locked(folder, shown), contextlib.ExitStack() as kept:
                    atomic.remove_stale_temps(folder)
                    if in_place:
                        records = kept.enter_context(atomic.open_records(shown))
                        atomic.keep_in_place(folder, records, root, path, shown)
                    result = self.write_locked(folder, path, shown, values, keep_if_present, owner)
            except BaseException:
                folder.remove_created()
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
        tracked = git.tracked(path)
    except git.GitUnanswered as e:
        raise WriteError(
            f"Could not tell whether {shown} is tracked by git ({e}); nothing was changed."
        ) from None
    if tracked:
        raise TrackedFile(
            f"{shown} is tracked by git, so a secret written there could be committed; nothing"
            " was changed. Untrack it (git rm --cached) and ignore it, or allow the tracked file."
        )


def _why_not_writable(root: Path, path: Path) -> str | None:
    """Why `path` (resolved, inside `root`) could not be written, judged on its nearest existing
    folder, walked to from `root` like the write (a link on the way counts as no folder)."""
    parts = path.parent.relative_to(root).parts
    depth = len(parts)
    while True:
        try:
            folder = walk.reach(root, parts[:depth])
            break
        except FileNotFoundError:
            if depth == 0:  # the project folder itself is gone: the write says so
                return None
            depth -= 1
        except (OSError, ValueError):
            return "a part of its path is a file, not a folder"
    with folder:
        try:
            if os.fstatvfs(folder.fd).f_flag & os.ST_RDONLY:
                return "the file system is read-only"
        except OSError:
            pass
        if not os.access(".", os.W_OK | os.X_OK, dir_fd=folder.fd):
            return "no permission to write in its folder"
    return None
