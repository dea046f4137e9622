"""Fake `gh`, `vercel`, `wrangler`, `fly` and `flyctl` on PATH: each records its argv, stdin,
environment, working folder, /proc/self/cmdline and the target it would send to as one JSON
line, and fails on demand.

The target is found the way the real program finds it: its options and variables first
(`--repo`, `--name`/`--env`, `--app`, VERCEL_ORG_ID + VERCEL_PROJECT_ID), else the project's
files, read when it runs. `retarget(files)` makes the next runs rewrite those files first, as
an agent racing a slow program start would.

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
import json, os, re, sys, time, tomllib
from pathlib import Path
log = Path({log!r})
name = os.path.basename(sys.argv[0])
data = sys.stdin.buffer.read()
here = Path(os.getcwd())
retarget = log / "retarget.json"
if retarget.exists():
    for rel, text in json.loads(retarget.read_text()).items():
        (here / rel).parent.mkdir(parents=True, exist_ok=True)
        (here / rel).write_text(text)
args = sys.argv[1:]
def opt(*names):
    for i, a in enumerate(args):
        if a in names and i + 1 < len(args):
            return args[i + 1]
    return None
def target():
    if name == "gh":
        repo = opt("--repo", "-R")
        if repo:
            return repo
        config = (here / ".git/config").read_text()
        m = re.search(r"url = .*github.com[:/](.+?)(?:\\.git)?$", config, re.M)
        return m.group(1) if m else None
    if name == "vercel":
        if os.environ.get("VERCEL_ORG_ID") and os.environ.get("VERCEL_PROJECT_ID"):
            return os.environ["VERCEL_ORG_ID"] + "/" + os.environ["VERCEL_PROJECT_ID"]
        link = json.loads((here / ".vercel/project.json").read_text())
        return link["orgId"] + "/" + link["projectId"]
    if name == "wrangler":
        # As wrangler does: the config named by --config, else the project's; the account
        # from the config (it outranks CLOUDFLARE_ACCOUNT_ID), shown after the worker.
        given = opt("--config", "-c")
        if given:
            text = open(given).read()
            config = json.loads(text) if given.endswith(".json") else tomllib.loads(text)
        else:
            config = tomllib.loads((here / "wrangler.toml").read_text())
        account = config.get("account_id") or os.environ.get("CLOUDFLARE_ACCOUNT_ID")
        at = "@" + account if account else ""
        worker, env = opt("--name"), opt("--env")
        if worker and env:
            return worker + "-" + env + at
        if worker:
            return worker + at
        if env:
            return (config["env"][env].get("name") or config["name"] + "-" + env) + at
        return config["name"] + at
    return opt("--app", "-a") or tomllib.loads((here / "fly.toml").read_text())["app"]
try:
    aimed = target()
except Exception as e:
    aimed = "unreadable: " + type(e).__name__
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
    "target": aimed,
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
    target: str | None

    def plain_argv(self) -> list[str]:
        """argv without wrangler's `--config PRIVATE-FILE` (its path differs each run)."""
        if "--config" not in self.argv:
            return self.argv
        at = self.argv.index("--config")
        return self.argv[:at] + self.argv[at + 2 :]


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

    def retarget(self, files: dict[str, str]) -> None:
        """Each later run first writes `files` (project-relative path: text) into its cwd."""
        (self.log / "retarget.json").write_text(json.dumps(files))

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
