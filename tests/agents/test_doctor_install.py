"""`offprompt agents` in a team's project (`init --shared`) on a teammate's machine without
offprompt (issue 46 item 4): the command the shared files name does not resolve, and the doctor
says how to install offprompt, naming the source init recorded (`pipx install SOURCE`), or
pointing to offprompt's README when none was recorded (never a path of a machine)."""

import json
from collections.abc import Callable
from pathlib import Path

from cli_helpers import shared
from click.testing import Result

from offprompt.agents import hook_wrapper

Run = Callable[..., Result]
SOURCE = "git+https://example.invalid/o/offprompt"
PAD = " " * 15


def lines(run: Run, project: Path) -> list[str]:
    result = run("agents", "--project", str(project))
    assert 1 == result.exit_code, result.output
    return result.stdout.splitlines()


def test_a_uvx_source_is_named_when_uvx_is_missing(
    run: Run, project: Path, fake_program: Callable[[str], Path]
) -> None:
    """`uvx --from SOURCE offprompt serve` shared, uvx gone: the server's and the hook's lines
    each say `pipx install SOURCE`."""
    uvx = fake_program("uvx")
    command = f"uvx --from {SOURCE} offprompt serve"
    done = run("init", "--agent", "claude-code", *shared(project, command))
    assert 0 == done.exit_code, done.output
    uvx.unlink()

    said = lines(run, project)

    assert 2 <= said.count(f"{PAD}does not run: `uvx` is not on PATH"), said
    assert 2 <= said.count(f"{PAD}to mend: install offprompt: `pipx install {SOURCE}`"), said


def test_the_source_a_shared_hook_records_is_named(run: Run, project: Path) -> None:
    """`offprompt serve` shared, with the source init recorded in the hook (`u="SOURCE";`):
    offprompt missing, the doctor names it for the hook and the server entry alike."""
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"offprompt": {"command": "offprompt", "args": ["serve"]}}})
    )
    command = hook_wrapper.wrap(("offprompt", "guard"), "exit", shared=True, source=SOURCE)
    hooks = {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": command}]}]}
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))

    said = lines(run, project)

    assert 2 <= said.count(f"{PAD}does not run: `offprompt` is not on PATH"), said
    assert 2 <= said.count(f"{PAD}to mend: install offprompt: `pipx install {SOURCE}`"), said


def test_no_recorded_source_points_to_the_readme(
    run: Run, project: Path, fake_program: Callable[[str], Path]
) -> None:
    """A shared `offprompt serve` with no source recorded (init ran from a checkout), then
    offprompt gone: the README's install line, no path."""
    offprompt = fake_program("offprompt")
    done = run("init", "--agent", "claude-code", *shared(project, "offprompt serve"))
    assert 0 == done.exit_code, done.output
    offprompt.unlink()

    said = lines(run, project)

    assert 2 <= said.count(f"{PAD}to mend: install offprompt (see the offprompt README)"), said
    assert not [line for line in said if "init` again" in line], said


def test_the_readme_the_lines_point_to_gives_the_install_line_first() -> None:
    """The README the lines point to ("see the offprompt README"): its Quick start holds the
    install line for a machine without offprompt's checkout (a teammate's), `pipx install
    git+…`, its address marked as one to fill in (the README names no public one)."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    quick = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]

    assert "pipx install git+<" in quick
    assert "placeholder" in quick
