"""`offprompt init`, `remove` and `agents` as a person runs them: lines printed, exit codes."""

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_helpers import COMMAND, PORTABLE, shared, snapshot
from click.testing import Result

from offprompt.agents import NAMES

Run = Callable[..., Result]
pytestmark = pytest.mark.usefixtures("portable")
ALL = [arg for name in NAMES for arg in ("--agent", name)]
# Windsurf has no project config, so naming it for the project scope is an error.
IN_PROJECT = [arg for name in NAMES if name != "windsurf" for arg in ("--agent", name)]


def test_init_declares_every_agent_found(
    run: Run, project: Path, home: Path, fake_program: Callable[[str], Path]
) -> None:
    """Found = program on PATH (claude) or settings folder (~/.gemini); others are left alone."""
    fake_program("claude")
    (home / ".gemini").mkdir()

    result = run("init", *shared(project))

    assert (0, "") == (result.exit_code, result.stderr)
    assert [
        f"claude-code: added offprompt to {project}/.mcp.json (Claude Code asks you to approve"
        " it the next time it starts in this project)",
        f"claude-code: added the guard to {project}/.claude/settings.json",
        f"gemini: added offprompt to {project}/.gemini/settings.json",
        f"gemini: added the guard to {project}/.gemini/settings.json (Gemini CLI runs a"
        " project's hooks only once you trust the folder)",
        "note: teammates without offprompt: the shared hook blocks only calls that name a .env"
        " file, saying to install offprompt; every other call runs",
    ] == result.stdout.splitlines()
    assert {".mcp.json", ".claude", ".gemini"} == {p.name for p in project.iterdir()}


