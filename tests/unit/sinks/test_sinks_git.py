"""A destination tracked by git is refused unless allowed; git's answers are read safely."""

import os
import subprocess
from pathlib import Path

import pytest

from offprompt.errors import TrackedFile
from offprompt.sinks import SinkSpec, inspect_target, write

GIT_ID = ["-c", "user.email=test@example.invalid", "-c", "user.name=offprompt tests"]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *GIT_ID, *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(project: Path) -> Path:
    """The project as a git repository whose .env is committed."""
    git(project, "init", "-q")
    (project / ".env").write_text("OLD=1\n")
    git(project, "add", ".env")
    git(project, "commit", "-q", "-m", "init")
    return project


def test_tracked_env_is_refused_and_left_unchanged(repo: Path) -> None:
    """TrackedFile, file as it was."""
    with pytest.raises(TrackedFile, match="tracked by git"):
        write(repo, SinkSpec(), {"A": "1"})
    assert "OLD=1\n" == (repo / ".env").read_text()


def test_tracked_env_is_written_when_allowed(repo: Path) -> None:
    """allow_tracked is the person's override."""
    write(repo, SinkSpec(), {"A": "1"}, allow_tracked=True)
    assert "OLD=1\nA=1\n" == (repo / ".env").read_text()


def test_tracked_file_sink_is_refused(repo: Path) -> None:
    """The rule holds for file sinks too."""
    with pytest.raises(TrackedFile):
        write(repo, SinkSpec("file", ".env"), {"A": "1"})


def test_inspect_reports_a_tracked_file(repo: Path) -> None:
    """tracked and in_git_repo for the page's warning."""
    target = inspect_target(repo, SinkSpec(), ["A"])
    assert (True, True, False) == (target.in_git_repo, target.tracked, target.ignored)


def test_inspect_reports_an_ignored_file(repo: Path) -> None:
    """An untracked file matched by .gitignore is ignored."""
    (repo / ".gitignore").write_text(".env.local\n")
    target = inspect_target(repo, SinkSpec(path=".env.local"), ["A"])
    assert (True, False, True) == (target.in_git_repo, target.tracked, target.ignored)


def test_untracked_not_ignored_file_in_a_repo(repo: Path) -> None:
    """Neither tracked nor ignored, in a folder that does not exist yet."""
    target = inspect_target(repo, SinkSpec(path="new/dir/.env"), ["A"])
    assert (True, False, False) == (target.in_git_repo, target.tracked, target.ignored)


def test_outside_a_repository_nothing_is_tracked(project: Path) -> None:
    """Not a repo: not tracked, not ignored."""
    target = inspect_target(project, SinkSpec(), ["A"])
    assert (False, False, False) == (target.in_git_repo, target.tracked, target.ignored)


def test_glob_characters_in_a_file_name_are_literal(repo: Path) -> None:
    """A file named `.e*` is not "tracked" because `.env` is."""
    result = write(repo, SinkSpec(path=".e*"), {"A": "1"})
    assert ".e*" == result.display


def test_repository_owned_by_another_user_is_still_checked(repo: Path) -> None:
    """git's dubious-ownership refusal must not read as "not tracked"."""
    for root, dirs, files in os.walk(repo):
        for name in [*dirs, *files, "."]:
            os.lchown(os.path.join(root, name), 4242, 4242)
    with pytest.raises(TrackedFile):
        write(repo, SinkSpec(), {"A": "1"})


def test_git_environment_of_the_caller_is_ignored(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A GIT_DIR pointing elsewhere does not hide the file's own repository."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    with pytest.raises(TrackedFile):
        write(repo, SinkSpec(), {"A": "1"})


def test_without_git_installed_nothing_is_tracked(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No git binary: not a repository."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    target = inspect_target(repo, SinkSpec(), ["A"])
    assert (False, False) == (target.in_git_repo, target.tracked)
