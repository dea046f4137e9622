"""A guard hook init wrote before the hooks failed closed (a bare `… offprompt guard`, no time
limit) is recognised as offprompt's and brought up to date; `remove` still takes out exactly
what init added; `guard_argv` finds the guard inside the wrapper (DESIGN §9)."""

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND, PORTABLE, shared, snapshot
from click.testing import Result

from offprompt.agents import guard_install, hook_wrapper

Run = Callable[..., Result]
pytestmark = pytest.mark.usefixtures("portable")
ARGV = ("/opt/offprompt/bin/offprompt", "guard")
# The guard init writes into the project's own files (--shared), from PORTABLE.
SHARED = ("offprompt", "guard")
UVX = ("uvx", "--from", "/src", "offprompt", "guard")
OLD = shlex.join(ARGV)
# What init wrote in each agent's hook file before: the bare command, no time limit.
BEFORE = {
    "claude-code": (
        ".claude/settings.json",
        {
            "hooks": {
                "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": OLD}]}]
            }
        },
    ),
    "codex": (
        ".codex/hooks.json",
        {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": OLD}]}]}},
    ),
    "cursor": (
        ".cursor/hooks.json",
        {
            "version": 1,
            "hooks": {
                event: [{"command": OLD, "failClosed": True}]
                for event in ("beforeShellExecution", "beforeReadFile", "beforeMCPExecution")
            },
        },
    ),
    "vscode": (
        ".github/hooks/offprompt.json",
        {"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": OLD}]}},
    ),
}


def hook_commands(value: object) -> list[str]:
    """Every hook command string in a hook file, in order."""
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k in ("command", "bash") and isinstance(v, str)]
        return found + [c for v in value.values() for c in hook_commands(v)]
    if isinstance(value, list):
        return [c for v in value for c in hook_commands(v)]
    return []


@pytest.mark.parametrize("agent", BEFORE)
def test_init_brings_a_bare_guard_hook_up_to_date(run: Run, project: Path, agent: str) -> None:
    """The old entry is taken for offprompt's: init says "updated", leaves one entry per
    event, and every command now fails closed around the same guard."""
    name, old = BEFORE[agent]
    (project / name).parent.mkdir(parents=True)
    (project / name).write_text(json.dumps(old, indent=2) + "\n")

    result = run(
        "init", "--agent", agent, "--shared", "--project", str(project), "--command", PORTABLE
    )

    assert 0 == result.exit_code, result.output
    assert f"{agent}: updated the guard in {project}/{name}" in result.stdout
    now = json.loads((project / name).read_text())
    commands = hook_commands(now)
    assert len(hook_commands(old)) == len(commands)
    assert all(guard_install.fails_closed(c) for c in commands)
    assert {SHARED} == {guard_install.guard_argv(c) for c in commands}


def test_init_says_codex_waits_for_the_updated_hook_to_be_trusted_again(
    run: Run, project: Path
) -> None:
    """Codex trusts a hook's exact definition: the changed one runs only once trusted again."""
    name, old = BEFORE["codex"]
    (project / ".codex").mkdir()
    (project / name).write_text(json.dumps(old))

    result = run(
        "init", "--agent", "codex", "--shared", "--project", str(project), "--command", PORTABLE
    )

    assert (
        f"codex: updated the guard in {project}/{name} (Codex runs the changed hook only once"
        " you trust it again in /hooks)"
    ) in result.stdout


def test_the_updated_claude_code_hook_carries_its_time_limit_and_failure_mode(
    run: Run, project: Path
) -> None:
    """After the update Claude Code's hook blocks on a failure of its own (`onFailure`) and
    within 30 s (`timeout`), beside the wrapped command."""
    name, old = BEFORE["claude-code"]
    (project / ".claude").mkdir()
    (project / name).write_text(json.dumps(old))

    run("init", "--agent", "claude-code", *shared(project))

    (entry,) = json.loads((project / name).read_text())["hooks"]["PreToolUse"]
    assert {
        "type": "command",
        "command": hook_wrapper.wrap(SHARED, "claude", shared=True),
        "timeout": 30,
        "onFailure": "block",
    } == entry["hooks"][0]


@pytest.mark.parametrize("agent", BEFORE)
def test_remove_takes_out_an_old_bare_guard_hook(run: Run, project: Path, agent: str) -> None:
    """`remove` knows the old entry for offprompt's too: a hook file holding only it goes."""
    name, old = BEFORE[agent]
    (project / name).parent.mkdir(parents=True)
    (project / name).write_text(json.dumps(old))

    result = run("remove", "--agent", agent, "--shared", "--project", str(project))

    assert 0 == result.exit_code, result.output
    assert OLD not in "".join(hook_commands(_read(project / name)))


def _read(path: Path) -> object:
    return json.loads(path.read_text()) if path.exists() else None


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini", "cursor", "vscode"])
def test_remove_after_init_gives_back_the_project_byte_for_byte(
    run: Run, project: Path, agent: str
) -> None:
    """The new entry (wrapper, time limit, failure mode) comes out whole: nothing of it left."""
    before = snapshot(project)

    added = run("init", "--agent", agent, "--project", str(project), "--command", COMMAND)
    removed = run("remove", "--agent", agent, "--project", str(project))

    assert (0, 0) == (added.exit_code, removed.exit_code), added.output + removed.output
    assert before == snapshot(project)


@pytest.mark.parametrize(
    ("command", "argv", "closed"),
    [
        (hook_wrapper.wrap(ARGV, "exit"), ARGV, True),
        (hook_wrapper.wrap(UVX, "cursor"), UVX, True),
        (hook_wrapper.wrap(UVX, "copilot", shared=True), UVX, True),
        (OLD, ARGV, False),
        ("sh -c 'exit 0' offprompt-guard /opt/offprompt/bin/offprompt guard", ARGV, False),
        ("./hooks/audit.sh", None, False),
        (42, None, False),
    ],
)
def test_guard_argv_finds_the_guard_inside_the_wrapper(
    command: object, argv: tuple[str, ...] | None, closed: bool
) -> None:
    """The doctor's view of a hook command: the guard's own argv (what must start), and
    whether the command is today's fail-closed wrapper (an edited script is not)."""
    assert (argv, closed) == (
        guard_install.guard_argv(command),
        guard_install.fails_closed(command),
    )
