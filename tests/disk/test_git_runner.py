"""The one git runner (offprompt.disk.git): real git in a temporary repository, fake `git`
programs on PATH for what real git will not do on demand (hang, print the environment), and a
reading of offprompt's sources that finds no other way of running git."""

from __future__ import annotations

import ast
import errno
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import offprompt
from offprompt.disk import git

REAL_GIT = shutil.which("git") or shutil.which("git", path="/usr/local/bin:/usr/bin:/bin")
pytestmark = pytest.mark.skipif(REAL_GIT is None, reason="git is not installed")
GIT_ID = ["-c", "user.email=test@example.invalid", "-c", "user.name=offprompt tests"]


def real_git(repo: Path, *args: str) -> None:
    assert REAL_GIT is not None
    subprocess.run([REAL_GIT, *GIT_ID, *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one committed file, one ignored file and one untracked file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    real_git(repo, "init", "-q")
    (repo / "tracked.txt").write_text("committed\n")
    (repo / ".gitignore").write_text(".env\n")
    (repo / ".env").write_text("KEY=1\n")
    (repo / "loose.txt").write_text("untracked\n")
    real_git(repo, "add", "tracked.txt", ".gitignore")
    real_git(repo, "commit", "-q", "-m", "init")
    return repo


# Where the fake scripts find `cat`, `sleep`, `env`: after the fake's folder on PATH.
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def fake_git(folder: Path, body: str) -> Path:
    """An executable `git` in `folder`: a shell script with `body`. Put `folder` first on PATH
    with `on_path`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "git"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def on_path(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setenv("PATH", os.pathsep.join([str(folder), SYSTEM_PATH]))


def test_a_tracked_file_is_listed_and_an_untracked_one_is_not(repo: Path) -> None:
    """ls-files --error-unmatch: 0 for the committed file, 1 for the untracked one."""
    tracked = git.run(["ls-files", "--error-unmatch", "--", "tracked.txt"], cwd=repo)
    loose = git.run(["ls-files", "--error-unmatch", "--", "loose.txt"], cwd=repo)

    assert (0, b"tracked.txt\n") == (tracked.returncode, tracked.stdout)
    assert 1 == loose.returncode
    assert b"loose.txt" in loose.stderr


def test_an_ignored_file_is_ignored_and_a_loose_one_is_not(repo: Path) -> None:
    """check-ignore -q: 0 for the file .gitignore names, 1 for the other."""
    assert 0 == git.run(["check-ignore", "-q", "--", ".env"], cwd=repo).returncode
    assert 1 == git.run(["check-ignore", "-q", "--", "loose.txt"], cwd=repo).returncode


def test_input_larger_than_a_pipe_goes_in_while_the_answer_comes_out(repo: Path) -> None:
    """Over 64 KiB of names on stdin (more than a pipe holds) and as much printed back: the
    runner feeds and reads at once, so neither side stalls."""
    names = [".env"] * 30_000 + ["loose.txt"]
    data = "\0".join(names).encode()

    done = git.run(["check-ignore", "-z", "--stdin"], cwd=repo, input=data)

    assert 0 == done.returncode
    assert [".env"] * 30_000 == done.stdout.decode().split("\0")[:-1]


def test_without_input_git_reads_an_empty_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No `input`: git's stdin is empty (never this process's own), so a read ends at once."""
    fake_git(tmp_path / "bin", "exec cat")
    on_path(monkeypatch, tmp_path / "bin")

    done = git.run([], timeout=5)

    assert (0, b"") == (done.returncode, done.stdout)


def test_no_git_on_path_is_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH without git: find() says None and run raises NotFound, an ENOENT as a missing
    program's start gives."""
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))

    assert git.find() is None
    with pytest.raises(git.NotFound) as raised:
        git.run(["--version"])
    assert errno.ENOENT == raised.value.error.errno
    assert "git could not run: No such file or directory" == str(raised.value)


def test_a_git_in_a_relative_path_entry_is_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty or relative PATH entry names the current folder, which a project controls: a
    `git` there is not the one found, and is never run."""
    ran = tmp_path / "ran"
    fake_git(tmp_path / "work", f"touch {ran}")
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("PATH", os.pathsep.join(["", ".", "work"]))

    assert git.find() is None
    with pytest.raises(git.NotFound):
        git.run(["--version"])
    assert not ran.exists()


def test_a_git_that_cannot_start_is_not_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An executable `git` the system cannot run: NotStarted, carrying the system's error."""
    (tmp_path / "bin").mkdir()
    broken = tmp_path / "bin" / "git"
    broken.write_bytes(b"\x00\x01 not a program")
    broken.chmod(0o755)
    on_path(monkeypatch, tmp_path / "bin")

    with pytest.raises(git.NotStarted) as raised:
        git.run(["--version"])
    assert not isinstance(raised.value, git.NotFound)
    assert errno.ENOEXEC == raised.value.error.errno


