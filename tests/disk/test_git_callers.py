"""Each caller of the one git runner keeps its own answer when git gives none: the words and
outcomes it had when it ran git itself (a missing git, a git that hangs, a git that fails)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from offprompt.agents import gitignore
from offprompt.errors import ConfigError
from offprompt.guard import disk as guard_disk
from offprompt.sinks import git as sinks_git
from offprompt.sinks.destinations import linked

REAL_GIT = shutil.which("git") or shutil.which("git", path="/usr/local/bin:/usr/bin:/bin")
pytestmark = pytest.mark.skipif(REAL_GIT is None, reason="git is not installed")
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def fake_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    """A `git` shell script with `body`, first on PATH (the system's tools after it)."""
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    path = folder / "git"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(folder), SYSTEM_PATH]))
    return path


def no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    assert REAL_GIT is not None
    subprocess.run([REAL_GIT, "init", "-q"], cwd=repo, check=True)
    return repo


def test_sinks_without_git_say_not_in_a_repository(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No git: not in a repository, not tracked, and no committed example."""
    no_git(tmp_path, monkeypatch)

    status = sinks_git.status(repo / ".env")

    assert sinks_git.GitStatus(in_git_repo=False, tracked=False, ignored=False) == status
    assert sinks_git.committed(repo / ".env.example", 1000) is None


def test_sinks_with_a_hung_git_cannot_tell(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git that does not answer in time: GitUnanswered in the sinks' words, never "not
    tracked"."""
    fake_git(tmp_path, monkeypatch, "exec sleep 60")
    monkeypatch.setattr(sinks_git, "TIMEOUT_SECONDS", 0.3)

    with pytest.raises(sinks_git.GitUnanswered, match=r"^git took longer than 0\.3 s$"):
        sinks_git.tracked(repo / ".env")


def test_sinks_with_a_git_that_cannot_start_say_why(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git the system cannot start: GitUnanswered with the system's reason."""
    broken = fake_git(tmp_path, monkeypatch, "")
    broken.write_bytes(b"\x00\x01 not a program")

    with pytest.raises(sinks_git.GitUnanswered, match=r"^git could not run: Exec format error$"):
        sinks_git.status(repo / ".env")


def test_the_github_link_without_git_says_git_is_not_installed(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No git: OSError "git is not installed", as before the runner."""
    no_git(tmp_path, monkeypatch)

    with pytest.raises(OSError, match=r"^git is not installed$"):
        linked.first_remote(repo)


def test_the_github_link_with_a_hung_git_says_what_subprocess_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git config that hangs past 5 s: the words subprocess.TimeoutExpired gave for the same
    command, byte for byte (GitHub's NotLinked shows them)."""
    project = tmp_path / "worktree"
    project.mkdir()
    (project / ".git").write_text("gitdir: /nowhere\n")  # not a folder: git reads --local
    hung = fake_git(tmp_path, monkeypatch, "exec sleep 60")
    argv = [str(hung), "-c", "safe.directory=*", "config", "--local", "--null", "--get-regexp"]
    said = str(subprocess.TimeoutExpired([*argv, r"^remote\..+\.url$"], 5.0))

    with pytest.raises(ValueError, match="timed out") as raised:
        linked.first_remote(project)

    assert said == str(raised.value)


def test_init_without_git_in_a_repository_refuses(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No git, but a .git folder: init cannot make sure git ignores the file, and says so."""
    no_git(tmp_path, monkeypatch)
    local = repo / ".claude" / "settings.local.json"

    with pytest.raises(ConfigError, match="git could not be run here"):
        gitignore.ensure_ignored(repo, local, ".claude/settings.local.json")


def test_init_shows_gits_own_words_in_the_persons_language(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git failing in a repository: its stderr, in the locale the person has (LC_ALL is theirs,
    not C), is in the ConfigError."""
    fake_git(tmp_path, monkeypatch, 'echo "fatal: lecture impossible ($LC_ALL)" >&2\nexit 128')
    monkeypatch.setenv("LC_ALL", "fr_FR.UTF-8")
    local = repo / ".claude" / "settings.local.json"

    with pytest.raises(ConfigError) as raised:
        gitignore.ensure_ignored(repo, local, ".claude/settings.local.json")

    assert "(fatal: lecture impossible (fr_FR.UTF-8))" in str(raised.value)


def test_the_guard_without_an_answer_counts_every_file_as_not_ignored(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No git, or a git that fails: every path stays (the guard blocks rather than lets
    through)."""
    paths = [str(repo / ".env"), str(repo / "sub" / ".env")]
    (repo / ".gitignore").write_text(".env\n")
    assert [] == guard_disk.not_ignored(str(repo), paths)  # real git: both are ignored

    no_git(tmp_path, monkeypatch)
    assert paths == guard_disk.not_ignored(str(repo), paths)

    fake_git(tmp_path, monkeypatch, "exit 128")
    assert paths == guard_disk.not_ignored(str(repo), paths)
