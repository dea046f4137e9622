"""Which command `init` writes: this offprompt's absolute path, uvx for uvx runs, or --command."""

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from offprompt.agents import Machine, ServerCommand
from offprompt.agents.command import (
    fetched_each_run,
    from_override,
    not_portable,
    portable,
    resolve,
)


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


def uvx_env(home: Path, direct_url: dict[str, object] | None) -> Path:
    """A uvx environment as uv 0.13 lays it out in its cache (archive-v0/<hash>), offprompt's
    dist-info holding the PEP 610 record uv wrote (None: installed from the index, no record)."""
    prefix = home / ".cache" / "uv" / "archive-v0" / "XAgYzyvAUbgXoYS_"
    info = prefix / "lib" / "python3.11" / "site-packages" / "offprompt-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: offprompt\nVersion: 0.1.0\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url, separators=(",", ":")))
    executable(prefix / "bin" / "offprompt")
    return prefix


@pytest.mark.parametrize(
    ("record", "source"),
    [
        # What `uvx --from /work/wt/h1 offprompt` left (observed with uv 0.13.9 here).
        ({"url": "file:///work/wt/h1", "dir_info": {}}, "/work/wt/h1"),
        ({"url": "file:///src/my%20tools/offprompt", "dir_info": {}}, "/src/my tools/offprompt"),
        (
            {
                "url": "https://github.com/o/offprompt",
                "vcs_info": {"vcs": "git", "requested_revision": "v1", "commit_id": "ab12"},
            },
            "git+https://github.com/o/offprompt@v1",
        ),
        (
            {"url": "https://github.com/o/offprompt", "vcs_info": {"vcs": "git", "commit_id": "a"}},
            "git+https://github.com/o/offprompt",
        ),
        (
            {"url": "file:///dl/offprompt-0.1.0-py3-none-any.whl", "archive_info": {}},
            "/dl/offprompt-0.1.0-py3-none-any.whl",
        ),
        (
            {"url": "https://x.test/o.tar.gz", "archive_info": {}, "subdirectory": "py"},
            "https://x.test/o.tar.gz#subdirectory=py",
        ),
    ],
)
def test_a_uvx_from_run_keeps_its_source(
    record: dict[str, object], source: str, machine: Machine, home: Path
) -> None:
    """`uvx --from SOURCE offprompt init` writes `uvx --from SOURCE offprompt serve`, SOURCE read
    back from the install's direct_url.json, so the server (and the guard) start again."""
    prefix = uvx_env(home, record)

    got = resolve(machine, prefix=str(prefix), scripts=str(prefix / "bin"))

    assert ServerCommand("uvx", ("--from", source, "offprompt", "serve")) == got


def test_a_uvx_run_from_the_index_writes_plain_uvx(machine: Machine, home: Path) -> None:
    """No direct_url.json (the package index): `uvx offprompt serve` finds it again."""
    prefix = uvx_env(home, None)

    got = resolve(machine, prefix=str(prefix), scripts=str(prefix / "bin"))

    assert ServerCommand("uvx", ("offprompt", "serve")) == got


def test_shared_keeps_a_portable_uvx_source_and_refuses_a_local_one(
    machine: Machine, home: Path, fake_program: Callable[[str], Path]
) -> None:
    """A git URL works on every machine; a folder of this one does not (None: --command it)."""
    fake_program("uvx")
    git = {"url": "https://github.com/o/offprompt", "vcs_info": {"vcs": "git"}}
    remote = uvx_env(home / "a", git)
    local = uvx_env(home / "b", {"url": "file:///work/wt/h1", "dir_info": {}})
    machine = Machine(home=home, environ=dict(os.environ), platform="linux")

    assert ServerCommand(
        "uvx", ("--from", "git+https://github.com/o/offprompt", "offprompt", "serve")
    ) == portable(machine, prefix=str(remote), scripts=str(remote / "bin"))
    assert portable(machine, prefix=str(local), scripts=str(local / "bin")) is None


@pytest.mark.parametrize(
    ("words", "portable_"),
    [
        (("offprompt", "serve"), True),
        (("uvx", "offprompt", "serve"), True),
        (("uvx", "--from", "git+https://github.com/o/offprompt", "offprompt", "serve"), True),
        (("uvx", "--from", ".", "offprompt", "serve"), True),
        (("/usr/bin/offprompt", "serve"), False),
        (("uvx", "--from", "/home/me/src", "offprompt", "serve"), False),
        (("uvx", "--from", "C:\\src\\offprompt", "offprompt", "serve"), False),
        (("uvx", "--from", "file:///src/offprompt", "offprompt", "serve"), False),
        (("uvx", "--from=~/src", "offprompt", "serve"), False),
    ],
)
def test_not_portable_names_a_path_of_this_machine(
    words: tuple[str, ...], portable_: bool, machine: Machine, fake_program: Callable[[str], Path]
) -> None:
    """Bare program names on PATH and URLs pass; absolute, `~` and file: words do not."""
    fake_program("uvx")
    fake_program("offprompt")
    machine = Machine(home=machine.home, environ=dict(os.environ), platform="linux")

    why = not_portable(ServerCommand(words[0], words[1:]), machine)

    assert portable_ == (why is None), why


SHA = "0123456789abcdef0123456789abcdef01234567"
GIT = "git+https://h/o/offprompt"
RUN = ("offprompt", "serve")
SUB = f"{GIT}@v1#subdirectory=x"


@pytest.mark.parametrize(
    ("argv", "fetched"),
    [
        (["uvx", "--from", GIT, *RUN], GIT),
        (["/usr/bin/uvx", f"--from={GIT}@main", *RUN], f"{GIT}@main"),
        (["uv", "tool", "run", "--from", SUB, *RUN], SUB),
        (["uvx", "--from", f"{GIT}@{SHA}", *RUN], None),
        (["uvx", "--from", f"{GIT}@{SHA}#subdirectory=x", *RUN], None),
        (["uvx", "--from", "/src/offprompt", *RUN], None),
        (["uvx", *RUN], None),
        (["offprompt", "serve"], None),
        (["pipx", "run", "--spec", GIT, *RUN], None),
    ],
)  # fmt: skip
def test_a_git_source_not_pinned_to_a_commit_is_fetched_each_run(
    argv: list[str], fetched: str | None
) -> None:
    """uvx (or `uv tool run`) refetches a git branch or tag every start; a commit, a folder, or
    another program does not."""
    assert fetched == fetched_each_run(ServerCommand(argv[0], tuple(argv[1:])))
