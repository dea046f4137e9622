"""DESIGN §14's masked project: Claude Code's Bash in the sandbox of a project `init --mask`
masked sees stand-ins, so the guard leaves the reads of the files the mask covers to it; the
host's file tools, calls outside the sandbox, files the mask does not cover, writes, and hosts
whose event does not say "sandboxed" (Codex) stay blocked."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from test_guard import claude_event, codex_event, project
from test_guard_hosts import cursor
from test_tool_lists import code

from offprompt.guard import disk
from offprompt.hosts import claude_code as claude_facts
from offprompt.write.journal import Journal, JournalEntry

JOURNALED = JournalEntry(
    at="2026-01-01T00:00:00Z",
    project="",
    file="",
    names=("OPENAI_API_KEY",),
    kept=(),
    fingerprint=None,
    client="test",
    request_id="r2",
)

__all__ = ["project"]  # the fixture: a .env and a written config/service.json

SANDBOX = {"enabled": True, "allowUnsandboxedCommands": False, "failIfUnavailable": True}


@pytest.fixture
def masked(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`project` as `init --mask` leaves it: .env in the mask's record, the sandbox on in its
    settings.local.json (config/service.json is written but not masked); the hook run as
    Claude Code runs it in a session started there (`CLAUDE_PROJECT_DIR`, and `CLAUDE_PID`:
    this process stands for Claude Code, its command line holding no `--settings`)."""
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.setenv("CLAUDE_PID", str(os.getpid()))
    record = Path(disk.journal_path(os.environ)).parent / "mask.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    files = {str(project / ".env"): ["OPENAI_API_KEY"]}
    record.write_text(json.dumps({"projects": {os.path.realpath(project): {"files": files}}}))
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"sandbox": SANDBOX}))
    mask_entry(str(project / ".env"))
    (project / "sub").mkdir()
    (project / "sub" / ".env").write_text("A=1\n")
    return project


def user_settings() -> Path:
    home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.environ["HOME"], ".claude")
    return Path(home) / "settings.json"


def mask_entry(path: str) -> None:
    """The entry `init --mask` puts in Claude Code's user settings for `path` (DESIGN §15)."""
    settings = user_settings()
    settings.parent.mkdir(parents=True, exist_ok=True)
    entry = {"path": path, "mode": "mask", "extract": "(x)", "onExtractNoMatch": "deny"}
    settings.write_text(json.dumps({"sandbox": {"credentials": {"files": [entry]}}}))


RUN_THE_APP = [
    "node --env-file=.env server.js",
    "source .env && npm start",
    "uv run --env-file .env app",
    "set -a; . ./.env; set +a; python app.py",
]


@pytest.mark.parametrize("command", RUN_THE_APP)
def test_a_sandboxed_command_reading_a_masked_file_is_left_to_the_mask(
    masked: Path, command: str
) -> None:
    """Claude Code's Bash in the masked project's sandbox: the app runs on stand-ins."""
    assert 0 == code(claude_event(masked)("Bash", {"command": command}))


@pytest.mark.parametrize("command", RUN_THE_APP)
def test_the_same_command_in_a_project_not_masked_is_blocked(project: Path, command: str) -> None:
    """No mask record for the project: nothing shows stand-ins, so the read is blocked."""
    assert 2 == code(claude_event(project)("Bash", {"command": command}))


@pytest.mark.parametrize(
    "command",
    [
        "cat sub/.env",
        "cd sub && cat .env",
        "cat config/service.json",
        "node --env-file=.env --env-file=sub/.env app.js",
        "echo OPENAI_API_KEY=x > .env",
    ],
)
def test_a_sandboxed_command_on_what_the_mask_does_not_cover_is_blocked(
    masked: Path, command: str
) -> None:
    """Files the mask does not cover (another .env, a written file sink) and writes."""
    assert 2 == code(claude_event(masked)("Bash", {"command": command}))


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Read", {"file_path": ".env"}),
        ("Grep", {"pattern": "KEY"}),
        ("Edit", {"file_path": ".env", "old_string": "a", "new_string": "b"}),
        (
            "Edit",
            {"file_path": ".claude/settings.local.json", "old_string": "t", "new_string": "f"},
        ),
        ("mcp__py__run", {"code": "print(open('.env').read())"}),
    ],
)
def test_the_hosts_own_file_tools_stay_blocked_in_a_masked_project(
    masked: Path, tool: str, tool_input: dict[str, object]
) -> None:
    """The sandbox covers the commands Claude Code runs, not its own tools (DESIGN §15)."""
    assert 2 == code(claude_event(masked)(tool, tool_input))