def test_a_git_that_hangs_is_killed_at_the_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `git` that sleeps: TimedOut after the limit, naming what was run, and the process is
    gone (killed and reaped, not left behind)."""
    pid_file = tmp_path / "pid"
    hung = fake_git(tmp_path / "bin", f"echo $$ > {pid_file}\nexec sleep 60")
    on_path(monkeypatch, tmp_path / "bin")

    start = time.monotonic()
    with pytest.raises(git.TimedOut) as raised:
        git.run(["status"], timeout=0.5)
    took = time.monotonic() - start

    assert 0.5 <= took < 5
    assert ([str(hung), "status"], 0.5) == (raised.value.argv, raised.value.seconds)
    assert "git took longer than 0.5 s" == str(raised.value)
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_a_git_that_closes_its_output_but_stays_is_timed_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Output closed, process still running: the wait for its exit is bounded too."""
    fake_git(tmp_path / "bin", "exec >&- 2>&-\nexec sleep 60")
    on_path(monkeypatch, tmp_path / "bin")

    with pytest.raises(git.TimedOut):
        git.run([], timeout=0.5)


def test_git_variables_of_the_parent_never_reach_git(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIT_DIR naming another repository and GIT_CONFIG_PARAMETERS/GIT_CONFIG_COUNT setting a
    key: real git in `repo` answers about `repo`, and sees none of those keys."""
    other = tmp_path / "other"
    other.mkdir()
    real_git(other, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'offprompt.probe=from-parent'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "offprompt.counted")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "from-parent")

    top = git.run(["rev-parse", "--show-toplevel"], cwd=repo)
    probe = git.run(["config", "--get", "offprompt.probe"], cwd=repo)
    counted = git.run(["config", "--get", "offprompt.counted"], cwd=repo)

    assert (0, os.path.realpath(repo)) == (top.returncode, top.stdout.decode().strip())
    assert (1, b"") == (probe.returncode, probe.stdout)
    assert (1, b"") == (counted.returncode, counted.stdout)


def test_gits_environment_is_the_parents_less_git_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What git is given: every other variable as it was, no GIT_* of the parent, the runner's
    own protections, and LC_ALL=C unless the caller keeps the person's locale."""
    fake_git(tmp_path / "bin", "exec env")
    on_path(monkeypatch, tmp_path / "bin")
    monkeypatch.setenv("GIT_INDEX_FILE", "/elsewhere/index")
    monkeypatch.setenv("OFFPROMPT_TEST_KEPT", "kept")
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")

    def env(keep_locale: bool = False) -> dict[str, str]:
        out = git.run([], keep_locale=keep_locale).stdout.decode()
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    plain, kept = env(), env(keep_locale=True)

    assert {"GIT_CONFIG_PARAMETERS": "'core.fsmonitor=false'"} == {
        k: v for k, v in plain.items() if k.startswith("GIT_")
    }
    assert ("kept", "C") == (plain["OFFPROMPT_TEST_KEPT"], plain["LC_ALL"])
    assert "de_DE.UTF-8" == kept["LC_ALL"]


def test_a_repositorys_fsmonitor_program_never_runs(tmp_path: Path, repo: Path) -> None:
    """core.fsmonitor in the repository's config names a program git would run on `status`:
    under the runner it does not run (plain git, as a control, does)."""
    ran = tmp_path / "fsmonitor-ran"
    monitor = tmp_path / "monitor"
    monitor.write_text(f"#!/bin/sh\ntouch {ran}\nexit 1\n")
    monitor.chmod(0o755)
    real_git(repo, "config", "core.fsmonitor", str(monitor))

    git.run(["status", "--porcelain"], cwd=repo)
    assert not ran.exists()

    real_git(repo, "status", "--porcelain")
    assert ran.exists()


def test_output_over_its_bound_is_too_long(repo: Path) -> None:
    """A blob larger than `most`: TooLong (git is stopped); at exactly `most` it is read."""
    (repo / "big.bin").write_bytes(b"x" * 200_000)
    real_git(repo, "add", "big.bin")
    real_git(repo, "commit", "-q", "-m", "big")

    with pytest.raises(git.TooLong) as raised:
        git.run(["cat-file", "blob", "HEAD:big.bin"], cwd=repo, most=100_000)
    whole = git.run(["cat-file", "blob", "HEAD:big.bin"], cwd=repo, most=200_000)

    assert "git printed more than 100000 bytes" == str(raised.value)
    assert 200_000 == len(whole.stdout)


def test_stderr_over_its_bound_is_too_long(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound holds for stderr as well."""
    fake_git(tmp_path / "bin", "head -c 5000 /dev/zero >&2")
    on_path(monkeypatch, tmp_path / "bin")

    with pytest.raises(git.TooLong):
        git.run([], most=1000)


def test_an_answer_is_frozen_and_its_repr_holds_no_output(repo: Path, canary: str) -> None:
    """The Answer cannot be changed, and its repr shows sizes, never what git printed (a blob
    can be a file's content)."""
    (repo / "held.txt").write_text(canary)
    real_git(repo, "add", "held.txt")
    real_git(repo, "commit", "-q", "-m", "held")

    done = git.run(["cat-file", "blob", "HEAD:held.txt"], cwd=repo)

    assert canary.encode() == done.stdout
    assert canary not in repr(done)
    with pytest.raises(AttributeError):
        done.returncode = 1


# Calls that start a program, and the names a resolved git path tends to go by.
_STARTERS = {
    "run",
    "Popen",
    "call",
    "check_call",
    "check_output",
    "getoutput",
    "getstatusoutput",
    "system",
    "popen",
    "create_subprocess_exec",
    "create_subprocess_shell",
}


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


# A variable that holds git's path: `git`, `GIT`, `git_bin`, `self.git_path`...
_GIT_VARIABLE = re.compile(r"_?git(_(bin|exe|path|program|binary))?", re.IGNORECASE)


def _names_git(node: ast.AST) -> bool:
    """`node` holds the word git: a string "git" (or a command line starting with it, or a path
    ending in it), or a variable named for git's path."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            if sub.value == "git" or sub.value.startswith("git ") or sub.value.endswith("/git"):
                return True
        if isinstance(sub, ast.Name | ast.Attribute) and _GIT_VARIABLE.fullmatch(_name(sub)):
            return True
    return False


def git_runs(source: str) -> list[int]:
    """Lines of `source` that run git themselves or look it up: a program start whose command
    names git (directly, or through a variable set to a command that does), a `which("git")`,
    or a path joined onto "git"."""
    tree = ast.parse(source)
    commands = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _names_git(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        called, first = _name(node.func), node.args[0]
        starts = called in _STARTERS or called.startswith(("exec", "spawn", "posix_spawn"))
        if starts and (_names_git(first) or (isinstance(first, ast.Name) and first.id in commands)):
            found.append(node.lineno)
        elif called.endswith("which") and _names_git(first):
            found.append(node.lineno)
        elif called == "join" and any(_names_git(arg) for arg in node.args):
            found.append(node.lineno)
    return found


def test_the_reader_finds_each_way_of_running_git() -> None:
    """The check below would catch each of the four ways git was run before the runner."""
    ways = [
        'git = shutil.which("git")',
        "subprocess.run([git, '-C', top, 'status'], check=False)",
        "subprocess.run(['git', 'status'])",
        "subprocess.Popen(('git', 'ls-files'))",
        "os.execvp('git', ['git', 'status'])",
        "os.system('git status')",
        "asyncio.create_subprocess_exec(self.git_path, 'status')",
        "_which('git')",
        "argv = [git, *args]\nproc = subprocess.Popen(argv)",
        "path = os.path.join(folder, 'git')",
    ]
    assert [[1], [1], [1], [1], [1], [1], [1], [1], [2], [1]] == [git_runs(way) for way in ways]
    assert [] == git_runs("subprocess.run([program, *args])\nrunner.run(['status'])")


def test_no_module_but_the_runner_runs_git() -> None:
    """Every module of offprompt asks git through offprompt.disk.git: a fifth way fails here."""
    package = Path(offprompt.__file__).parent
    runner = package / "disk" / "git.py"
    found = {
        str(path.relative_to(package)): lines
        for path in sorted(package.rglob("*.py"))
        if path != runner and (lines := git_runs(path.read_text(encoding="utf-8")))
    }

    assert {} == found
    assert git_runs(runner.read_text(encoding="utf-8")) != []  # the reader does see the runner


# What the guard's hook must not pay for when it asks git (tests/guard/test_hook_imports.py lists
# the same slow modules for its everyday calls).
SLOW_IMPORTS = ("typing", "dataclasses", "inspect", "pathlib", "secrets", "shutil", "platformdirs")


def test_running_git_loads_no_slow_module(repo: Path) -> None:
    """A fresh interpreter that imports the runner and runs git once has loaded none of the slow
    modules, and of offprompt only the disk package, its git runner and the one process runner
    under it (the package's root loads the error tree only when asked for it)."""
    script = (
        "import sys\n"
        "from offprompt.disk import git\n"
        f"git.run(['status'], cwd={str(repo)!r})\n"
        f"print(sorted(m for m in {SLOW_IMPORTS!r} if m in sys.modules))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'offprompt'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )

    loaded = "['offprompt', 'offprompt.disk', 'offprompt.disk.git', 'offprompt.disk.process']"
    assert ["[]", loaded] == (done.stdout.splitlines())
