"""`offprompt init` adds the guard (DESIGN §14) where each agent reads hooks: Claude Code's
settings.json, Codex's hooks.json, Gemini CLI's settings.json, Cursor's hooks.json, VS Code's
.github/hooks and Windsurf's hooks.json; `remove` takes out exactly that, byte for byte;
`--no-guard` leaves it out."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND, PORTABLE, shared, snapshot
from click.testing import Result

from offprompt.agents import codex, guard_install, hook_wrapper
from offprompt.configedit import jsonc

Run = Callable[..., Result]
BOTH = ["--agent", "claude-code", "--agent", "codex"]
# The hook of the shared files is made from PORTABLE; user configs get COMMAND's. Each sits in
# the wrapper that blocks when it cannot run (tests/guard/test_fail_closed.py runs it), the
# shared files' in its team form (tests/agents/test_shared_hook.py runs it); Cursor's and VS
# Code's wrappers also answer a deny on stdout.
ARGV = ("offprompt", "guard")
USER_ARGV = ("/opt/offprompt/bin/offprompt", "guard")
GUARD = hook_wrapper.wrap(ARGV, "exit", shared=True)
USER_GUARD = hook_wrapper.wrap(USER_ARGV, "exit")
CURSOR_GUARD = hook_wrapper.wrap(ARGV, "cursor", shared=True)
COPILOT_GUARD = hook_wrapper.wrap(ARGV, "copilot", shared=True)
# The time limit and failure mode each host takes in its hook entry.
# Claude Code's blocks also answer in JSON, so it shows the model the reason, not the script.
CLAUDE_GUARD = hook_wrapper.wrap(ARGV, "claude", shared=True)
CLAUDE_HOOK = {"type": "command", "command": CLAUDE_GUARD, "timeout": 30, "onFailure": "block"}
CODEX_HOOK = {"type": "command", "command": GUARD, "timeout": 30}
GEMINI_HOOK = {"type": "command", "command": GUARD, "timeout": 30000}
CURSOR_ENTRY = {"command": CURSOR_GUARD, "failClosed": True, "timeout": 30}
# DESIGN §14's deny rules, written out: the code's own list is what is under test.
DENY = [
    "Read(./.env)",
    "Read(./.env.local)",
    "Read(./.env.*.local)",
    "Read(./.env.development)",
    "Read(./.env.production)",
    "Read(./.env.staging)",
    "Read(./.env.test)",
]

# The options of init and remove for each scope.
WHERE: dict[str, Callable[[Path], list[str]]] = {
    "local": lambda project: ["--project", str(project)],
    "project": lambda project: ["--shared", "--project", str(project)],
    "user": lambda project: ["--global"],
}
pytestmark = pytest.mark.usefixtures("portable")

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
    result = run("init", "--agent", "claude-code", *shared(project))

    assert 0 == result.exit_code, result.output
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert {
        "permissions": {"deny": DENY},
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [CLAUDE_HOOK]}]},
    } == settings


def test_init_adds_the_hook_codex_reads(run: Run, project: Path) -> None:
    """.codex/hooks.json beside config.toml, the hook with no matcher (every tool), named for
    Codex's /hooks screen."""
    result = run(
        "init", "--agent", "codex", "--shared", "--project", str(project), "--command", PORTABLE
    )

    assert 0 == result.exit_code, result.output
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    named = {**CODEX_HOOK, "statusMessage": codex.STATUS}
    assert {"hooks": {"PreToolUse": [{"hooks": [named]}]}} == hooks


@pytest.mark.parametrize("scope", ["local", "project", "user"])
def test_remove_after_init_leaves_every_config_byte_identical(
    run: Run, project: Path, home: Path, scope: str
) -> None:
    """Settings with the person's own rules, hooks and comments: all as before, to the byte
    (the personal scope: Claude Code's settings.local.json and Codex's user hooks)."""
    claude = project / ".claude" if scope != "user" else home / ".claude"
    codex = project / ".codex" if scope == "project" else home / ".codex"
    claude.mkdir()
    codex.mkdir()
    name = "settings.local.json" if scope == "local" else "settings.json"
    (claude / name).write_text(CLAUDE_SETTINGS)
    (codex / "hooks.json").write_text(CODEX_HOOKS)
    where = WHERE[scope](project)
    before = snapshot(project, home)

    added = run("init", *BOTH, *where, "--command", PORTABLE if scope == "project" else COMMAND)
    middle = snapshot(project, home)
    removed = run("remove", *BOTH, *where)

    assert (0, 0) == (added.exit_code, removed.exit_code), added.output + removed.output
    assert before != middle
    assert before == snapshot(project, home)


