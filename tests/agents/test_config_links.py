"""A project's config files are written by a walk of descriptors (disk.config): a link in the
project, at the file or at a folder on its way, is refused and the place it points to stays as it
was. A cloned project could hold `.mcp.json -> ~/.bashrc`; offprompt must not write there."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND, SERVER
from click.testing import Result

from offprompt.agents import Machine, get
from offprompt.agents.guard_install import install_guard

Run = Callable[..., Result]
MINE = b'{\n  "mine": true\n}\n'


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the project, where a planted link points."""
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")}


def test_a_project_config_linked_out_of_the_project_is_refused(
    machine: Machine, project: Path, outside: Path
) -> None:
    """`.mcp.json` a link to a file outside: init fails for it, the file it points to is as it
    was, and the link is still the same link."""
    target = outside / "bashrc.json"
    target.write_bytes(MINE)
    (project / ".mcp.json").symlink_to(target)

    change = get("claude-code").install("project", machine, project, SERVER)

    assert ("failed", MINE) == (change.outcome, target.read_bytes())
    assert "symlink" in change.detail
    assert target == (project / ".mcp.json").readlink()
    assert ["bashrc.json"] == sorted(p.name for p in outside.iterdir())


def test_a_project_config_folder_linked_out_of_the_project_is_refused(
    machine: Machine, project: Path, outside: Path
) -> None:
    """`.cursor/` a link to a folder outside: nothing is written into that folder."""
    (project / ".cursor").symlink_to(outside, target_is_directory=True)

    change = get("cursor").install("project", machine, project, SERVER)

    assert "failed" == change.outcome
    assert {} == _snapshot(outside)


def test_the_guard_is_not_written_through_a_linked_settings_file(
    machine: Machine, project: Path, outside: Path
) -> None:
    """`.claude/settings.json` (the guard's project file) a link out: refused, target kept."""
    (project / ".claude").mkdir()
    target = outside / "settings.json"
    target.write_bytes(MINE)
    (project / ".claude" / "settings.json").symlink_to(target)

    change = install_guard(get("claude-code"), "project", machine, project, SERVER)

    assert ("failed", MINE) == (change.outcome, target.read_bytes())


def test_remove_does_not_remove_through_a_link(
    machine: Machine, project: Path, outside: Path
) -> None:
    """A linked `.mcp.json` holding offprompt's entry: remove refuses it, the target keeps it."""
    target = outside / "mcp.json"
    data = json.dumps({"mcpServers": {"offprompt": {"command": "offprompt"}}}).encode()
    target.write_bytes(data)
    (project / ".mcp.json").symlink_to(target)

    change = get("claude-code").remove("project", machine, project)

    assert ("failed", data) == (change.outcome, target.read_bytes())


def test_the_mask_does_not_write_settings_local_through_a_link(
    run: Run, project: Path, outside: Path, fake_program: Callable[[str], Path]
) -> None:
    """`init --mask`: `.claude/settings.local.json` a link to a file outside the project is
    refused (init fails, says why) and the file it points to is untouched."""
    fake_program("bwrap")
    fake_program("socat")
    (project / ".claude").mkdir()
    target = outside / "settings.local.json"
    target.write_bytes(MINE)
    (project / ".claude" / "settings.local.json").symlink_to(target)

    result = run(
        "init", "--agent", "claude-code", "--mask", "--project", str(project),
        "--command", COMMAND,
    )  # fmt: skip

    assert MINE == target.read_bytes()
    assert 0 != result.exit_code
    assert "symlink" in result.stdout + result.stderr


def test_a_user_config_is_written_as_a_regular_file_where_its_link_leads(
    machine: Machine, home: Path
) -> None:
    """A user's own dotfile link (not a project's) is still followed once, to its file, which
    gets the entry; the link stays a link (a dotfile manager's set-up)."""
    target = home / "dotfiles" / "claude.json"
    target.parent.mkdir()
    target.write_text("{}\n")
    (home / ".claude.json").symlink_to(target)

    change = get("claude-code").install("user", machine, None, SERVER)

    assert change.outcome == "added", change.detail
    assert (home / ".claude.json").is_symlink()
    assert "offprompt" in json.loads(target.read_text())["mcpServers"]
