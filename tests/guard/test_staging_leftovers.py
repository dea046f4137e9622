"""A staging folder a killed write left behind (`.offprompt-<16 hex>/`, holding the new file) is
protected like the file it was for (issue 22 item 4): the guard blocks reading it however it is
named, `offprompt keys`, `offprompt status` and `secret_status` never read it as a key source,
and `git add -A` never picks it up.

The leftover is a real one: a writer process SIGKILLed just before its `os.replace`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from offprompt import status
from offprompt.errors import RefusedRequest

ROOT = Path(__file__).resolve().parents[2]
WRITER = ROOT / "tests" / "unit" / "sinks" / "crash_writer.py"


def _git(repo: Path, *args: str) -> str:
    # The guard's tests put only fake programs on PATH; git is the real one wherever it is.
    exe = shutil.which("git") or shutil.which("git", path="/usr/local/bin:/usr/bin:/bin")
    if exe is None:
        pytest.skip("git is not installed")
    done = subprocess.run([exe, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def _kill_at(project: Path, stop_at: int, value: str) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(WRITER), str(project), "at", str(stop_at), value],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    return done.returncode


def _stage_with_value(project: Path, value: str) -> Path | None:
    for stage in project.glob(".offprompt-*"):
        for f in stage.iterdir():
            if f.name != ".gitignore" and value.encode() in f.read_bytes():
                return stage
    return None


# The step found to leave the value staged, so later tests start there (a run costs ~0.3 s).
_FOUND: list[int] = []


def make_leftover(project: Path, value: str) -> Path:
    """Kill a writer of `project/.env` at each step in turn until one leaves its staging
    folder holding the new file (the instant before `os.replace`); that folder."""
    for stop_at in range(_FOUND[0] if _FOUND else 1, 60):
        if project.exists():
            shutil.rmtree(project)
        project.mkdir()
        _git(project, "init", "-q")
        (project / ".gitignore").write_text(".env\n")
        code = _kill_at(project, stop_at, value)
        assert code in (0, -signal.SIGKILL)
        stage = _stage_with_value(project, value)
        if stage is not None:
            assert not (project / ".env").exists()  # the first write: no .env to protect yet
            _FOUND[:] = [stop_at]
            return stage
        assert code != 0, "the write ended without ever leaving the value staged"
    raise AssertionError("no kill left the value staged")


@pytest.fixture
def leftover(tmp_path: Path, canary: str) -> Path:
    """A project whose first .env write was killed with the value staged, and a second
    leftover beside a file sink's target (config/key.pem), laid out as sinks.atomic lays it."""
    project = tmp_path / "app"
    stage = make_leftover(project, canary)
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("print('hi')\n")
    (project / "README.md").write_text("# app\n")
    pem = project / "config" / stage.name
    pem.mkdir(parents=True)
    (pem / ".gitignore").write_text("*\n")
    (pem / "key.pem.new").write_text(f"API_KEY={canary}\n")
    return project


def stage_of(project: Path) -> str:
    (stage,) = project.glob(".offprompt-*")
    return stage.name


def guard(
    project: Path, tool: str, tool_input: dict[str, object]
) -> subprocess.CompletedProcess[str]:
    event = {
        "session_id": "s",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    }
    return subprocess.run(
        [sys.executable, "-m", "offprompt", "guard"],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        timeout=30,
        env=dict(os.environ),
        check=False,
    )


BLOCKED = [
    "cat {s}/.env.new",
    "cat ./{s}/.env.new",
    "cat .offprompt-*/.env.new",
    "cat .offprompt-*/.*",
    "cat config/.offprompt-*/*",
    "head -c 100 {s}/.env.*",
    "cat config/{s}/key.pem.new",
    "cat */.offprompt-*/*",
    "source {s}/.env.new && env",
    "cd {s} && cat .env.new",
    "cd config/{s} && cat *",
    "cp -r {s} /tmp/elsewhere",
    "grep -r API_KEY .",
    "grep -r API_KEY config",
    "python3 -c \"print(open('{s}/.env.new').read())\"",
]


@pytest.mark.parametrize("command", BLOCKED)
def test_the_guard_blocks_reading_a_leftover_staging_folder(
    leftover: Path, canary: str, command: str
) -> None:
    """Each way of naming the staged file (or its folder, or a search that would open it) is
    blocked with the usual one line, even though no .env exists yet."""
    done = guard(leftover, "Bash", {"command": command.format(s=stage_of(leftover))})
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.startswith("offprompt guard: blocked: ")
    assert canary not in done.stderr


@pytest.mark.parametrize(
    "command", ["cat l/.env.new", "cat l/.*", "grep -r API_KEY l", "cd l && cat .env.new"]
)
def test_the_guard_blocks_reading_a_leftover_through_a_link(leftover: Path, command: str) -> None:
    """A link made to the staging folder (`ln -s "$(ls -a | grep offprompt)" l`, whose target
    the guard cannot know) leads where the folder is: reading through it is blocked."""
    (leftover / "l").symlink_to(stage_of(leftover))
    done = guard(leftover, "Bash", {"command": command})
    assert done.returncode == 2, done.stderr


