"""Sink paths resolve inside the real project folder, symlinks included, or are refused."""

import os
from pathlib import Path

import pytest

from offprompt.errors import ProjectError, RefusedRequest
from offprompt.sinks import SinkSpec, resolve_target, write


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project, holding a file that must never change."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / ".env").write_text("OUT=1\n")
    return folder


def test_plain_relative_path_resolves_inside(project: Path) -> None:
    """The usual case."""
    assert project.resolve() / ".env" == resolve_target(project, SinkSpec())


def test_dotdot_escape_is_refused(project: Path, outside: Path) -> None:
    """`../outside/.env` leaves the project."""
    with pytest.raises(RefusedRequest, match="outside the project"):
        write(project, SinkSpec(path="../outside/.env"), {"A": "1"})
    assert "OUT=1\n" == (outside / ".env").read_text()


def test_dotdot_that_stays_inside_is_allowed(project: Path) -> None:
    """`sub/../.env` is the project's .env."""
    assert project / ".env" == resolve_target(project, SinkSpec(path="sub/../.env"))


def test_absolute_path_outside_is_refused(project: Path, outside: Path) -> None:
    """An absolute path elsewhere is refused."""
    with pytest.raises(RefusedRequest):
        resolve_target(project, SinkSpec(path=str(outside / ".env")))


def test_absolute_path_inside_is_allowed(project: Path) -> None:
    """An absolute path into the project is fine."""
    assert project / "x.env" == resolve_target(project, SinkSpec(path=str(project / "x.env")))


def test_symlinked_file_pointing_outside_is_refused(project: Path, outside: Path) -> None:
    """A .env symlink to a file outside is refused and the outside file untouched."""
    (project / ".env").symlink_to(outside / ".env")
    with pytest.raises(RefusedRequest):
        write(project, SinkSpec(), {"A": "1"})
    assert "OUT=1\n" == (outside / ".env").read_text()


def test_symlinked_folder_pointing_outside_is_refused(project: Path, outside: Path) -> None:
    """A folder symlink out of the project is refused."""
    (project / "config").symlink_to(outside)
    with pytest.raises(RefusedRequest):
        write(project, SinkSpec(path="config/new.env"), {"A": "1"})
    assert [".env"] == os.listdir(outside)


def test_dangling_symlink_pointing_outside_is_refused(project: Path, outside: Path) -> None:
    """A link to a file that does not exist yet outside is refused too."""
    (project / ".env").symlink_to(outside / "later.env")
    with pytest.raises(RefusedRequest):
        write(project, SinkSpec(), {"A": "1"})
    assert not (outside / "later.env").exists()


def test_symlink_inside_writes_its_target_and_stays_a_link(project: Path) -> None:
    """The real file is rewritten; the link is left as it is."""
    (project / "config").mkdir()
    real = project / "config" / "app.env"
    real.write_text("X=1\n")
    (project / ".env").symlink_to("config/app.env")
    result = write(project, SinkSpec(), {"A": "1"})
    assert (real, "config/app.env") == (result.path, result.display)
    assert (True, "X=1\nA=1\n") == ((project / ".env").is_symlink(), real.read_text())


def test_project_reached_through_a_symlink_works(project: Path, tmp_path: Path) -> None:
    """A project path that is itself a symlink is resolved first."""
    link = tmp_path / "link"
    link.symlink_to(project)
    result = write(link, SinkSpec(), {"A": "1"})
    assert (project / ".env", ".env") == (result.path, result.display)


def test_symlink_loop_is_refused(project: Path) -> None:
    """A loop cannot be written through."""
    (project / "a").symlink_to("b")
    (project / "b").symlink_to("a")
    with pytest.raises(RefusedRequest):
        resolve_target(project, SinkSpec(path="a"))


@pytest.mark.parametrize("path", [".git/config", ".git/hooks/pre-commit", "sub/.GIT/x"])
def test_paths_inside_git_are_refused(project: Path, path: str) -> None:
    """Git's own folder is never a destination."""
    with pytest.raises(RefusedRequest, match=r"\.git"):
        resolve_target(project, SinkSpec(path=path))


@pytest.mark.parametrize("path", ["", ".", "sub/", "a\0b"])
def test_paths_that_name_no_file_are_refused(project: Path, path: str) -> None:
    """Empty, the project itself, a trailing slash, a NUL."""
    with pytest.raises(RefusedRequest):
        resolve_target(project, SinkSpec(path=path))


def test_unknown_sink_kind_is_refused(project: Path) -> None:
    """Only dotenv and file."""
    with pytest.raises(RefusedRequest):
        resolve_target(project, SinkSpec(kind="yaml", path="x"))  # type: ignore[arg-type]


def test_missing_project_is_a_project_error(tmp_path: Path) -> None:
    """No folder, no write."""
    with pytest.raises(ProjectError):
        resolve_target(tmp_path / "nope", SinkSpec())