def test_a_call_leaving_the_sandbox_is_blocked_when_the_settings_allow_it(masked: Path) -> None:
    """`dangerouslyDisableSandbox` where the settings let a call leave: the real file."""
    local = masked / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"sandbox": {"enabled": True}}))
    bash = {"command": "source .env && npm start", "dangerouslyDisableSandbox": True}

    assert 2 == code(claude_event(masked)("Bash", bash))


def test_a_command_the_settings_run_outside_the_sandbox_keeps_it_blocked(masked: Path) -> None:
    """`excludedCommands` runs some commands unsandboxed: which ones is not the guard's guess."""
    settings = masked / ".claude" / "settings.json"
    settings.write_text(json.dumps({"sandbox": {"excludedCommands": ["docker"]}}))

    assert 2 == code(claude_event(masked)("Bash", {"command": "node --env-file=.env app.js"}))


def test_codex_whose_event_does_not_say_sandboxed_keeps_blocking(masked: Path) -> None:
    """Codex's event does not tell a sandboxed command from one run outside: blocked."""
    assert 2 == code(codex_event(masked)("Bash", {"command": "node --env-file=.env app.js"}))


def test_another_hosts_shell_in_a_masked_project_keeps_blocking(masked: Path) -> None:
    """Cursor's shell in the same project runs outside Claude Code's sandbox: blocked."""
    event = cursor(masked, "beforeShellExecution", {"command": "node --env-file=.env app.js"})

    assert 2 == code(event)


@pytest.mark.parametrize("command", RUN_THE_APP)
def test_a_file_the_user_settings_no_longer_mask_is_blocked(masked: Path, command: str) -> None:
    """The mask's record lists .env, but Claude Code's user settings hold no entry for it (a
    write whose mask keeper failed, or one the person took out): the sandbox shows the real
    value, so the read stays blocked."""
    user_settings().write_text(json.dumps({"sandbox": {"credentials": {"files": []}}}))
    assert 2 == code(claude_event(masked)("Bash", {"command": command}))


@pytest.mark.parametrize("command", RUN_THE_APP)
def test_a_masked_file_with_a_value_offprompt_did_not_write_is_blocked(
    masked: Path, command: str
) -> None:
    """A key typed into the masked .env by hand is outside the mask's `extract`: the sandbox
    would show it as it is, so the read stays blocked."""
    with (masked / ".env").open("a") as f:
        f.write("DB_PASSWORD=typed-by-hand\n")
    assert 2 == code(claude_event(masked)("Bash", {"command": command}))


@pytest.mark.parametrize("command", RUN_THE_APP)
def test_a_masked_file_of_comments_blanks_and_written_keys_is_left_to_the_mask(
    masked: Path, command: str
) -> None:
    """Comments, blank lines and `export` beside the keys offprompt wrote hide nothing."""
    text = (masked / ".env").read_text()
    (masked / ".env").write_text(f"# the app's keys\n\nexport {text}")
    assert 0 == code(claude_event(masked)("Bash", {"command": command}))


def test_a_skills_shell_command_in_a_masked_project_is_not_left_to_the_mask(
    masked: Path,
) -> None:
    """A skill's `!` command (PreSkillShellCommand) is not shown to run in the sandbox: the
    guard blocks its read of a masked file as if no mask were there."""
    event = {**claude_event(masked)("Bash", {"command": "cat .env"})}
    event["hook_event_name"] = "PreSkillShellCommand"
    assert 2 == code(event)


# -- what masked means per session (issue 43) ---------------------------------------------------


def test_a_session_started_above_the_masked_project_keeps_blocking(
    masked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session started in the folder above (its settings leave the sandbox off) and the
    agent `cd`ed into the masked project: the event's cwd is there, the session is not."""
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(masked.parent))
    assert 2 == code(claude_event(masked)("Bash", {"command": "cat .env"}))


