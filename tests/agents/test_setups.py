"""`remove` touches this project only (DESIGN §9): an agent whose offprompt lives in the user
config (Codex, with no personal project scope) keeps it while another project offprompt set up
uses it; `remove` undoes the mask (or `--keep-mask` keeps it and says so); `remove
--everywhere` gives back every file as it was before the first init. The list of set-up
projects (agents.setups) is read and written by the real commands, never made by hand."""

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND, snapshot
from click.testing import Result

Run = Callable[..., Result]
AGENTS = ("--agent", "codex", "--agent", "claude-code")
GIT = shutil.which("git") or "/usr/bin/git"


@pytest.fixture
def two(tmp_path: Path, fake_program: Callable[[str], Path]) -> tuple[Path, Path]:
    """Two git projects, Codex and Claude Code on PATH (and bwrap and socat for --mask)."""
    for name in ("codex", "claude", "bwrap", "socat"):
        fake_program(name)
    bin_dir = Path(os.environ["PATH"].split(os.pathsep)[0])
    (bin_dir / "git").symlink_to(GIT)
    out = []
    for name in ("alpha", "beta"):
        folder = tmp_path / name
        folder.mkdir()
        git(folder, "init", "-q")
        out.append(folder)
    return out[0], out[1]


def git(folder: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    done = subprocess.run([GIT, "-C", str(folder), *args], capture_output=True, text=True,
                          check=True, env=env, timeout=30)  # fmt: skip
    return done.stdout


def init(run: Run, project: Path, *more: str) -> Result:
    done = run("init", *AGENTS, "--project", str(project), "--command", COMMAND, *more)
    assert 0 == done.exit_code, done.output
    return done


def remove(run: Run, project: Path, *more: str) -> Result:
    done = run("remove", "--project", str(project), *more)
    assert 0 == done.exit_code, done.output
    return done


def report(run: Run, project: Path) -> list[dict[str, object]]:
    """What `offprompt agents` says of every agent for `project` (its JSON)."""
    found: list[dict[str, object]] = json.loads(
        run("agents", "--project", str(project), "--json").stdout
    )
    assert {"codex", "claude-code"} <= {i["name"] for i in found if i["declared"]}
    return found


def test_remove_in_one_project_leaves_the_other_declared_and_guarded(
    run: Run, home: Path, two: tuple[Path, Path]
) -> None:
    """Codex's one user-level entry serves both projects: removing offprompt from the first
    keeps it (saying why), the second is still declared and guarded; the last remove takes it."""
    alpha, beta = two
    init(run, alpha)
    init(run, beta)
    config = home / ".codex" / "config.toml"
    seen = report(run, beta)

    done = remove(run, alpha)

    assert "codex: kept in your user config: another project offprompt set up still uses it" in (
        done.output
    )
    assert seen == report(run, beta)
    assert "offprompt" in config.read_text()

    remove(run, beta)

    assert not config.exists() or "offprompt" not in config.read_text()


@pytest.mark.parametrize("listed", [True, False])
def test_remove_where_init_never_ran_keeps_the_user_config(
    run: Run, home: Path, two: tuple[Path, Path], tmp_path: Path, listed: bool
) -> None:
    """A remove in a folder offprompt never set up takes nothing another project relies on:
    said as such when the list names that project, and as unknown when there is no list (an
    install made before offprompt kept one)."""
    alpha, _ = two
    init(run, alpha)
    seen = report(run, alpha)
    if not listed:
        (home / "state" / "setups.json").unlink()
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    before = snapshot(home)

    done = remove(run, stranger, "--agent", "codex")

    why = "another project offprompt set up still uses it" if listed else "did not set it up"
    assert f"codex: kept in your user config: {'' if listed else 'offprompt '}{why}" in (
        done.output
    )
    assert before == snapshot(home)
    assert seen == report(run, alpha)


def test_init_mask_then_remove_leaves_git_status_clean(
    run: Run, home: Path, two: tuple[Path, Path]
) -> None:
    """`remove` undoes the mask too, so no personal file is left for git to offer."""
    alpha, _ = two
    assert "" == git(alpha, "status", "--porcelain")
    init(run, alpha, "--mask")

    done = remove(run, alpha)

    assert "took the mask out" in done.output
    assert "" == git(alpha, "status", "--porcelain", "--untracked-files=all")
    assert not (alpha / ".codex").exists()
    assert not (alpha / ".claude").exists()


def test_remove_keep_mask_keeps_it_and_its_exclude_line(
    run: Run, home: Path, two: tuple[Path, Path]
) -> None:
    """`--keep-mask`: the mask stays, and so does the exclude line of the personal file that
    holds it, said on a line; git still offers nothing."""
    alpha, _ = two
    init(run, alpha, "--mask")

    done = remove(run, alpha, "--keep-mask")

    assert "(the mask is still on)" in done.output
    assert (alpha / ".claude" / "settings.local.json").exists()
    assert ".claude/" not in git(alpha, "status", "--porcelain", "--untracked-files=all")


def test_remove_everywhere_gives_back_every_file_as_before_the_first_init(
    run: Run, home: Path, two: tuple[Path, Path]
) -> None:
    """Two projects (one masked), then `remove --everywhere`: it lists both, and HOME and both
    projects are byte for byte as before the first init, the state folder included."""
    alpha, beta = two
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        'model = "o4"\n\n[mcp_servers.db]\ncommand = "db"\n'
    )
    before = snapshot(home, alpha, beta)
    init(run, alpha, "--mask")
    init(run, beta)

    done = run("remove", "--everywhere")

    assert 0 == done.exit_code, done.output
    assert f"  {alpha}" in done.output.replace(str(home), "~") or str(alpha) in done.output
    assert str(beta) in done.output
    assert before == snapshot(home, alpha, beta)
