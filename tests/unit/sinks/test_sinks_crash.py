"""A writer SIGKILLed at any instant leaves .env old or new, and nothing git would commit holds
the value (DESIGN §8), in a repository whose .gitignore names only `.env`.

The writer is a real process (crash_writer.py) killed before each of its calls into `os` in
turn, and then at random moments while it writes in a loop.
"""

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

WRITER = Path(__file__).with_name("crash_writer.py")
ROOT = Path(__file__).resolve().parents[3]
STAGE_IGNORE = re.compile(r"\.offprompt-[0-9a-f]{16}/\.gitignore")


def git(repo: Path, *args: str) -> str:
    git_bin = shutil.which("git") or pytest.skip("git is not installed")
    done = subprocess.run(
        [git_bin, *args], cwd=repo, capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout


def repo_with_env(folder: Path, old: str) -> Path:
    """A git repository whose .gitignore (committed) names only `.env`, which holds `old`."""
    folder.mkdir()
    git(folder, "init", "-q")
    (folder / ".gitignore").write_text(".env\n")
    git(folder, "add", ".gitignore")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ignore .env")
    (folder / ".env").write_text(old)
    return folder


def writer(project: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(project), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def what_git_would_add(repo: Path) -> list[str]:
    """Every path `git add -A` would stage, and every untracked file `git status` lists."""
    added = [
        line.removeprefix("add '").removesuffix("'")
        for line in git(repo, "add", "-A", "--dry-run").splitlines()
    ]
    status = git(repo, "status", "--porcelain", "--ignored=no", "--untracked-files=all")
    return sorted({*added, *(line[3:] for line in status.splitlines())})


def committable_holders(repo: Path, canary: str) -> list[str]:
    """The files git would pick up that hold `canary` (or any part of the new file)."""
    holders = []
    for name in what_git_would_add(repo):
        path = repo / name
        if path.is_file() and canary.encode() in path.read_bytes():
            holders.append(name)
    return holders


def leftovers_git_sees(repo: Path) -> list[str]:
    """What git would add besides an empty staging .gitignore (a kill between its create and
    its one write leaves that: it holds nothing)."""
    return [
        name
        for name in what_git_would_add(repo)
        if not (STAGE_IGNORE.fullmatch(name) and (repo / name).read_bytes() == b"")
    ]


def test_sigkill_before_each_step_leaves_env_old_or_new_and_nothing_git_would_commit(
    tmp_path: Path, canary: str
) -> None:
    """Killed before each os call of a write in turn: .env is old or new, git adds no value."""
    old = f"OTHER=1\nAPI_KEY={canary}-old\n"
    new = f"OTHER=1\nAPI_KEY={canary}-new\n"
    seen: list[tuple[int, str, list[str], list[str]]] = []
    stop_at = 1
    while True:
        project = repo_with_env(tmp_path / f"p{stop_at}", old)
        proc = writer(project, "at", str(stop_at), f"{canary}-new")
        out, err = proc.communicate(timeout=60)
        if proc.returncode == 0:
            break
        assert proc.returncode == -signal.SIGKILL, err
        state = (project / ".env").read_text()
        seen.append(
            (
                stop_at,
                "old" if state == old else "new" if state == new else "torn",
                committable_holders(project, canary),
                leftovers_git_sees(project),
            )
        )
        stop_at += 1
        assert stop_at < 200, "the write never ended"
    calls = int(out.strip().removeprefix("calls="))
    assert (project / ".env").read_text() == new
    assert (calls, what_git_would_add(project)) == (stop_at - 1, [])
    assert [(n, s, h, g) for n, s, h, g in seen if s == "torn" or h or g] == []
    # Both outcomes were reached: the kills straddle the replace.
    assert {s for _, s, _, _ in seen} == {"old", "new"}


def test_sigkill_at_random_moments_of_repeated_writes_never_exposes_the_value(
    tmp_path: Path, canary: str
) -> None:
    """Killed 25 times at random while rewriting .env: whole files, git adds no value, cleaned."""
    rng = random.Random()  # noqa: S311 - kill timing, not a secret
    seed = rng.randrange(2**32)
    rng.seed(seed)
    old = f"API_KEY={canary}-old\n"
    project = repo_with_env(tmp_path / "p", old)
    problems: list[str] = []
    for round_ in range(25):
        proc = writer(project, "loop", f"{canary}-{round_}")
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n", proc.stderr and proc.stderr.read()
        time.sleep(rng.uniform(0, 0.04))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        state = (project / ".env").read_text()
        whole = state == old or (state.startswith(f"API_KEY={canary}-") and state.count("\n") == 1)
        if not whole:
            problems.append(f"round {round_}: .env is torn")
        problems += [f"round {round_}: {h} holds it" for h in committable_holders(project, canary)]
        problems += [f"round {round_}: git sees {g}" for g in leftovers_git_sees(project)]
    assert (seed, problems) == (seed, [])
    proc = writer(project, "at", "100000", f"{canary}-last")
    proc.communicate(timeout=60)
    assert (proc.returncode, what_git_would_add(project)) == (0, [])
    assert sorted(os.listdir(project)) == [".env", ".git", ".gitignore"]