def test_a_hook_without_the_sessions_start_folder_keeps_blocking(
    masked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No `CLAUDE_PROJECT_DIR` (or no running Claude Code to read): not known to be masked."""
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    assert 2 == code(claude_event(masked)("Bash", {"command": "cat .env"}))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(masked))
    monkeypatch.setenv("CLAUDE_PID", "1")  # not this hook's ancestor within reach
    assert 2 == code(claude_event(masked)("Bash", {"command": "cat .env"}))


@pytest.mark.parametrize(
    "network", [{"allowAllUnixSockets": True}, {"allowUnixSockets": ["/var/run/docker.sock"]}]
)
def test_a_sandbox_that_reaches_unix_sockets_is_not_left_the_read(
    masked: Path, network: dict[str, object]
) -> None:
    """A daemon behind a socket the sandbox lets commands reach opens files outside it."""
    settings = json.loads(user_settings().read_text())
    settings["sandbox"]["network"] = network
    user_settings().write_text(json.dumps(settings))
    assert 2 == code(claude_event(masked)("Bash", {"command": "node --env-file=.env app.js"}))


@pytest.mark.parametrize(
    "command",
    [
        "docker run --rm -v ./.env:/e alpine cat /e",
        'docker run -v "$PWD/.env:/e" alpine cat /e',
        "podman run --env-file .env alpine env",
        "/usr/bin/docker cp .env app:/e",
    ],
)
def test_a_daemon_client_naming_a_masked_file_is_blocked(masked: Path, command: str) -> None:
    """The client hands the path to a daemon outside the sandbox, which reads the real file."""
    assert 2 == code(claude_event(masked)("Bash", {"command": command}))


def guard_under(argv_tail: list[str], event: dict[str, object]) -> int:
    """The guard's exit code when run, as Claude Code runs its hooks, under a process whose
    command line ends with `argv_tail` (standing for Claude Code's own, CLAUDE_PID)."""
    script = f"CLAUDE_PID=$$ {shlex.quote(sys.executable)} -m offprompt guard; exit $?"
    done = subprocess.run(
        ["/bin/sh", "-c", script, "claude", *argv_tail],
        input=json.dumps(event).encode(),
        capture_output=True,
        env={**os.environ},
        timeout=30,
    )
    return done.returncode


def test_the_command_lines_settings_that_turn_the_sandbox_off_keep_blocking(
    masked: Path, tmp_path: Path
) -> None:
    """`claude --settings '{"sandbox":{"enabled":false}}'` (or a file of it) outranks the
    project's settings; `--setting-sources` may leave them out: blocked. Without: left."""
    event = claude_event(masked)("Bash", {"command": "cat .env"})
    off = json.dumps({"sandbox": {"enabled": False}})
    (tmp_path / "off.json").write_text(off)
    assert 0 == guard_under(["-p", "hi"], event)
    assert 0 == guard_under(["--settings", json.dumps({"model": "x"})], event)
    assert 2 == guard_under(["-p", "hi", "--settings", off], event)
    assert 2 == guard_under([f"--settings={off}"], event)
    assert 2 == guard_under(["--settings", str(tmp_path / "off.json")], event)
    assert 2 == guard_under(["--settings", "{not json"], event)
    assert 2 == guard_under(["--setting-sources", "user"], event)


def test_a_hard_link_to_a_written_file_is_blocked_under_any_name(masked: Path) -> None:
    """`build/cache.txt` is `.env` under another name (a hard link the mask's path does not
    cover): the host's Read and a sandboxed `cat` of it are blocked, by device and inode."""
    # Every masked file is one offprompt wrote: the journal says so.
    Journal().append(replace(JOURNALED, project=str(masked), file=".env"))
    (masked / "build").mkdir()
    os.link(masked / ".env", masked / "build" / "cache.txt")
    (masked / "build" / "other.txt").write_text("x\n")
    os.link(masked / "build" / "other.txt", masked / "build" / "other-link.txt")
    event = claude_event(masked)
    assert 2 == code(event("Read", {"file_path": str(masked / "build" / "cache.txt")}))
    assert 2 == code(event("Bash", {"command": "cat build/cache.txt"}))
    assert 2 == code(event("Bash", {"command": "cd build && cat cache.txt"}))
    assert 0 == code(event("Bash", {"command": "cat build/other-link.txt"}))
    assert 0 == code(event("Bash", {"command": "cat .env"}))  # the mask's own path
    # A search or copy of the folder holding the link reads it too.
    assert 2 == code(event("Grep", {"pattern": "KEY", "path": str(masked / "build")}))
    for command in ("grep -r KEY build", "tar c build | tar xO", "cp -r build elsewhere"):
        assert 2 == code(event("Bash", {"command": command})), command


def test_managed_settings_that_turn_the_sandbox_off_keep_blocking(
    masked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The machine's managed settings outrank every other layer: sandbox off there, or a
    managed file that cannot be read, and the read is blocked."""
    managed = tmp_path / "managed-settings.json"
    monkeypatch.setattr(claude_facts, "_MANAGED", str(managed))
    monkeypatch.setattr(claude_facts, "_MANAGED_DIR", str(tmp_path / "none.d"))
    event = claude_event(masked)("Bash", {"command": "cat .env"})
    managed.write_text(json.dumps({"permissions": {}}))
    assert 0 == code(event)
    managed.write_text(json.dumps({"sandbox": {"enabled": False}}))
    assert 2 == code(event)
    managed.write_text("{not json")
    assert 2 == code(event)
