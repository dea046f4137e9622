"""`offprompt init` by default: each agent's personal scope for the project, so nothing git would
add names a path of this machine (real git, and Claude Code's own `claude mcp get` as the oracle
that it reads our entry)."""

import json
import os
import shutil
import subprocess
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND, snapshot
from click.testing import Result
from helpers import tool_or_skip

from offprompt.agents import NAMES, files, gitignore
from offprompt.agents.claude_code import project_key

Run = Callable[..., Result]
ALL = [arg for name in NAMES for arg in ("--agent", name)]
GIT = shutil.which("git") or "/usr/bin/git"
# A ~/.claude.json as Claude Code writes it (two-space JSON), with another project in it.
CLAUDE_STATE = {
    "numStartups": 7,
    "projects": {
        "/elsewhere/app": {
            "allowedTools": [],
            "mcpServers": {"db": {"type": "stdio", "command": "db-mcp", "args": []}},
            "hasTrustDialogAccepted": True,
        }
    },
    "userID": "abc",
}


def git(folder: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(
        [GIT, "-C", str(folder), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**env, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"},
        timeout=30,
    )
    return done.stdout


@pytest.fixture
def repo(project: Path, no_agent_env: Path) -> Path:
    """The project as a git repository with one commit, and git on the test's PATH."""
    (no_agent_env / "git").symlink_to(GIT)
    git(project, "init", "-q")
    (project / "README").write_text("hello\n")
    git(project, "add", "README")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    return project


def addable(folder: Path) -> list[str]:
    """What `git add -A` would add (run for real, dry)."""
    out = git(folder, "add", "-A", "--dry-run")
    return [line.removeprefix("add '").removesuffix("'") for line in out.splitlines()]


def test_nothing_git_would_add_names_a_path_of_this_machine(
    run: Run, repo: Path, home: Path
) -> None:
    """Every agent, default scope, in a git project: the files git would add (if any) hold no
    path of this machine; Claude Code's settings.local.json exists but git ignores it."""
    result = run("init", *ALL, "--project", str(repo), "--command", COMMAND)

    assert 0 == result.exit_code, result.output
    assert (repo / ".claude" / "settings.local.json").exists()
    for name in addable(repo):
        text = (repo / name).read_text()
        assert "/opt/offprompt" not in text, name
        assert str(home) not in text, name
        assert str(repo) not in text, name
    assert [] == addable(repo)
    config = json.loads((home / ".claude.json").read_text())
    entry = config["projects"][str(repo)]["mcpServers"]["offprompt"]
    assert {"type": "stdio", "command": "/opt/offprompt/bin/offprompt", "args": ["serve"]} == entry


def test_agents_without_a_personal_scope_say_they_got_the_user_config(
    run: Run, project: Path, home: Path
) -> None:
    """Codex has no personal project scope: its user config, and the line says so."""
    result = run("init", "--agent", "codex", "--project", str(project), "--command", COMMAND)

    assert 0 == result.exit_code, result.output
    assert (
        "codex: added offprompt to ~/.codex/config.toml (Codex has no personal project scope:"
        " this is your user config)"
    ) == result.stdout.splitlines()[0]
    assert (home / ".codex" / "config.toml").exists()
    assert [] == list(project.iterdir())


def test_init_says_git_now_ignores_settings_local_and_remove_gives_exclude_back(
    run: Run, repo: Path, home: Path
) -> None:
    """The exclude line is said, and remove takes it out: .git/info/exclude and ~/.claude.json
    (with another project in it) come back byte for byte, and the project as it was."""
    (home / ".claude.json").write_text(json.dumps(CLAUDE_STATE, indent=2))
    exclude = repo / ".git" / "info" / "exclude"
    before = snapshot(repo, home)
    exclude_before = exclude.read_bytes()

    added = run("init", "--agent", "claude-code", "--project", str(repo), "--command", COMMAND)
    lines = added.stdout.splitlines()
    middle = exclude.read_text()
    removed = run("remove", "--agent", "claude-code", "--project", str(repo))

    assert (0, 0) == (added.exit_code, removed.exit_code), added.output + removed.output
    assert (
        f"claude-code: git now ignores {repo}/.claude/settings.local.json (a line in" in (lines[1])
    )
    assert middle.endswith(f"{gitignore.MARK}\n/.claude/settings.local.json\n")
    assert exclude_before == exclude.read_bytes()
    assert before == snapshot(repo, home)
    assert [] == addable(repo)


def test_remove_gives_back_an_exclude_file_without_a_final_line_break(run: Run, repo: Path) -> None:
    """The line break init had to add goes too."""
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_bytes(b"# mine\n*.log")

    run("init", "--agent", "claude-code", "--project", str(repo), "--command", COMMAND)
    assert "*.log\n" in exclude.read_text()
    run("remove", "--agent", "claude-code", "--project", str(repo))

    assert b"# mine\n*.log" == exclude.read_bytes()


def test_a_settings_local_the_project_ignores_already_gets_no_exclude_line(
    run: Run, repo: Path
) -> None:
    """The project's .gitignore already names it: info/exclude stays as it was."""
    (repo / ".gitignore").write_text(".claude/settings.local.json\n")
    exclude = repo / ".git" / "info" / "exclude"
    before = exclude.read_bytes()

    result = run("init", "--agent", "claude-code", "--project", str(repo), "--command", COMMAND)

    assert 0 == result.exit_code, result.output
    assert before == exclude.read_bytes()
    assert "git now ignores" not in result.stdout
    assert [".gitignore"] == addable(repo)


def test_a_tracked_settings_local_is_refused_and_left_alone(
    run: Run, repo: Path, home: Path
) -> None:
    """git tracks it: writing this machine's paths there would be committed, so the guard is
    refused with the way out, and the file is not touched."""
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text("{}\n")
    git(repo, "add", ".claude/settings.local.json")
    before = (repo / ".claude" / "settings.local.json").read_bytes()

    result = run("init", "--agent", "claude-code", "--project", str(repo), "--command", COMMAND)

    assert 1 == result.exit_code
    assert (
        f"claude-code: failed: git tracks {repo}/.claude/settings.local.json, so what offprompt"
        " writes there (this machine's paths) would be committed; take it out of git (`git rm"
        " --cached .claude/settings.local.json`)"
    ) in result.stdout
    assert before == (repo / ".claude" / "settings.local.json").read_bytes()


def test_a_subfolder_and_a_worktree_use_the_main_repositorys_entry(repo: Path) -> None:
    """Claude Code keys a project by its repository's main working tree (observed with
    `claude mcp add -s local` from a subfolder and from a linked worktree)."""
    (repo / "sub").mkdir()
    worktree = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", str(worktree))

    assert (str(repo), str(repo)) == (project_key(repo / "sub"), project_key(worktree))


def test_a_folder_outside_git_is_its_own_real_path(tmp_path: Path) -> None:
    """No repository: the folder's real path (a symlink to it is the same project)."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")

    assert str(tmp_path / "real") == project_key(tmp_path / "link")


def test_a_held_claude_json_lock_stops_the_edit_and_changes_nothing(
    run: Run, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code saving its state (its lock folder is fresh): a failed line, nothing lost."""
    monkeypatch.setattr(files, "_LOCK_WAIT_S", 0.2)
    state = json.dumps(CLAUDE_STATE, indent=2)
    (home / ".claude.json").write_text(state)
    (home / ".claude.json.lock").mkdir()

    result = run(
        "init", "--agent", "claude-code", "--project", str(project), "--command", COMMAND,
        "--no-guard",
    )  # fmt: skip

    assert 1 == result.exit_code
    assert "claude-code: failed: ~/.claude.json is being saved by another program" in (
        result.stdout
    )
    assert state == (home / ".claude.json").read_text()


def test_a_stale_claude_json_lock_is_taken_over(run: Run, project: Path, home: Path) -> None:
    """A lock left by a Claude Code that died (older than 10 s) does not block init, and init
    leaves no lock behind."""
    lock = home / ".claude.json.lock"
    lock.mkdir()
    os.utime(lock, (1, 1))

    result = run(
        "init", "--agent", "claude-code", "--project", str(project), "--command", COMMAND,
        "--no-guard",
    )  # fmt: skip

    assert 0 == result.exit_code, result.output
    assert not lock.exists()
    assert 0o600 == (home / ".claude.json").stat().st_mode & 0o777


def test_claude_config_dir_moves_the_state_file(
    run: Run, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$CLAUDE_CONFIG_DIR holds .claude.json then; HOME's is not touched."""
    custom = home / "elsewhere"
    custom.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(custom))

    result = run("init", "--agent", "claude-code", "--project", str(project), "--command", COMMAND)

    assert 0 == result.exit_code, result.output
    assert not (home / ".claude.json").exists()
    config = json.loads((custom / ".claude.json").read_text())
    assert "offprompt" in config["projects"][str(project)]["mcpServers"]


@pytest.mark.real_hosts
def test_claude_code_reads_the_entry_init_wrote(run: Run, repo: Path, home: Path) -> None:
    """Claude Code 2.1.328's `claude mcp get offprompt`, in the project, finds our entry in its
    local scope with the command init wrote."""
    claude = tool_or_skip("claude")
    result = run("init", "--agent", "claude-code", "--project", str(repo), "--command", COMMAND)
    assert 0 == result.exit_code, result.output
    env = {"HOME": str(home), "PATH": f"{Path(GIT).parent}:/usr/bin:/bin", "NO_COLOR": "1"}

    got = subprocess.run(
        [claude, "mcp", "get", "offprompt"],
        cwd=repo / ".claude",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert "Scope: Local config" in got.stdout, got.stdout + got.stderr
    assert "Command: /opt/offprompt/bin/offprompt" in got.stdout
    assert "Args: serve" in got.stdout


# -- --shared: the team's files, with a command that runs on every machine --------------------


@pytest.mark.parametrize(
    ("command", "why"),
    [
        (
            "/opt/offprompt/bin/offprompt serve",
            "its program '/opt/offprompt/bin/offprompt' is a path",
        ),
        ("./venv/bin/offprompt serve", "its program './venv/bin/offprompt' is a path"),
        ("uvx --from /work/offprompt offprompt serve", "'/work/offprompt' names a path of this"),
        ("uvx --from=~/src/offprompt offprompt serve", "'--from=~/src/offprompt' names a path"),
        ("nowhere-to-be-found serve", "its program 'nowhere-to-be-found' is not on PATH here"),
    ],
)
def test_shared_refuses_a_command_naming_this_machine(
    run: Run, project: Path, command: str, why: str, fake_program: Callable[[str], Path]
) -> None:
    """Exit 2, a sentence saying why and what to give instead, and nothing written."""
    fake_program("uvx")

    result = run(
        "init", "--agent", "claude-code", "--shared", "--project", str(project), "--command",
        command,
    )  # fmt: skip

    assert 2 == result.exit_code
    assert why in result.stderr
    assert "--command 'offprompt serve'" in result.stderr
    assert "'uvx --from <where your team gets offprompt> offprompt serve'" in " ".join(
        result.stderr.split()
    )
    assert [] == list(project.iterdir())


def test_shared_without_a_command_refuses_an_install_not_on_path(run: Run, project: Path) -> None:
    """This test's offprompt is not on the (fake) PATH: --shared has nothing portable to
    write, says so with exit 2, and writes nothing."""
    result = run("init", "--agent", "cursor", "--shared", "--project", str(project))

    assert 2 == result.exit_code
    assert "--shared writes files your team commits, and this offprompt starts as" in (
        result.stderr
    )
    assert [] == list(project.iterdir())


def test_shared_derives_the_bare_name_when_path_finds_this_install(
    run: Run, project: Path, no_agent_env: Path
) -> None:
    """`offprompt` on PATH is this very install: the shared files say `offprompt serve`, and
    the shared hook runs `offprompt guard`."""
    mine = shutil.which("offprompt", path=sysconfig.get_path("scripts"))
    assert mine is not None
    (no_agent_env / "offprompt").symlink_to(mine)

    result = run("init", "--agent", "claude-code", "--shared", "--project", str(project))

    assert 0 == result.exit_code, result.output
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["offprompt"]
    assert ("offprompt", ["serve"]) == (entry["command"], entry["args"])
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    assert "offprompt guard" in json.dumps(hooks)
    assert str(no_agent_env) not in (project / ".claude" / "settings.json").read_text()


def test_shared_and_global_do_not_go_together(run: Run) -> None:
    """A usage error, exit 2."""
    result = run("init", "--shared", "--global", "--agent", "codex")

    assert 2 == result.exit_code
    assert "--global and --shared do not go together." in result.stderr


def test_a_project_claude_code_knows_keeps_its_entry_byte_for_byte(
    run: Run, project: Path, home: Path
) -> None:
    """Claude Code's own entry for the project (with its empty `mcpServers`): init adds ours in
    it, remove gives the file back to the byte, the empty object included."""
    state = {
        "numStartups": 1,
        "projects": {
            str(project): {"allowedTools": [], "mcpServers": {}, "hasTrustDialogAccepted": False}
        },
        "userID": "x",
    }
    text = json.dumps(state, indent=2)
    (home / ".claude.json").write_text(text)

    added = run("init", "--agent", "claude-code", "--project", str(project), "--command", COMMAND)
    middle = json.loads((home / ".claude.json").read_text())
    removed = run("remove", "--agent", "claude-code", "--project", str(project))

    assert (0, 0) == (added.exit_code, removed.exit_code), added.output + removed.output
    assert ["offprompt"] == list(middle["projects"][str(project)]["mcpServers"])
    assert middle["projects"][str(project)]["hasTrustDialogAccepted"] is False
    assert text == (home / ".claude.json").read_text()


def test_init_points_out_a_shared_file_an_older_init_left_naming_this_machine(
    run: Run, project: Path
) -> None:
    """A .mcp.json with this machine's path (what init wrote before): said, with the way out;
    left as it is."""
    old = '{"mcpServers": {"offprompt": {"command": "/opt/offprompt/bin/offprompt"}}}\n'
    (project / ".mcp.json").write_text(old)

    result = run("init", "--agent", "claude-code", "--project", str(project), "--command", COMMAND)

    assert 0 == result.exit_code, result.output
    assert (
        f"claude-code: note: {project}/.mcp.json, a file of the project that git may commit,"
        " still declares offprompt as `/opt/offprompt/bin/offprompt`, which names this machine;"
        " `offprompt remove --shared` takes it out"
    ) in result.stdout.splitlines()
    assert old == (project / ".mcp.json").read_text()


def test_a_portable_shared_file_is_not_pointed_out(
    run: Run, project: Path, fake_program: Callable[[str], Path]
) -> None:
    """The team's `uvx offprompt serve` is fine: no note."""
    fake_program("uvx")
    shared = '{"mcpServers": {"offprompt": {"command": "uvx", "args": ["offprompt", "serve"]}}}'
    (project / ".mcp.json").write_text(shared)

    result = run("init", "--agent", "claude-code", "--project", str(project), "--command", COMMAND)

    assert 0 == result.exit_code, result.output
    assert "note:" not in result.stdout


def test_an_empty_git_folder_above_a_project_outside_git_is_no_repository(
    run: Run, tmp_path: Path, no_agent_env: Path
) -> None:
    """An empty `.git` folder above the project (the mount point a host's sandbox leaves in
    /tmp) is not a repository: git says so, and init writes the personal files as in any
    folder outside git."""
    (no_agent_env / "git").symlink_to(GIT)
    (tmp_path / "mount" / ".git").mkdir(parents=True)
    project = tmp_path / "mount" / "app"
    project.mkdir()

    done = run("init", "--agent", "claude-code", "--project", str(project), "--command", COMMAND)

    assert 0 == done.exit_code, done.output
    assert (project / ".claude" / "settings.local.json").exists()
