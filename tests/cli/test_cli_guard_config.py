"""`offprompt init` adds the guard (DESIGN §14) to Claude Code's settings.json and Codex's
hooks.json; `remove` takes out exactly that, byte for byte; `--no-guard` leaves it out."""

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND, snapshot
from click.testing import Result

from offprompt.hosts import guard_config, jsonc

Run = Callable[..., Result]
BOTH = ["--agent", "claude-code", "--agent", "codex"]
GUARD = shlex.join(["/opt/offprompt/bin/offprompt", "guard"])

CLAUDE_SETTINGS = """{
  // the person's own settings
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm test:*)"],
    "deny": [
      "Read(./.env)",
      "Bash(curl:*)"
    ]
  },
  "hooks": {
    "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}],
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}
    ]
  }
}
"""
CODEX_HOOKS = '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}\n'


def test_init_adds_the_hook_and_deny_rules_claude_code_reads(run: Run, project: Path) -> None:
    """A new .claude/settings.json: the seven deny rules and one PreToolUse hook on every tool."""
    result = run("init", "--agent", "claude-code", "--project", str(project), "--command", COMMAND)

    assert 0 == result.exit_code, result.output
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert {
        "permissions": {"deny": list(guard_config.DENY_RULES)},
        "hooks": {
            "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": GUARD}]}]
        },
    } == settings


def test_init_adds_the_hook_codex_reads(run: Run, project: Path) -> None:
    """.codex/hooks.json beside config.toml, the hook with no matcher (every tool)."""
    result = run("init", "--agent", "codex", "--project", str(project), "--command", COMMAND)

    assert 0 == result.exit_code, result.output
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    assert {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": GUARD}]}]}} == hooks


@pytest.mark.parametrize("scope", ["project", "user"])
def test_remove_after_init_leaves_every_config_byte_identical(
    run: Run, project: Path, home: Path, scope: str
) -> None:
    """Settings with the person's own rules, hooks and comments: all as before, to the byte."""
    claude = project / ".claude" if scope == "project" else home / ".claude"
    codex = project / ".codex" if scope == "project" else home / ".codex"
    claude.mkdir()
    codex.mkdir()
    (claude / "settings.json").write_text(CLAUDE_SETTINGS)
    (codex / "hooks.json").write_text(CODEX_HOOKS)
    where = ["--project", str(project)] if scope == "project" else ["--global"]
    before = snapshot(project, home)

    added = run("init", *BOTH, *where, "--command", COMMAND)
    middle = snapshot(project, home)
    removed = run("remove", *BOTH, *where)

    assert (0, 0) == (added.exit_code, removed.exit_code), added.output + removed.output
    assert before != middle
    assert before == snapshot(project, home)


def test_init_keeps_the_persons_settings_and_adds_after_them(run: Run, project: Path) -> None:
    """Their deny rules and hooks stay first; a rule they had already is added once more."""
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(CLAUDE_SETTINGS)

    run("init", "--agent", "claude-code", "--project", str(project), "--command", COMMAND)

    text = (project / ".claude" / "settings.json").read_text()
    assert "// the person's own settings" in text
    settings = jsonc.parse(text).root.value
    assert isinstance(settings, dict)
    assert ["Read(./.env)", "Bash(curl:*)", *guard_config.DENY_RULES] == settings["permissions"][
        "deny"
    ]
    assert ["Bash", "*"] == [e["matcher"] for e in settings["hooks"]["PreToolUse"]]
    assert "opus" == settings["model"]


def test_init_twice_leaves_the_guard_untouched(run: Run, project: Path) -> None:
    """The second run says "guard already there" and rewrites nothing."""
    run("init", *BOTH, "--project", str(project), "--command", COMMAND)
    before = snapshot(project)

    again = run("init", *BOTH, "--project", str(project), "--command", COMMAND)

    assert before == snapshot(project)
    assert 2 == sum("guard already there in" in line for line in again.stdout.splitlines())


def test_init_updates_a_stale_guard_command(run: Run, project: Path) -> None:
    """offprompt moved: the hook's command follows, nothing is duplicated."""
    run("init", "--agent", "claude-code", "--project", str(project), "--command", COMMAND)

    result = run(
        "init", "--agent", "claude-code", "--project", str(project), "--command",
        "/usr/local/bin/offprompt serve",
    )  # fmt: skip

    assert f"claude-code: updated the guard in {project}/.claude/settings.json" in result.stdout
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert [
        {
            "matcher": "*",
            "hooks": [{"type": "command", "command": "/usr/local/bin/offprompt guard"}],
        }
    ] == settings["hooks"]["PreToolUse"]
    assert list(guard_config.DENY_RULES) == settings["permissions"]["deny"]


def test_no_guard_leaves_the_hooks_out(run: Run, project: Path) -> None:
    """init --no-guard writes only the server entries; remove --no-guard keeps a guard."""
    result = run("init", *BOTH, "--project", str(project), "--command", COMMAND, "--no-guard")

    assert 0 == result.exit_code
    assert not (project / ".claude").exists()
    assert not (project / ".codex" / "hooks.json").exists()
    run("init", *BOTH, "--project", str(project), "--command", COMMAND)
    run("remove", *BOTH, "--project", str(project), "--no-guard")
    assert (project / ".claude" / "settings.json").exists()
    assert (project / ".codex" / "hooks.json").exists()


def test_a_settings_file_that_is_not_json_fails_the_guard_only(run: Run, project: Path) -> None:
    """Broken settings.json: the server entry is still added, the guard line says why, exit 1."""
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{ nope")

    result = run("init", "--agent", "claude-code", "--project", str(project), "--command", COMMAND)

    assert 1 == result.exit_code
    lines = result.stdout.splitlines()
    assert lines[0].startswith("claude-code: added offprompt to")
    assert lines[1].startswith("claude-code: failed: ")
    assert "settings.json is not valid JSON" in lines[1]
    assert "{ nope" == (project / ".claude" / "settings.json").read_text()


def test_agents_says_which_agents_are_guarded(
    run: Run, project: Path, fake_program: Callable[[str], Path]
) -> None:
    """Guarded by the file for Claude Code; not guarded, and why, for an agent without a hook."""
    fake_program("claude")
    fake_program("gemini")
    run("init", "--agent", "claude-code", "--agent", "gemini", "--project", str(project),
        "--command", COMMAND)  # fmt: skip

    lines = run("agents", "--project", str(project)).stdout.splitlines()

    assert f"             guarded by {project}/.claude/settings.json" in lines
    assert (
        "             not guarded: Gemini CLI's BeforeTool hooks are not installed by offprompt yet"
        in lines
    )


def test_the_installed_hook_command_runs_the_guard(run: Run, project: Path) -> None:
    """The command init writes, split as a shell would, ends in `guard` after this offprompt."""
    run("init", "--agent", "codex", "--project", str(project), "--command", "uvx offprompt serve")

    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    command = hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert ["uvx", "offprompt", "guard"] == shlex.split(command)
    assert guard_config.is_ours(hooks["hooks"]["PreToolUse"][0])
