"""`init --mask` for Codex in a git project (issue 46): the denial it writes in the project's
`.codex/config.toml` is personal, so git is made to ignore it (the line in `.git/info/exclude`
init uses for Claude Code's settings.local.json), and `remove` gives the exclude file back."""

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND
from click.testing import Result

from offprompt.agents import gitignore

Run = Callable[..., Result]
GIT = shutil.which("git") or "/usr/bin/git"


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


def test_init_mask_leaves_no_codex_file_for_git_to_add(run: Run, repo: Path) -> None:
    """After a personal `init --mask` for Codex, `git status` and `git add -A` offer nothing
    (the profile is there, ignored), the line says so; `remove --mask` gives the exclude file
    back byte for byte."""
    exclude = repo / ".git" / "info" / "exclude"
    before = exclude.read_bytes()

    added = run("init", "--agent", "codex", "--mask", "--project", str(repo), "--command", COMMAND)

    assert 0 == added.exit_code, added.output
    assert (repo / ".codex" / "config.toml").exists()
    assert "" == git(repo, "status", "--porcelain")
    assert "" == git(repo, "add", "-A", "--dry-run")
    assert exclude.read_text().endswith(f"{gitignore.MARK}\n/.codex/config.toml\n")
    assert "codex: git now ignores" in added.stdout

    removed = run("remove", "--agent", "codex", "--mask", "--project", str(repo))

    assert 0 == removed.exit_code, removed.output
    assert not (repo / ".codex" / "config.toml").exists()
    assert before == exclude.read_bytes()


def test_a_tracked_codex_config_is_left_to_the_person(run: Run, repo: Path) -> None:
    """A `.codex/config.toml` the team commits: the denial goes in as before, no exclude line
    (git would not honour it), and the line says the change is personal: not to commit it."""
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").write_text('model = "o3"\n')
    git(repo, "add", ".codex/config.toml")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two")
    exclude = repo / ".git" / "info" / "exclude"
    before = exclude.read_bytes()

    added = run("init", "--agent", "codex", "--mask", "--project", str(repo), "--command", COMMAND)

    assert 0 == added.exit_code, added.output
    assert before == exclude.read_bytes()
    assert "codex: note: git tracks" in added.stdout
    assert "do not commit" in added.stdout
