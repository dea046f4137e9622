"""Which command `init` writes: this offprompt's absolute path, uvx for uvx runs, or --command."""

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from offprompt.agents import Machine, ServerCommand
from offprompt.agents.command import from_override, resolve


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_installed_offprompt_is_written_by_absolute_path(machine: Machine, tmp_path: Path) -> None:
    """The program next to this Python, even when not on PATH (desktop apps' PATH is short)."""
    mine = executable(tmp_path / "venv" / "bin" / "offprompt")

    got = resolve(machine, prefix=str(tmp_path / "venv"), scripts=str(mine.parent))

    assert ServerCommand(str(mine), ("serve",)) == got


def test_the_name_on_path_wins_when_it_is_this_install(
    machine: Machine, tmp_path: Path, no_agent_env: Path
) -> None:
    """A PATH symlink (pipx, Homebrew) survives upgrades; its versioned target may not."""
    mine = executable(tmp_path / "Cellar" / "offprompt" / "0.1.0" / "bin" / "offprompt")
    link = no_agent_env / "offprompt"
    link.symlink_to(mine)
    machine = Machine(home=machine.home, environ=dict(os.environ), platform="linux")

    got = resolve(machine, prefix=str(tmp_path), scripts=str(mine.parent))

    assert str(link) == got.command


def test_a_different_offprompt_on_path_loses_to_this_one(
    machine: Machine, tmp_path: Path, fake_program: Callable[[str], Path]
) -> None:
    """A pyenv shim or another install on PATH is not the offprompt the person just ran."""
    fake_program("offprompt")
    mine = executable(tmp_path / "venv" / "bin" / "offprompt")

    got = resolve(machine, prefix=str(tmp_path / "venv"), scripts=str(mine.parent))

    assert str(mine) == got.command


def test_without_a_program_python_dash_m_is_written(machine: Machine, tmp_path: Path) -> None:
    """A checkout run as `python -m offprompt` still gets a command that works."""
    got = resolve(machine, prefix=str(tmp_path), scripts=str(tmp_path / "none"), executable="/py")

    assert ServerCommand("/py", ("-m", "offprompt", "serve")) == got


@pytest.mark.parametrize("with_uvx", [True, False])
def test_a_uvx_run_writes_uvx(
    with_uvx: bool, machine: Machine, home: Path, fake_program: Callable[[str], Path]
) -> None:
    """uvx's environment is a cache entry that can vanish, so the config says `uvx offprompt`."""
    uvx = str(fake_program("uvx")) if with_uvx else "uvx"
    prefix = home / ".cache" / "uv" / "archive-v0" / "aBcD123"
    executable(prefix / "bin" / "offprompt")

    got = resolve(machine, prefix=str(prefix), scripts=str(prefix / "bin"))

    assert ServerCommand(uvx, ("offprompt", "serve")) == got


def test_a_uvx_run_with_a_custom_cache_is_recognized(machine: Machine, tmp_path: Path) -> None:
    """UV_CACHE_DIR elsewhere: the cache's own layout still tells."""
    prefix = tmp_path / "somewhere" / "archive-v0" / "x1"

    got = resolve(machine, prefix=str(prefix), scripts=str(prefix / "bin"))
    assert ServerCommand("uvx", ("offprompt", "serve")) == got


def test_this_test_run_resolves_to_a_real_program(machine: Machine) -> None:
    """Without overrides, the command names a file that exists (or this Python)."""
    got = resolve(machine)

    assert os.path.isabs(got.command)
    assert os.path.exists(got.command) or got.command == sys.executable


@pytest.mark.parametrize(
    ("text", "command", "args"),
    [
        ("uvx offprompt serve", "uvx", ("offprompt", "serve")),
        (
            "'/Applications/My Tools/offprompt' serve",
            "/Applications/My Tools/offprompt",
            ("serve",),
        ),
        ("/x/offprompt", "/x/offprompt", ()),
    ],
)
def test_command_override_is_split_like_a_shell(
    text: str, command: str, args: tuple[str, ...], machine: Machine
) -> None:
    """Quotes keep a path with spaces in one piece."""
    assert ServerCommand(command, args) == from_override(text, machine)


@pytest.mark.parametrize("text", ["", "   ", "'unclosed"])
def test_an_empty_or_unbalanced_override_is_refused(text: str, machine: Machine) -> None:
    """Nothing to run is an error, not an empty config entry."""
    with pytest.raises(ValueError):  # noqa: PT011 - the CLI turns any of these into a usage error
        from_override(text, machine)