def test_init_uses_the_current_folder_by_default(
    run: Run, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run in the project, no --project needed."""
    monkeypatch.chdir(project)

    result = run("init", "--agent", "cursor", "--shared", "--command", PORTABLE)

    assert 0 == result.exit_code
    assert (project / ".cursor" / "mcp.json").exists()


def test_init_twice_changes_nothing(run: Run, project: Path, home: Path) -> None:
    """Every config reads "already there" and no file is rewritten."""
    assert (
        0
        == run(
            "init", *IN_PROJECT, "--shared", "--project", str(project), "--command", PORTABLE
        ).exit_code
    )
    assert 0 == run("init", *ALL, "--global", "--command", COMMAND).exit_code
    before = snapshot(project, home)
    mtimes = {p: p.stat().st_mtime_ns for p in [*project.rglob("*"), *home.rglob("*")]}

    again = run("init", *IN_PROJECT, *shared(project))
    again_global = run("init", *ALL, "--global", "--command", COMMAND)

    assert before == snapshot(project, home)
    assert mtimes == {p: p.stat().st_mtime_ns for p in [*project.rglob("*"), *home.rglob("*")]}
    lines = again.stdout.splitlines() + again_global.stdout.splitlines()
    assert (len(NAMES) * 2 - 1) * 2 == len(lines)
    assert all("already there in" in line or "not guarded" in line for line in lines), lines
    # Guarded: every agent but Zed, in both scopes, except Windsurf, which has no project one.
    assert (len(NAMES) - 1) * 2 - 1 == sum("guard already there in" in line for line in lines)


def test_remove_after_init_restores_project_and_home(
    run: Run, project: Path, home: Path, tmp_path: Path
) -> None:
    """Configs with other servers and comments, new configs and new folders: all as before."""
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text('{\n  // mine\n  "servers": {"a": {}}\n}\n')
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('# mine\nmodel = "o3"\n')
    (home / ".claude.json").write_text('{"numStartups": 3}')
    before = snapshot(project, home)

    run("init", *IN_PROJECT, *shared(project))
    run("init", *ALL, "--global", "--command", COMMAND)
    removed = run("remove", *ALL, "--shared", "--project", str(project))
    removed_global = run("remove", *ALL, "--global")

    assert (0, 0) == (removed.exit_code, removed_global.exit_code)
    after = snapshot(project, home)
    # Folders `init --global` made in HOME stay (~/.cursor…): they are where agents live.
    created = {k for k in after if k not in before}
    assert all(after[k][0] == "dir" for k in created), created
    assert before == {k: v for k, v in after.items() if k not in created}


def test_init_without_any_agent_found_says_how_to_name_one(run: Run, project: Path) -> None:
    """Nothing detected is an error with the fix in it, and nothing is written."""
    result = run("init", "--project", str(project))

    assert 1 == result.exit_code
    assert result.stderr.startswith("offprompt: no agent was found on this machine")
    assert "--agent NAME (claude-code, codex, cursor, vscode, gemini, windsurf, zed)" in (
        result.stderr
    )
    assert [] == list(project.iterdir())


def test_windsurf_found_in_a_project_is_skipped_with_the_way_to_add_it(
    run: Run, project: Path, home: Path
) -> None:
    """Windsurf has only a user config: a skip line (not a failure) that names --global."""
    (home / ".codeium" / "windsurf").mkdir(parents=True)

    result = run("init", *shared(project))

    assert 0 == result.exit_code
    assert [
        "windsurf: skipped: Windsurf has no project config; `offprompt init --global --agent"
        " windsurf` adds offprompt to its user config"
    ] == result.stdout.splitlines()


def test_a_config_that_cannot_be_changed_fails_that_agent_only(run: Run, project: Path) -> None:
    """One broken config: its line says why, the others are done, and the exit code is 1."""
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text("{ not json")

    result = run(
        "init", "--agent", "cursor", "--agent", "claude-code", "--shared", "--project",
        str(project), "--command", PORTABLE,
    )  # fmt: skip

    assert 1 == result.exit_code
    lines = result.stdout.splitlines()
    assert lines[0].startswith("claude-code: added offprompt to")
    assert lines[1].startswith("claude-code: added the guard to")
    assert lines[2].startswith(f"cursor: failed: {project}/.cursor/mcp.json is not valid JSON")
    assert "{ not json" == (project / ".cursor" / "mcp.json").read_text()


def test_a_half_done_init_says_what_it_changed_and_what_not(
    run: Run, project: Path, home: Path
) -> None:
    """The server entry was added, then the guard's file could not be read: the line says which
    file was left as it was and which this run did change, never "Nothing was changed"."""
    (home / ".codex").mkdir()
    (home / ".codex" / "hooks.json").write_text("{ not json")

    result = run("init", "--agent", "codex", "--project", str(project), "--command", COMMAND)

    assert 1 == result.exit_code
    added, failed = result.stdout.splitlines()
    assert added.startswith("codex: added offprompt to ~/.codex/config.toml")
    assert failed.startswith("codex: failed: ~/.codex/hooks.json is not valid JSON")
    assert "Nothing was changed" not in result.stdout
    assert "~/.codex/hooks.json was not changed" in failed
    assert "added offprompt to ~/.codex/config.toml" in failed
    assert "{ not json" == (home / ".codex" / "hooks.json").read_text()


def test_a_config_that_fails_first_still_says_nothing_was_changed(
    run: Run, project: Path, home: Path
) -> None:
    """When the first step fails, nothing was changed, and the line still says so."""
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text("[not toml")

    result = run("init", "--agent", "codex", "--project", str(project), "--command", COMMAND)

    assert 1 == result.exit_code
    assert result.stdout.splitlines()[0].endswith("Nothing was changed.")


def test_init_in_the_home_folder_is_refused(
    run: Run, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$HOME is not a project: say so and point to --project and --global."""
    monkeypatch.chdir(home)

    result = run("init", "--agent", "cursor")

    assert 1 == result.exit_code
    assert f"offprompt: {home.resolve()} is your home folder, not a project." in result.stderr
    assert not (home / ".cursor").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["init", "--agent", "emacs"], "'emacs' is not one of 'claude-code', 'codex'"),
        (["init", "--global", "--project", "."], "--global and --project do not go together"),
        (["remove", "--global", "--project", "."], "--global and --project do not go together"),
        (["init", "--agent", "cursor", "--command", "  "], "--command is empty"),
        (["init", "--project", "/no/such/folder"], "does not exist"),
        (["keys", "a", "b"], "unexpected extra argument"),
    ],
)
def test_wrong_usage_exits_2(args: list[str], says: str, run: Run) -> None:
    """Usage mistakes are exit 2 with click's message."""
    result = run(*args)

    assert 2 == result.exit_code
    assert says in result.stderr


def test_init_writes_the_resolved_command_by_default(run: Run, project: Path, home: Path) -> None:
    """Without --command the entry runs an existing program (this test's offprompt)."""
    result = run("init", "--agent", "claude-code", "--project", str(project))

    config = json.loads((home / ".claude.json").read_text())
    entry = config["projects"][str(project)]["mcpServers"]["offprompt"]
    assert 0 == result.exit_code
    assert os.path.isabs(entry["command"])
    assert entry["args"][-1] == "serve"


