"""Real bash as the guard's oracle: run a command in a project whose protected file holds a
canary, and see whether the value got out (printed, copied into another file) or the file was
overwritten. A case the guard lets through must be one bash shows harmless, and a case it
blocks as an attack must be one bash shows is one."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Outcome", "run_in_bash"]

# Long enough for a slow machine, short enough that a command waiting on stdin is cut off.
TIMEOUT = 10.0


@dataclass(frozen=True)
class Outcome:
    """What a command did to the protected file under real bash."""

    printed: bool  # the canary was on stdout or stderr
    copied: tuple[str, ...]  # files other than the protected one that now hold the canary
    changed: bool  # the protected file's bytes are no longer what they were

    @property
    def exposed(self) -> bool:
        return self.printed or bool(self.copied) or self.changed


def run_in_bash(command: str, project: Path, protected: Path, canary: str) -> Outcome:
    """Run `command` with `bash -c` in `project` (a scratch HOME, stdin closed) and report
    what it did to `protected`, whose contents hold `canary`. Files it leaves anywhere under
    the project's parent folder are searched for the canary (those that held it before the
    run are not counted)."""
    before = protected.read_bytes()
    held = set(_holders(project.parent, canary))
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8"}
    try:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
        out = done.stdout + done.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"") + (e.stderr or b"")
    copied = tuple(
        str(p.relative_to(project.parent))
        for p in _holders(project.parent, canary)
        if p != protected and p not in held
    )
    changed = not protected.exists() or protected.read_bytes() != before
    if changed:  # put it back, so the next command in the same project meets the canary
        protected.write_bytes(before)
    return Outcome(canary.encode() in out, copied, changed)


def _holders(folder: Path, canary: str) -> list[Path]:
    return [
        p
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink() and _holds(p, canary)
    ]


def _holds(path: Path, canary: str) -> bool:
    try:
        return canary.encode() in path.read_bytes()
    except OSError:
        return False
