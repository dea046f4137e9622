"""Fake `gh`, `vercel`, `wrangler`, `fly` and `flyctl` on PATH: each records its argv, stdin,
environment, working folder and /proc/self/cmdline as one JSON line, and fails on demand.

`FakePrograms.fail(name, code, line)` makes the next runs of `name` print `line` (with
`{stdin}` replaced by what it read) and exit `code`. `hold(name)` makes it wait, after writing
its pid, until `release(name)`, so a test can read /proc/<pid>/cmdline while it runs.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAMES = ("gh", "vercel", "wrangler", "fly", "flyctl")

SCRIPT = """#!{python}
import json, os, sys, time
from pathlib import Path
log = Path({log!r})
name = os.path.basename(sys.argv[0])
data = sys.stdin.buffer.read()
ctl = log / (name + ".hold")
if ctl.exists():
    (log / (name + ".pid")).write_text(str(os.getpid()))
    deadline = time.monotonic() + 20
    while ctl.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
with open("/proc/self/cmdline", "rb") as f:
    cmdline = f.read().decode("utf-8", "replace")
record = {{
    "name": name,
    "argv": sys.argv[1:],
    "stdin": data.decode("utf-8", "surrogateescape"),
    "env": dict(os.environ),
    "cwd": os.getcwd(),
    "cmdline": cmdline,
}}
with open(log / "calls.jsonl", "a") as f:
    f.write(json.dumps(record) + "\\n")
fail = log / (name + ".fail")
if fail.exists():
    code, _, line = fail.read_text().partition("\\n")
    sleep = log / (name + ".sleep")
    if sleep.exists():
        time.sleep(float(sleep.read_text()))
    print("working...")
    print(line.replace("{{stdin}}", data.decode("utf-8", "replace")), file=sys.stderr)
    sys.exit(int(code))
print("Set secret for the project")
"""


@dataclass(frozen=True)
class Call:
    name: str
    argv: list[str]
    stdin: str
    env: dict[str, str]
    cwd: str
    cmdline: str


class FakePrograms:
    def __init__(self, root: Path, names: tuple[str, ...] = NAMES) -> None:
        self.bin = root / "bin"
        self.log = root / "log"
        self.bin.mkdir(parents=True)
        self.log.mkdir()
        for name in names:
            self.add(name)

    def add(self, name: str) -> None:
        path = self.bin / name
        path.write_text(SCRIPT.format(python=sys.executable, log=str(self.log)))
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    def remove(self, name: str) -> None:
        (self.bin / name).unlink()

    def env(self, **extra: str) -> dict[str, str]:
        """The process environment with only these fakes (and nothing else) on PATH."""
        env = dict(os.environ)
        env["PATH"] = str(self.bin)
        env.update(extra)
        return env

    def fail(self, name: str, code: int, line: str, *, sleep: float | None = None) -> None:
        (self.log / f"{name}.fail").write_text(f"{code}\n{line}")
        if sleep is not None:
            (self.log / f"{name}.sleep").write_text(str(sleep))

    def hold(self, name: str) -> None:
        (self.log / f"{name}.hold").write_text("")

    def release(self, name: str) -> None:
        (self.log / f"{name}.hold").unlink(missing_ok=True)

    def wait_pid(self, name: str, timeout: float = 20.0) -> int:
        path = self.log / f"{name}.pid"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if path.exists() and path.read_text():
                return int(path.read_text())
            time.sleep(0.02)
        raise AssertionError(f"{name} never started")

    def calls(self) -> list[Call]:
        path = self.log / "calls.jsonl"
        if not path.exists():
            return []
        rows: list[dict[str, Any]] = [json.loads(ln) for ln in path.read_text().splitlines()]
        return [Call(**row) for row in rows]


def git(project: Path, *args: str) -> None:
    # Some fixtures put only fake programs on PATH; git is the real one wherever it is.
    exe = shutil.which("git") or shutil.which("git", path="/usr/local/bin:/usr/bin:/bin") or "git"
    subprocess.run([exe, *args], cwd=project, check=True, capture_output=True)


def link_all(project: Path) -> Path:
    """Link `project` to all four: a GitHub remote, a Vercel link, a worker and a Fly app."""
    git(project, "init", "-q")
    git(project, "remote", "add", "origin", "git@github.com:acme/web.git")
    (project / ".vercel").mkdir()
    (project / ".vercel" / "project.json").write_text(
        json.dumps({"projectId": "prj_123", "orgId": "team_9", "projectName": "web"})
    )
    (project / "wrangler.toml").write_text('name = "web-worker"\n[env.staging]\n')
    (project / "fly.toml").write_text('app = "acme-web"\n')
    return project
