"""Values, helpers and fixtures shared by the CLI, agents and guard tests (imported as
`cli_helpers`; each folder's conftest.py takes the fixtures it needs from here)."""

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from offprompt.agents import Machine, ServerCommand
from offprompt.cli import cli

# What `--command` gives in most tests, so expected configs do not depend on this machine.
COMMAND = "/opt/offprompt/bin/offprompt serve"
SERVER = ServerCommand("/opt/offprompt/bin/offprompt", ("serve",))
FIXTURES = Path(__file__).parent / "agents" / "fixtures"
# What `--shared` tests give: a command that starts offprompt on any machine (the `portable`
# fixture puts a program of that name on PATH, where a portable command's first word must be).
PORTABLE = "offprompt serve"


def shared(project: Path, command: str = PORTABLE) -> list[str]:
    """The options of `init`/`remove` for the project's own files (--shared), with `command`."""
    return ["--shared", "--project", str(project), "--command", command]


def snapshot(*roots: Path) -> dict[str, tuple[str, bytes | str | None, int]]:
    """Every file, folder and link under `roots`: kind, content or target, and mode."""
    seen: dict[str, tuple[str, bytes | str | None, int]] = {}
    for root in roots:
        for path in sorted([root, *root.rglob("*")]):
            st = path.lstat()
            mode = stat.S_IMODE(st.st_mode)
            if path.is_symlink():
                seen[str(path)] = ("link", os.readlink(path), 0)
            elif path.is_dir():
                seen[str(path)] = ("dir", None, mode)
            else:
                seen[str(path)] = ("file", path.read_bytes(), mode)
    return seen


@pytest.fixture(autouse=True)
def no_agent_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """No agent programs on PATH and no agent homes moved elsewhere, whatever this machine has."""
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "UV_CACHE_DIR", "APPDATA"):
        monkeypatch.delenv(name, raising=False)
    bin_dir = tmp_path_factory.mktemp("bin")
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


@pytest.fixture
def home(isolated_env: Path) -> Path:
    return isolated_env


@pytest.fixture
def fake_program(no_agent_env: Path) -> Callable[[str], Path]:
    """Put an executable called `name` on PATH (agents are found by their program)."""

    def make(name: str) -> Path:
        path = no_agent_env / name
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return path

    return make


@pytest.fixture
def portable(fake_program: Callable[[str], Path]) -> Path:
    """An `offprompt` on PATH, so `--command 'offprompt serve'` is a portable command."""
    return fake_program("offprompt")


@pytest.fixture
def machine(home: Path) -> Machine:
    return Machine(home=home, environ=dict(os.environ), platform="linux")


@pytest.fixture
def run() -> Callable[..., Result]:
    """Run `offprompt ARGS...` in-process; stdout and stderr apart."""

    def invoke(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(cli, list(args), prog_name="offprompt", input=input)

    return invoke
