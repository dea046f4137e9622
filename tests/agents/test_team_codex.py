"""What a Codex teammate is asked to trust (DESIGN §14: Codex runs a project's hook only once
the person trusts it in /hooks, and `codex exec` runs no untrusted hook): the shared hook says
what it is in its first words (Codex's `statusMessage`, which its /hooks screen shows instead
of "Unnamed hook"), and `init --shared` says, and writes as a comment in the shared Codex
config, the line the team must pass on."""

import json
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import shared
from click.testing import Result

from offprompt.agents import guard_install

Run = Callable[..., Result]
pytestmark = pytest.mark.usefixtures("portable")


def test_init_shared_names_the_codex_hook_and_tells_the_team_to_trust_it(
    run: Run, project: Path
) -> None:
    """The hook's statusMessage starts `offprompt guard`; config.toml carries a comment naming
    /hooks and `codex exec`; init says the same once; the entry is still offprompt's."""
    done = run("init", "--agent", "codex", *shared(project))

    assert 0 == done.exit_code, done.output
    entry = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]["PreToolUse"][0]
    (handler,) = entry["hooks"]
    assert handler["statusMessage"].startswith("offprompt guard")
    assert guard_install.is_ours(entry)
    config = (project / ".codex" / "config.toml").read_text()
    comments = [line for line in config.splitlines() if line.startswith("#")]
    told = [c for c in comments if "/hooks" in c and "codex exec" in c]
    assert 1 == len(told), config
    assert "offprompt" in tomllib.loads(config)["mcp_servers"]
    said = [line for line in done.stdout.splitlines() if "/hooks" in line and "codex exec" in line]
    assert 1 == len(said), done.stdout


def test_init_personal_keeps_the_codex_hook_as_it_was(run: Run, project: Path) -> None:
    """The personal (user-level) Codex hook is not changed: a changed definition waits for
    the person to trust it again, and runs unguarded until then."""
    done = run("init", "--agent", "codex", "--project", str(project))

    assert 0 == done.exit_code, done.output
    assert not any("codex exec" in line for line in done.stdout.splitlines())


def test_a_teammate_running_init_in_a_shared_project_gets_nothing_twice(
    run: Run, project: Path, home: Path
) -> None:
    """The project's shared files already declare offprompt and its guard: a personal `init`
    there adds no second server nor second hook (Claude Code's local scope, Codex's user
    config), and says the shared files serve."""
    done = run("init", "--agent", "claude-code", "--agent", "codex", *shared(project))
    assert 0 == done.exit_code, done.output

    done = run("init", "--agent", "claude-code", "--agent", "codex", "--project", str(project))

    assert 0 == done.exit_code, done.output
    assert not (project / ".claude" / "settings.local.json").exists()
    assert not (home / ".codex" / "config.toml").exists()
    assert not (home / ".codex" / "hooks.json").exists()
    claude_json = home / ".claude.json"
    assert not claude_json.exists() or "offprompt" not in claude_json.read_text()
    said = [line for line in done.stdout.splitlines() if "shared files" in line]
    assert 2 == len(said), done.stdout


@pytest.mark.parametrize("version", ["2.1.328", "2.1.332"])
def test_the_shared_claude_code_guard_does_not_depend_on_the_initiators_version(
    run: Run, project: Path, no_agent_env: Path, version: str
) -> None:
    """Whatever `claude` the initiator runs, the team's .claude/settings.json holds the hook
    under PreToolUse only (a teammate on a version before 2.1.332 could not start with
    PreSkillShellCommand there), and `agents` does not tell a teammate on 2.1.332 to run init
    again (which would declare offprompt twice)."""
    claude = no_agent_env / "claude"
    claude.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    claude.chmod(0o755)

    done = run("init", "--agent", "claude-code", *shared(project))

    assert 0 == done.exit_code, done.output
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert ["PreToolUse"] == list(settings["hooks"])
    claude.write_text("#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
    report = json.loads(run("agents", "--project", str(project), "--json").stdout)
    (found,) = [r for r in report if r["name"] == "claude-code"]
    assert not [w for w in found["warnings"] if "init` again" in w], found["warnings"]
