"""What git says about a destination: inside a work tree, tracked, ignored.

Asks through the one git runner (offprompt.disk.git: no shell, short timeout); no git or no
repository means "not tracked".
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from offprompt.disk import git as runner

__all__ = ["GitStatus", "GitUnanswered", "committed", "status", "tracked"]

TIMEOUT_SECONDS = 5.0

# `safe.directory=*`: git refuses a repository owned by another user ("dubious ownership", exit
# 128), which would read as "not a repository" and let a secret into a tracked file; root in a
# container writing into a bind-mounted project is exactly that case. The commands below only
# read the index and ignore rules; fsmonitor is switched off so no repository-configured program
# runs.
_GIT_ARGS = ("-c", "safe.directory=*", "-c", "core.fsmonitor=false")


class GitUnanswered(Exception):
    """git ran but did not answer in time or crashed: tracked-ness is unknown.

    Outside the error root on purpose: the sinks turn it into a WriteError or a Target problem.
    """


@dataclass(frozen=True)
class GitStatus:
    in_git_repo: bool
    tracked: bool
    ignored: bool


def status(path: Path) -> GitStatus:
    """Ask git about `path` (absolute; it and its parents need not exist).

    Raises GitUnanswered when git exists but gave no usable answer, so a caller never mistakes
    "could not tell" for "not tracked".
    """
    return _ask(path, ignored=True)


def tracked(path: Path) -> bool:
    """Whether git tracks `path`, as `status(path).tracked`, without asking about ignore rules:
    the write needs only this, and each question is one more git process. GitUnanswered as for
    `status`."""
    return _ask(path, ignored=False).tracked


def committed(path: Path, most: int) -> bytes | None:
    """What the last commit (HEAD) holds at `path`, raw (`cat-file blob`: no filter or textconv
    a repository could configure runs); None without git, a repository, a commit or that file
    in it, when git gives no answer, and when the blob is larger than `most` bytes."""
    if runner.find() is None or not path.parent.is_dir():
        return None
    try:
        size = _run(path.parent, "cat-file", "-s", f"HEAD:./{path.name}")
        if size.returncode != 0 or int(size.stdout.strip() or b"-1") > most:
            return None
        # Bounded too: HEAD can move between the two questions.
        blob = _run(path.parent, "cat-file", "blob", f"HEAD:./{path.name}", most=most)
    except (GitUnanswered, ValueError):
        return None
    return blob.stdout if blob.returncode == 0 else None


def _ask(path: Path, *, ignored: bool) -> GitStatus:
    if runner.find() is None:
        return GitStatus(in_git_repo=False, tracked=False, ignored=False)
    cwd = path.parent
    while not cwd.is_dir():
        cwd = cwd.parent
    rel = os.path.relpath(path, cwd)
    inside = _run(cwd, "rev-parse", "--is-inside-work-tree")
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        # 128: not a repository (or inside .git itself): nothing there can be tracked.
        if inside.returncode not in (0, 128):
            raise GitUnanswered(f"git rev-parse exited with {inside.returncode}")
        return GitStatus(in_git_repo=False, tracked=False, ignored=False)
    # `--literal-pathspecs`: a file named `.env*` must not match `.env` as a glob. (check-ignore
    # takes plain paths and rejects that option.)
    listed = _run(cwd, "--literal-pathspecs", "ls-files", "--error-unmatch", "--", rel)
    if listed.returncode not in (0, 1):
        raise GitUnanswered(f"git ls-files exited with {listed.returncode}")
    is_ignored = False
    if ignored:
        checked = _run(cwd, "check-ignore", "-q", "--", rel)
        if checked.returncode not in (0, 1):
            raise GitUnanswered(f"git check-ignore exited with {checked.returncode}")
        is_ignored = checked.returncode == 0
    return GitStatus(in_git_repo=True, tracked=listed.returncode == 0, ignored=is_ignored)


def _run(cwd: Path, *args: str, most: int = runner.MOST) -> runner.Answer:
    # The runner leaves out GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE… of the caller's environment,
    # which would make git answer about some other repository than the one holding the file.
    try:
        return runner.run((*_GIT_ARGS, *args), cwd=cwd, timeout=TIMEOUT_SECONDS, most=most)
    except runner.TimedOut:
        raise GitUnanswered(f"git took longer than {TIMEOUT_SECONDS:g} s") from None
    except runner.NotStarted as e:
        raise GitUnanswered(f"git could not run: {e.error.strerror}") from None
    except runner.GitError as e:
        raise GitUnanswered(str(e)) from None
