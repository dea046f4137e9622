"""Fixtures for CLI tests: a PATH holding only fake agent programs, and a CLI runner."""

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from offprompt.cli import cli
from offprompt.hosts import Machine


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
def machine(home: Path) -> Machine:
    return Machine(home=home, environ=dict(os.environ), platform="linux")


@pytest.fixture
def run() -> Callable[..., Result]:
    """Run `offprompt ARGS...` in-process; stdout and stderr apart."""

    def invoke(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(cli, list(args), prog_name="offprompt", input=input)

    return invoke