def test_init_keeps_the_persons_settings_and_adds_after_them(run: Run, project: Path) -> None:
    """Their deny rules and hooks stay first; a rule they had already is added once more."""
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(CLAUDE_SETTINGS)

    run("init", "--agent", "claude-code", *shared(project))

    text = (project / ".claude" / "settings.json").read_text()
    assert "// the person's own settings" in text
    settings = jsonc.parse(text).root.value
    assert isinstance(settings, dict)
    assert ["Read(./.env)", "Bash(curl:*)", *DENY] == settings["permissions"]["deny"]
    assert ["Bash", "*"] == [e["matcher"] for e in settings["hooks"]["PreToolUse"]]
    assert "opus" == settings["model"]


def test_init_twice_leaves_the_guard_untouched(run: Run, project: Path) -> None:
    """The second run says "guard already there" and rewrites nothing."""
    run("init", *BOTH, *shared(project))
    before = snapshot(project)

    again = run("init", *BOTH, *shared(project))

    assert before == snapshot(project)
    assert 2 == sum("guard already there in" in line for line in again.stdout.splitlines())


MOVED = ("uvx", "offprompt", "guard")


def test_init_updates_a_stale_guard_command(
    run: Run, project: Path, fake_program: Callable[[str], Path]
) -> None:
    """offprompt moved: the hook's command follows, nothing is duplicated."""
    fake_program("uvx")
    run("init", "--agent", "claude-code", *shared(project))

    result = run(
        "init", "--agent", "claude-code", "--shared", "--project", str(project), "--command",
        "uvx offprompt serve",
    )  # fmt: skip

    assert f"claude-code: updated the guard in {project}/.claude/settings.json" in result.stdout
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert [
        {
            "matcher": "*",
            "hooks": [{**CLAUDE_HOOK, "command": hook_wrapper.wrap(MOVED, "claude", shared=True)}],
        }
    ] == settings["hooks"]["PreToolUse"]
    assert DENY == settings["permissions"]["deny"]


def test_no_guard_leaves_the_hooks_out(run: Run, project: Path) -> None:
    """init --no-guard writes only the server entries; remove --no-guard keeps a guard."""
    result = run(
        "init", *BOTH, "--shared", "--project", str(project), "--command", PORTABLE, "--no-guard"
    )

    assert 0 == result.exit_code
    assert not (project / ".claude").exists()
    assert not (project / ".codex" / "hooks.json").exists()
    run("init", *BOTH, *shared(project))
    run("remove", *BOTH, "--shared", "--project", str(project), "--no-guard")
    assert (project / ".claude" / "settings.json").exists()
    assert (project / ".codex" / "hooks.json").exists()