def test_the_guard_blocks_a_file_tool_reading_the_staged_file(leftover: Path) -> None:
    """Read with the absolute path of the staged file is blocked too."""
    path = leftover / stage_of(leftover) / ".env.new"
    done = guard(leftover, "Read", {"file_path": str(path)})
    assert done.returncode == 2, done.stderr


def test_the_guard_blocks_an_old_style_temporary_file(leftover: Path) -> None:
    """Earlier versions staged `.<name>.offprompt-<16 hex>.tmp` beside the file."""
    (leftover / ".env.offprompt-0123456789abcdef.tmp").write_text("API_KEY=x\n")
    for command in ("cat .env.offprompt-0123456789abcdef.tmp", "cat .env.offprompt-*"):
        assert guard(leftover, "Bash", {"command": command}).returncode == 2, command


@pytest.mark.parametrize(
    "command", ["ls -la", "git status", "cat README.md", "grep -r print src", "cat src/*.py"]
)
def test_the_guard_lets_other_work_through_beside_a_leftover(leftover: Path, command: str) -> None:
    """A leftover in the project does not block calls that do not read it."""
    done = guard(leftover, "Bash", {"command": command})
    assert (done.returncode, done.stderr) == (0, "")


def offprompt(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "offprompt", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=30,
        env=dict(os.environ),
        check=False,
    )


@pytest.mark.parametrize("file", ["{s}/.env.new", "config/{s}/key.pem.new", "peek.env"])
def test_offprompt_keys_refuses_a_staged_file(leftover: Path, canary: str, file: str) -> None:
    """`offprompt keys` names no key of a staged file (here or through a link to it): exit 1,
    saying what the folder is."""
    s = stage_of(leftover)
    (leftover / "peek.env").symlink_to(f"{s}/.env.new")
    done = offprompt(leftover, "keys", file.format(s=s))
    assert done.returncode == 1, done.stdout
    assert done.stdout == ""
    assert "interrupted write" in done.stderr
    assert "API_KEY" not in done.stderr
    assert canary not in done.stderr


@pytest.mark.parametrize("file", ["{s}/.env.new", "config/{s}/key.pem.new", "peek.env"])
def test_secret_status_refuses_a_staged_file(leftover: Path, canary: str, file: str) -> None:
    """secret_status (and `offprompt status`) read no staged file as the target."""
    s = stage_of(leftover)
    (leftover / "peek.env").symlink_to(f"{s}/.env.new")
    with pytest.raises(RefusedRequest, match="interrupted write"):
        status.report(leftover, file.format(s=s))
    done = offprompt(leftover, "status", file.format(s=s), "--json")
    assert done.returncode != 0
    assert "API_KEY" not in done.stdout + done.stderr
    assert canary not in done.stdout + done.stderr


def test_git_add_all_never_picks_up_the_leftover(leftover: Path, canary: str) -> None:
    """`git add -A` stages nothing from either staging folder."""
    added = _git(leftover, "add", "-A", "--dry-run")
    assert ".offprompt-" not in added
    for name in _git(leftover, "ls-files", "--others", "--exclude-standard").splitlines():
        assert canary not in (leftover / name).read_text()


@pytest.mark.parametrize(
    ("name", "staged"),
    [
        (".offprompt-0123456789abcdef", True),
        (".env.offprompt-0123456789abcdef.tmp", True),
        (".offprompt-keep", True),
        (".offprompt-keeps", False),
        (".offprompt-cache", False),
        (".offprompt-0123456789ABCDEF", False),
        (".offprompt-0123456789abcde", False),
        (".settings.json.offprompt-config-0123456789abcdef.tmp", False),
        ("offprompt-0123456789abcdef", False),
    ],
)
def test_the_guard_and_the_writer_agree_on_what_is_staging(name: str, staged: bool) -> None:
    """The hook's own copy of the staging names (it imports no sink code) says what
    sinks.atomic's does, for the names it makes and for lookalikes."""
    from offprompt.guard import protected
    from offprompt.sinks import atomic

    assert (protected.is_staging(name), atomic.is_staged(name)) == (staged, staged)
    assert (protected.in_staging(f"a/{name}/x"), atomic.is_staged(f"a/{name}/x")) == (
        staged,
        staged,
    )


def test_the_guard_blocks_a_read_from_inside_the_staging_folder(leftover: Path) -> None:
    """An agent whose cwd is the staging folder itself names the file by its bare name."""
    done = guard(leftover / stage_of(leftover), "Bash", {"command": "cat .env.new"})
    assert done.returncode == 2, done.stderr


@pytest.mark.parametrize(
    "command",
    ["cat .offprompt-keep/*", "cd .offprompt-keep && cat *", "grep -r A ."],
)
def test_the_guard_blocks_reading_the_keep_folder(project: Path, canary: str, command: str) -> None:
    """The keep folder of a masked project holds a file's old bytes while it is written in
    place (a killed writer leaves them there): as protected as a staging folder."""
    keep = project / ".offprompt-keep"
    keep.mkdir(mode=0o700)
    (keep / "0123456789abcdef0123456789abcdef").write_text(f"API_KEY={canary}\n")
    done = guard(project, "Bash", {"command": command})
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert canary not in done.stderr
    read = guard(project, "Read", {"file_path": str(keep / "0123456789abcdef0123456789abcdef")})
    assert read.returncode == 2, read.stderr
