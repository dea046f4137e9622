"""A team's files belong to the team (DESIGN §9 "Remove touches this project only"): `remove
--everywhere` on one machine leaves the files of a `--shared` project that git tracks byte for
byte and lists them; `remove --shared` in that project is the one way to take them out, and says
they are committed. Real git, real commands."""

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND, shared, snapshot
from click.testing import Result
from test_setups import AGENTS, git, two

Run = Callable[..., Result]
TEAM_FILES = (".mcp.json", ".claude/settings.json", ".codex/config.toml", ".codex/hooks.json")
NOT_TOUCHED = (
    "committed team files, not touched: run `offprompt remove --shared` in that project to take"
    " them out"
)
__all__ = ["two"]  # the fixture, imported for these tests
pytestmark = pytest.mark.usefixtures("portable")


def shared_init(run: Run, project: Path) -> None:
    done = run("init", *AGENTS, *shared(project))
    assert 0 == done.exit_code, done.output
    assert all((project / f).is_file() for f in TEAM_FILES)


def commit(project: Path) -> None:
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "team")


def test_everywhere_leaves_committed_team_files_and_lists_them(
    run: Run, home: Path, two: tuple[Path, Path]
) -> None:
    """A committed `--shared` project beside a personal one: `--everywhere` gives the personal
    one back as before, leaves the four team files byte for byte (git sees no change), names
    each under the not-touched line, and exits 0."""
    team, mine = two
    shared_init(run, team)
    commit(team)
    team_before = snapshot(team)
    mine_before = snapshot(mine)
    done = run("init", *AGENTS, "--project", str(mine), "--command", COMMAND)
    assert 0 == done.exit_code, done.output

    done = run("remove", "--everywhere")

    assert 0 == done.exit_code, done.output
    assert team_before == snapshot(team)
    assert "" == git(team, "status", "--porcelain")
    assert mine_before == snapshot(mine)
    assert NOT_TOUCHED in done.output
    listed = done.output.split(NOT_TOUCHED, 1)[1]
    assert all(str(team / f) in listed for f in TEAM_FILES), done.output


def test_everywhere_takes_out_team_files_never_committed(
    run: Run, home: Path, two: tuple[Path, Path]
) -> None:
    """`init --shared` whose files git does not track yet: nothing the team has, so
    `--everywhere` takes them out as before."""
    team, _ = two
    before = snapshot(team)
    shared_init(run, team)

    done = run("remove", "--everywhere")

    assert 0 == done.exit_code, done.output
    assert before == snapshot(team)
    assert NOT_TOUCHED not in done.output


def test_remove_shared_takes_committed_files_out_and_says_they_are_committed(
    run: Run, home: Path, two: tuple[Path, Path]
) -> None:
    """`remove --shared` in the project: the team files go, and one line says they are
    committed, so the commit takes offprompt away from every teammate."""
    team, _ = two
    shared_init(run, team)
    commit(team)

    done = run("remove", *AGENTS, "--shared", "--project", str(team))

    assert 0 == done.exit_code, done.output
    assert not any((team / f).exists() for f in TEAM_FILES)
    said = [line for line in done.output.splitlines() if "committed" in line]
    assert 1 == len(said), done.output
    assert all(f in said[0] for f in TEAM_FILES), said


def test_a_deleted_project_no_longer_keeps_the_user_config(
    run: Run, home: Path, two: tuple[Path, Path]
) -> None:
    """Codex's user-level entry served two projects; the second folder was deleted since: the
    first's `remove` takes the entry out instead of keeping it for a project that is gone."""
    alpha, beta = two
    for folder in (alpha, beta):
        done = run("init", *AGENTS, "--project", str(folder), "--command", COMMAND)
        assert 0 == done.exit_code, done.output
    shutil.rmtree(beta)

    done = run("remove", "--project", str(alpha))

    assert 0 == done.exit_code, done.output
    assert "kept in your user config" not in done.output
    config = home / ".codex" / "config.toml"
    assert not config.exists() or "offprompt" not in config.read_text()


def test_init_elsewhere_that_changes_the_user_command_says_who_else_uses_it(
    run: Run, home: Path, two: tuple[Path, Path]
) -> None:
    """Codex's one user-level entry serves every project: an init in the second project with
    another command changes it for the first too, and says so, naming the first."""
    alpha, beta = two
    done = run("init", "--agent", "codex", "--project", str(alpha), "--command", COMMAND)
    assert 0 == done.exit_code, done.output

    other = "/opt/other/bin/offprompt serve"
    done = run("init", "--agent", "codex", "--project", str(beta), "--command", other)

    assert 0 == done.exit_code, done.output
    said = [line for line in done.stdout.splitlines() if "also" in line and str(alpha) in line]
    assert 1 == len(said), done.stdout