def test_init_global_writes_user_configs(run: Run, home: Path, project: Path) -> None:
    """--global: ~/.claude.json and friends, nothing in the project."""
    result = run(
        "init", "--global", "--agent", "claude-code", "--agent", "codex", "--command", COMMAND
    )

    assert [
        "claude-code: added offprompt to ~/.claude.json",
        "claude-code: added the guard to ~/.claude/settings.json",
        "codex: added offprompt to ~/.codex/config.toml",
        "codex: added the guard to ~/.codex/hooks.json (Codex runs it once you trust it in /hooks)",
    ] == result.stdout.splitlines()
    assert (home / ".claude.json").exists()
    assert [] == list(project.iterdir())


def test_remove_reports_found_agents_and_named_ones(
    run: Run, project: Path, home: Path, fake_program: Callable[[str], Path]
) -> None:
    """Lines for what was removed, for found agents, and for agents named; silence otherwise."""
    fake_program("codex")
    run("init", "--agent", "cursor", *shared(project))

    result = run("remove", "--shared", "--project", str(project))

    assert 0 == result.exit_code
    assert [
        f"codex: no config at {project}/.codex/config.toml",
        f"cursor: removed offprompt from {project}/.cursor/mcp.json",
        f"cursor: removed the guard from {project}/.cursor/hooks.json",
    ] == result.stdout.splitlines()


def test_remove_with_nothing_declared_says_so(run: Run, project: Path) -> None:
    """No agent found and nothing declared: one sentence, exit 0."""
    result = run("remove", "--shared", "--project", str(project))

    assert (
        0,
        f"offprompt is not declared in the shared configs of {project}; nothing to remove.\n",
    ) == (
        result.exit_code,
        result.stdout,
    )


@contextlib.contextmanager
def tmpfs(folder: Path) -> Iterator[Callable[..., None]]:
    """A tiny tmpfs mounted on `folder` (64 KiB); yields a function that remounts it read-only.

    Skips where mounting is not allowed (needs root and mount rights).
    """
    mount = shutil.which("mount", path="/usr/bin:/bin:/usr/sbin:/sbin")
    umount = shutil.which("umount", path="/usr/bin:/bin:/usr/sbin:/sbin")
    if mount is None or umount is None:
        pytest.skip("mount is not installed")
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root and mount rights)")

    def read_only() -> None:
        subprocess.run([mount, "-o", "remount,ro", str(folder)], check=True)

    try:
        yield read_only
    finally:
        subprocess.run([umount, str(folder)], check=False)


def test_read_only_file_system_fails_cleanly(run: Run, project: Path) -> None:
    """A config on a read-only file system: a failed line with the reason, file unchanged."""
    folder = project / ".cursor"
    with tmpfs(folder) as read_only:
        (folder / "mcp.json").write_text('{"mcpServers": {}}\n')
        read_only()
        result = run("init", "--agent", "cursor", *shared(project))
        text = (folder / "mcp.json").read_text()

    assert 1 == result.exit_code
    assert "cursor: failed: Could not write" in result.stdout
    assert "the file system is read-only" in result.stdout
    assert '{"mcpServers": {}}\n' == text


def test_a_full_disk_leaves_the_config_as_it_was(run: Run, project: Path) -> None:
    """ENOSPC mid-write: the old config stays whole and no temporary file is left."""
    folder = project / ".cursor"
    with tmpfs(folder):
        (folder / "mcp.json").write_text('{"mcpServers": {}}\n')
        with contextlib.suppress(OSError), (folder / "filler").open("wb") as filler:
            while True:
                filler.write(b"x" * 512)
                filler.flush()
        result = run("init", "--agent", "cursor", *shared(project))
        names = sorted(os.listdir(folder))
        text = (folder / "mcp.json").read_text()

    assert 1 == result.exit_code
    assert "the disk is full" in result.stdout
    assert ["filler", "mcp.json"] == names
    assert '{"mcpServers": {}}\n' == text


def test_naming_an_agent_without_a_config_for_that_scope_exits_1(run: Run, project: Path) -> None:
    """`--agent windsurf` without --global writes nothing: the line says why, and exit is 1."""
    result = run(
        "init", "--agent", "windsurf", "--shared", "--project", str(project), "--command", PORTABLE
    )

    assert 1 == result.exit_code
    assert result.stdout.startswith("windsurf: skipped: Windsurf has no project config")
    assert [] == list(project.iterdir())