def test_a_settings_file_that_is_not_json_fails_the_guard_only(run: Run, project: Path) -> None:
    """Broken settings.json: the server entry is still added, the guard line says why, exit 1."""
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{ nope")

    result = run("init", "--agent", "claude-code", *shared(project))

    assert 1 == result.exit_code
    lines = result.stdout.splitlines()
    assert lines[0].startswith("claude-code: added offprompt to")
    assert lines[1].startswith("claude-code: failed: ")
    assert "settings.json is not valid JSON" in lines[1]
    assert "{ nope" == (project / ".claude" / "settings.json").read_text()


def test_the_installed_hook_command_runs_the_guard(
    run: Run, project: Path, fake_program: Callable[[str], Path]
) -> None:
    """The command init writes, split as a shell would, ends in `guard` after this offprompt."""
    fake_program("uvx")
    run("init", "--agent", "codex", *WHERE["project"](project), "--command", "uvx offprompt serve")

    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    command = hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert ("uvx", "offprompt", "guard") == guard_install.guard_argv(command)
    assert guard_install.fails_closed(command)
    assert guard_install.is_ours(hooks["hooks"]["PreToolUse"][0])


# -- the other agents' hook files ---------------------------------------------------------------

GEMINI_SETTINGS = """{
  // mine
  "mcpServers": {"db": {"command": "db-mcp"}},
  "hooks": {
    "AfterTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "fmt"}]}]
  }
}
"""
CURSOR_HOOKS = """{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{"command": "./hooks/format.sh"}],
    "beforeShellExecution": [{"command": "./hooks/audit.sh"}]
  }
}
"""
WINDSURF_HOOKS = '{"hooks": {"post_write_code": [{"command": "fmt", "show_output": false}]}}\n'


def test_init_adds_gemini_clis_before_tool_hook_beside_its_server(run: Run, project: Path) -> None:
    """One .gemini/settings.json: offprompt's server and a BeforeTool hook on every tool."""
    result = run(
        "init", "--agent", "gemini", "--shared", "--project", str(project), "--command", PORTABLE
    )

    assert 0 == result.exit_code, result.output
    settings = json.loads((project / ".gemini" / "settings.json").read_text())
    assert {"BeforeTool": [{"matcher": "*", "hooks": [GEMINI_HOOK]}]} == settings["hooks"]
    assert "offprompt" in settings["mcpServers"]


def test_init_adds_cursors_three_hooks_failing_closed(run: Run, project: Path) -> None:
    """.cursor/hooks.json, version 1: the guard before shell commands, file reads and MCP
    calls, each with failClosed (Cursor lets a call through when a hook fails otherwise)."""
    result = run(
        "init", "--agent", "cursor", "--shared", "--project", str(project), "--command", PORTABLE
    )

    assert 0 == result.exit_code, result.output
    entry = CURSOR_ENTRY
    assert {
        "version": 1,
        "hooks": {
            "beforeShellExecution": [entry],
            "beforeReadFile": [entry],
            "beforeMCPExecution": [entry],
        },
    } == json.loads((project / ".cursor" / "hooks.json").read_text())


def test_init_adds_vscodes_hook_file_in_the_copilot_format(run: Run, project: Path) -> None:
    """.github/hooks/offprompt.json: version 1, one preToolUse hook for every tool."""
    result = run(
        "init", "--agent", "vscode", "--shared", "--project", str(project), "--command", PORTABLE
    )

    assert 0 == result.exit_code, result.output
    assert {
        "version": 1,
        "hooks": {"preToolUse": [{"type": "command", "bash": COPILOT_GUARD, "timeoutSec": 30}]},
    } == json.loads((project / ".github" / "hooks" / "offprompt.json").read_text())


def test_init_adds_windsurfs_cascade_hooks_for_the_user(run: Run, home: Path) -> None:
    """~/.codeium/windsurf/hooks.json beside its MCP config: the four pre-hooks."""
    result = run("init", "--agent", "windsurf", "--global", "--command", COMMAND)

    assert 0 == result.exit_code, result.output
    entry = {"command": USER_GUARD, "show_output": True}
    assert {
        "hooks": {
            "pre_read_code": [entry],
            "pre_write_code": [entry],
            "pre_run_command": [entry],
            "pre_mcp_tool_use": [entry],
        }
    } == json.loads((home / ".codeium" / "windsurf" / "hooks.json").read_text())


@pytest.mark.parametrize("scope", ["project", "user"])
def test_remove_restores_the_other_agents_hook_files_byte_for_byte(
    run: Run, project: Path, home: Path, scope: str
) -> None:
    """The person's own Gemini, Cursor and Windsurf hooks and comments, and no VS Code hook
    folder: all as before, to the byte, after init and remove."""
    gemini = project / ".gemini" if scope == "project" else home / ".gemini"
    cursor = project / ".cursor" if scope == "project" else home / ".cursor"
    # VS Code's user folder is there (an installed VS Code); its hook folder is not.
    for folder in (gemini, cursor, home / ".codeium" / "windsurf", home / ".config/Code/User"):
        folder.mkdir(parents=True)
    (gemini / "settings.json").write_text(GEMINI_SETTINGS)
    (cursor / "hooks.json").write_text(CURSOR_HOOKS)
    (home / ".codeium" / "windsurf" / "hooks.json").write_text(WINDSURF_HOOKS)
    agents = ["--agent", "gemini", "--agent", "cursor", "--agent", "vscode"]
    if scope == "user":
        agents += ["--agent", "windsurf"]
    where = WHERE[scope](project)
    before = snapshot(project, home)

    added = run("init", *agents, *where, "--command", PORTABLE if scope == "project" else COMMAND)
    middle = snapshot(project, home)
    removed = run("remove", *agents, *where)

    assert (0, 0) == (added.exit_code, removed.exit_code), added.output + removed.output
    assert before != middle
    assert before == snapshot(project, home)


def test_init_adds_cursors_hooks_after_the_persons_own(run: Run, project: Path) -> None:
    """Their beforeShellExecution hook stays first and runs too; their version is kept."""
    (project / ".cursor").mkdir()
    (project / ".cursor" / "hooks.json").write_text(CURSOR_HOOKS)

    run("init", "--agent", "cursor", *shared(project))

    hooks = json.loads((project / ".cursor" / "hooks.json").read_text())
    assert 1 == hooks["version"]
    assert [{"command": "./hooks/audit.sh"}, CURSOR_ENTRY] == hooks["hooks"]["beforeShellExecution"]
    assert [{"command": "./hooks/format.sh"}] == hooks["hooks"]["afterFileEdit"]


@pytest.mark.parametrize(
    ("agent", "file"),
    [
        ("gemini", ".gemini/settings.json"),
        ("cursor", ".cursor/hooks.json"),
        ("vscode", ".github/hooks/offprompt.json"),
    ],
)
def test_init_twice_leaves_the_other_agents_hooks_untouched(
    run: Run, project: Path, agent: str, file: str, fake_program: Callable[[str], Path]
) -> None:
    """The second run says "guard already there"; a moved offprompt updates the command in
    every event, adding nothing."""
    fake_program("uvx")
    run("init", "--agent", agent, *shared(project))
    before = snapshot(project)

    again = run(
        "init", "--agent", agent, "--shared", "--project", str(project), "--command", PORTABLE
    )
    assert before == snapshot(project)
    moved = run("init", "--agent", agent, *WHERE["project"](project), "--command",
                "uvx offprompt serve")  # fmt: skip

    assert f"{agent}: guard already there in {project}/{file}" in again.stdout.splitlines()
    assert f"{agent}: updated the guard in {project}/{file}" in moved.stdout.splitlines()
    text = (project / file).read_text()
    assert f'"{GUARD}"' not in text
    events = json.loads(text)["hooks"]
    assert all(1 == len(entries) for entries in events.values()), events


def test_a_cursor_hooks_file_that_is_not_json_fails_the_guard_only(run: Run, project: Path) -> None:
    """A broken .cursor/hooks.json is left as it is, with a sentence; the server is added."""
    (project / ".cursor").mkdir()
    (project / ".cursor" / "hooks.json").write_text("{ nope")

    result = run(
        "init", "--agent", "cursor", "--shared", "--project", str(project), "--command", PORTABLE
    )

    assert 1 == result.exit_code
    assert "{ nope" == (project / ".cursor" / "hooks.json").read_text()
    assert "offprompt" in json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert f"{project}/.cursor/hooks.json is not valid JSON" in result.output


@pytest.mark.parametrize(
    "settings",
    [
        '{\n  "permissions": {"deny": []},\n  "hooks": {"PreToolUse": []}\n}\n',
        '{"permissions": {"deny": [], "allow": []}}\n',
        '{\n  // mine\n  "model": "opus",\n  "hooks": {"PreToolUse": [], "Stop": []}\n}\n',
        '{"hooks": {}}\n',
        '{"permissions": {}, "model": "opus"}\n',
    ],
)
def test_remove_keeps_the_empty_lists_the_person_had(
    run: Run, project: Path, settings: str
) -> None:
    """An empty `deny` or `PreToolUse` list was there before init: it is there after remove,
    to the byte; the lists init made itself go. (A list written `[ ]` across lines reads back
    as `[]`: after init it looks just like a list init made, and goes.)"""
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(settings)

    run("init", "--agent", "claude-code", *shared(project))
    middle = (project / ".claude" / "settings.json").read_text()
    run("remove", "--agent", "claude-code", "--shared", "--project", str(project))

    assert middle != settings
    assert settings == (project / ".claude" / "settings.json").read_text()


def test_init_puts_back_a_deny_rule_the_person_took_out(run: Run, project: Path) -> None:
    """A deny rule deleted by hand since init: the next init says "updated" and adds it back,
    once; the hook is left as it was."""
    run("init", "--agent", "claude-code", *shared(project))
    path = project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["permissions"]["deny"].remove("Read(./.env.staging)")
    path.write_text(json.dumps(settings, indent=2))

    again = run("init", "--agent", "claude-code", *shared(project))

    assert f"claude-code: updated the guard in {path}" in again.stdout.splitlines()
    after = json.loads(path.read_text())
    assert sorted(DENY) == sorted(after["permissions"]["deny"])
    assert 1 == len(after["hooks"]["PreToolUse"])


@pytest.mark.parametrize(
    "hooks",
    [
        '{"version": 1, "hooks": {}}\n',
        '{"version": 1, "hooks": {"beforeReadFile": []}}\n',
    ],
)
def test_remove_gives_back_a_cursor_hooks_file_as_the_person_had_it(
    run: Run, project: Path, hooks: str
) -> None:
    """An empty `hooks` object, or an empty list of one of the events init adds to: to the
    byte."""
    (project / ".cursor").mkdir()
    (project / ".cursor" / "hooks.json").write_text(hooks)

    run("init", "--agent", "cursor", *shared(project))
    middle = (project / ".cursor" / "hooks.json").read_text()
    run("remove", "--agent", "cursor", "--shared", "--project", str(project))

    assert middle != hooks
    assert hooks == (project / ".cursor" / "hooks.json").read_text()
