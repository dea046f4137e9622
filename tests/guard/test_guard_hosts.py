"""`offprompt guard` as the other hosts run it (DESIGN §14): Gemini CLI's `BeforeTool`, Cursor's
`before…` events (answered on stdout too), VS Code's hooks in both of its harnesses' dialects,
and Windsurf's Cascade `pre_…` events; each event shape as the host's docs give it."""

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from test_guard import assert_blocked, run_guard, written_project

from offprompt.guard import hook as guard

Shell = Callable[[Path, str], dict[str, object]]
GIT = shutil.which("git", path="/usr/bin:/bin:/usr/local/bin")


@pytest.fixture(autouse=True)
def git_on_path(no_agent_env: Path) -> None:
    """git, as on any machine with a repository: the guard asks it what a search skips."""
    assert GIT is not None, "these tests need git"
    (no_agent_env / "git").symlink_to(GIT)


@pytest.fixture
def project(tmp_path: Path, canary: str) -> Path:
    return written_project(tmp_path, canary)


def gemini(project: Path, tool: str, tool_input: dict[str, object]) -> dict[str, object]:
    """A Gemini CLI 0.61 BeforeTool event, as its hook received it here."""
    return {
        "session_id": "934fe459",
        "transcript_path": "/tmp/gemini/chats/session.jsonl",
        "cwd": str(project),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-12-01T12:44:03.875Z",
        "tool_name": tool,
        "tool_input": tool_input,
    }


def cursor(project: Path, event: str, fields: dict[str, object]) -> dict[str, object]:
    """One of Cursor's hook events: its common fields (no cwd but `workspace_roots`)."""
    return {
        "conversation_id": "c1",
        "generation_id": "g1",
        "model": "auto",
        "hook_event_name": event,
        "cursor_version": "2.4.0",
        "workspace_roots": [str(project)],
        "user_email": None,
        "transcript_path": None,
        **fields,
    }


def vscode(project: Path, tool: str, tool_input: dict[str, object]) -> dict[str, object]:
    """VS Code's Local harness: camelCase common fields, snake_case tool fields."""
    return {
        "timestamp": "2026-12-01T10:30:00.000Z",
        "cwd": str(project),
        "sessionId": "s1",
        "hookEventName": "PreToolUse",
        "transcript_path": "/tmp/t.json",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "tool-123",
    }


def copilot(project: Path, tool: str, args: dict[str, object]) -> dict[str, object]:
    """The Copilot runtime (VS Code's Copilot harness, Copilot CLI): `toolArgs` a JSON text."""
    return {
        "sessionId": "s1",
        "timestamp": 1764584400000,
        "cwd": str(project),
        "toolName": tool,
        "toolArgs": json.dumps(args),
    }


def windsurf(action: str, info: dict[str, object]) -> dict[str, object]:
    return {
        "agent_action_name": action,
        "trajectory_id": "t1",
        "execution_id": "e1",
        "timestamp": "2026-12-01T10:30:00Z",
        "tool_info": info,
    }


SHELLS: dict[str, Shell] = {
    "gemini": lambda p, c: gemini(p, "run_shell_command", {"command": c, "description": "x"}),
    "cursor": lambda p, c: cursor(p, "beforeShellExecution", {"command": c, "cwd": str(p)}),
    "vscode": lambda p, c: vscode(p, "run_in_terminal", {"command": c, "explanation": "x"}),
    "copilot": lambda p, c: copilot(p, "bash", {"command": c, "description": "x"}),
    "windsurf": lambda p, c: windsurf("pre_run_command", {"command_line": c, "cwd": str(p)}),
}
ATTACKS = [
    ("cat .env", ".env"),
    ("head -1 ./.env", ".env"),
    ('cat "$PWD/.env"', ".env"),
    ("cat .e*", ".env"),
    ("source .env && echo $OPENAI_API_KEY", ".env"),
    ("python3 -c \"print(open('.env').read())\"", ".env"),
    ("cat config/service.json", "config/service.json"),
]
EVERYDAY = ["cat README.md", "grep -rn API src/", "git status", "cat .env.example", "ls -la .env"]


def answer(dialect: str, out: bytes) -> object:
    """What the host read on stdout after a call was let through: Cursor's JSON allow,
    nothing for the rest."""
    if dialect == "cursor":
        return json.loads(out)
    assert b"" == out
    return None


def assert_denied(dialect: str, done: subprocess.CompletedProcess[bytes], name: str, canary: str):
    why = done.stderr.decode().strip()
    if dialect == "cursor":
        assert {"permission": "deny", "user_message": why, "agent_message": why} == json.loads(
            done.stdout
        )
    elif dialect == "copilot":
        assert {"permissionDecision": "deny", "permissionDecisionReason": why} == json.loads(
            done.stdout
        )
    else:
        assert b"" == done.stdout  # Gemini CLI reads stdout as JSON: nothing stray there
    assert_blocked(subprocess.CompletedProcess(done.args, done.returncode, b"", done.stderr),
                   name, canary)  # fmt: skip
    assert canary.encode() not in done.stdout


@pytest.mark.parametrize("dialect", SHELLS)
@pytest.mark.parametrize(("command", "name"), ATTACKS)
def test_each_hosts_shell_event_that_reads_a_protected_file_is_blocked(
    project: Path, canary: str, dialect: str, command: str, name: str
) -> None:
    """Exit 2 and the reason on stderr in every host; Cursor and Copilot also read it as JSON."""
    done = run_guard(SHELLS[dialect](project, command))

    assert_denied(dialect, done, name, canary)


@pytest.mark.parametrize("dialect", SHELLS)
@pytest.mark.parametrize("command", EVERYDAY)
def test_each_hosts_everyday_command_passes(
    project: Path, dialect: str, command: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Exit 0 and no reason; Cursor gets an explicit allow (a silent fail-closed hook may
    count as failed), the others nothing."""
    code = guard.main(stdin=json.dumps(SHELLS[dialect](project, command)).encode())

    out, err = capsysbinary.readouterr()
    assert (0, b"") == (code, err)
    expected = {"cursor": {"permission": "allow"}}.get(dialect)
    assert expected == answer(dialect, out)


FILE_EVENTS: list[tuple[str, Callable[[Path], dict[str, object]], str]] = [
    ("gemini", lambda p: gemini(p, "read_file", {"file_path": ".env.local"}), ".env.local"),
    ("gemini", lambda p: gemini(p, "read_file", {"file_path": f"{p}/config/service.json"}),
     "service.json"),
    ("gemini", lambda p: gemini(p, "write_file", {"file_path": ".env", "content": "A=1"}), ".env"),
    ("gemini", lambda p: gemini(p, "replace", {"file_path": ".env", "old_string": "a",
                                               "new_string": "b"}), ".env"),
    ("gemini", lambda p: gemini(p, "read_many_files", {"include": [".env*"]}), ".env"),
    # Not a repository: its .gitignore ignores nothing, so the search opens .env.
    ("gemini", lambda p: gemini(p, "grep_search", {"pattern": "key"}), ".env"),
    ("gemini", lambda p: gemini(p, "grep_search", {"pattern": "K", "dir_path": "config"}),
     "service.json"),
    ("gemini", lambda p: gemini(p, "grep_search", {"pattern": "K", "dir_path": ".env"}), ".env"),
    ("cursor", lambda p: cursor(p, "beforeReadFile", {"file_path": f"{p}/.env", "content": "x"}),
     ".env"),
    ("cursor", lambda p: cursor(p, "beforeReadFile", {
        "file_path": f"{p}/README.md", "content": "# app",
        "attachments": [{"type": "file", "file_path": f"{p}/.env.local"}]}), ".env.local"),
    ("cursor", lambda p: cursor(p, "beforeMCPExecution", {
        "tool_name": "read_file", "tool_input": json.dumps({"path": f"{p}/.env"}),
        "mcp_server_name": "fs", "command": "npx fs-mcp"}), ".env"),
    ("cursor", lambda p: cursor(p, "preToolUse", {
        "tool_name": "Shell", "tool_input": {"command": "cat ../.env",
                                             "working_directory": f"{p}/src"}}), ".env"),
    ("vscode", lambda p: vscode(p, "read_file", {"filePath": f"{p}/.env", "startLine": 1}),
     ".env"),
    ("vscode", lambda p: vscode(p, "grep_search", {"query": "KEY", "includePattern": "**/*.json"}),
     "config/service.json"),
    ("copilot", lambda p: copilot(p, "view", {"path": f"{p}/.env"}), ".env"),
    ("copilot", lambda p: copilot(p, "edit", {"path": f"{p}/.env", "old_str": "a"}), ".env"),
    ("windsurf", lambda p: windsurf("pre_read_code", {"file_path": f"{p}/.env"}), ".env"),
    ("windsurf", lambda p: windsurf("pre_write_code", {"file_path": f"{p}/.env.production",
                                                       "edits": []}), ".env.production"),
    # A folder Cascade reads whole, holding the journal's file (git does not ignore it).
    ("windsurf", lambda p: windsurf("pre_read_code", {"file_path": f"{p}/config"}),
     "service.json"),
    ("windsurf", lambda p: windsurf("pre_mcp_tool_use", {
        "mcp_server_name": "fs", "mcp_tool_name": "read_file",
        "mcp_tool_arguments": {"path": f"{p}/.env"}}), ".env"),
]  # fmt: skip


@pytest.mark.parametrize(("dialect", "make", "name"), FILE_EVENTS)
def test_each_hosts_file_tools_on_a_protected_file_are_blocked(
    project: Path, canary: str, dialect: str, make: Callable[[Path], dict[str, object]], name: str
) -> None:
    """Reads, writes, searches and MCP calls that would open a protected file."""
    assert_denied(dialect, run_guard(make(project)), name, canary)


PASSING: list[tuple[str, Callable[[Path], dict[str, object]]]] = [
    ("gemini", lambda p: gemini(p, "read_file", {"file_path": "README.md"})),
    ("gemini", lambda p: gemini(p, "read_file", {"file_path": ".env.example"})),
    ("gemini", lambda p: gemini(p, "grep_search", {"pattern": "API", "dir_path": "src"})),
    ("gemini", lambda p: gemini(p, "grep_search", {"pattern": "API", "include_pattern": "*.py"})),
    ("gemini", lambda p: gemini(p, "glob", {"pattern": ".env*"})),
    ("gemini", lambda p: gemini(p, "list_directory", {"dir_path": "."})),
    ("gemini", lambda p: gemini(p, "web_fetch", {"prompt": "why is .env gitignored?"})),
    ("cursor", lambda p: cursor(p, "beforeReadFile", {"file_path": f"{p}/README.md",
                                                      "content": "# app"})),
    # Not an event before a tool: not the guard's, and no answer in Cursor's terms.
    ("other", lambda p: cursor(p, "beforeSubmitPrompt", {"prompt": "cat .env please"})),
    ("vscode", lambda p: vscode(p, "read_file", {"filePath": f"{p}/src/main.py"})),
    ("vscode", lambda p: vscode(p, "file_search", {"query": "**/.env*"})),
    ("copilot", lambda p: copilot(p, "view", {"path": f"{p}/README.md"})),
    ("windsurf", lambda p: windsurf("pre_read_code", {"file_path": f"{p}/src"})),
    ("windsurf", lambda p: windsurf("post_read_code", {"file_path": f"{p}/.env"})),
    ("windsurf", lambda p: windsurf("pre_user_prompt", {"user_prompt": "what is in .env?"})),
]  # fmt: skip


@pytest.mark.parametrize(("dialect", "make"), PASSING)
def test_each_hosts_everyday_tool_call_passes(
    project: Path,
    dialect: str,
    make: Callable[[Path], dict[str, object]],
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    """Other files, folders without a protected file in reach, listings, prompts and events
    after the fact: exit 0, no reason."""
    code = guard.main(stdin=json.dumps(make(project)).encode())

    out, err = capsysbinary.readouterr()
    assert (0, b"") == (code, err)
    assert {"cursor": {"permission": "allow"}}.get(dialect) == answer(dialect, out)


def test_a_search_reaches_an_unignored_env_outside_git(tmp_path: Path, canary: str) -> None:
    """No repository: nothing ignores `.env`, so a search of the folder would open it."""
    (tmp_path / ".env").write_text(f"K={canary}\n")
    (tmp_path / ".gitignore").write_text(".env\n")  # no repository: git does not read it

    done = run_guard(gemini(tmp_path, "grep_search", {"pattern": "K"}))

    assert_denied("gemini", done, ".env", canary)


def test_a_search_that_ignores_nothing_is_blocked(project: Path, canary: str) -> None:
    """`no_ignore`: even the .env git ignores is searched."""
    subprocess.run([str(GIT), "init", "-q", str(project)], check=True)
    search = {"pattern": "K", "dir_path": ".", "include_pattern": ".env*"}
    quiet = guard.main(stdin=json.dumps(gemini(project, "grep_search", search)).encode())
    event = gemini(project, "grep_search", {**search, "no_ignore": True})

    assert 0 == quiet
    assert_denied("gemini", run_guard(event), ".env", canary)


def test_a_search_of_a_repository_skips_what_git_ignores(
    project: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """In a repository that ignores `.env`, with the journal's file moved out of reach, a
    search of the whole project passes."""
    subprocess.run([str(GIT), "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".env\nconfig/\n")

    code = guard.main(stdin=json.dumps(gemini(project, "grep_search", {"pattern": "K"})).encode())

    assert (0, b"", b"") == (code, *capsysbinary.readouterr())


def test_a_cursor_event_the_rules_cannot_read_still_answers_in_json(
    project: Path, canary: str
) -> None:
    """A command that is not text: the crude check decides, the answer is still Cursor's."""
    event = cursor(project, "beforeShellExecution", {"command": {"x": "cat .env"}})

    assert_denied("cursor", run_guard(event), ".env", canary)


def skill_shell(project: Path, command: str) -> dict[str, object]:
    """A Claude Code 2.1.332 PreSkillShellCommand event (a skill's `!` command), as its hook
    received it: Bash's name and input beside the skill's own fields."""
    return {
        "session_id": "c794b6b0-d8cc-4e1e-9472-d3910036779d",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": str(project),
        "prompt_id": "06ee7898",
        "permission_mode": "default",
        "effort": {"level": "medium"},
        "hook_event_name": "PreSkillShellCommand",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "toolu_01:preamble-0",
        "command_name": "peek",
        "command_source": "projectSettings",
        "invoked_by": "claude",
    }


@pytest.mark.parametrize("command", ["cat .env", "python3 -c 'print(open(\".env\").read())'"])
def test_a_skills_shell_command_reading_env_is_blocked(
    project: Path, command: str, canary: str
) -> None:
    """Claude Code runs a skill's shell commands through PreSkillShellCommand, never
    PreToolUse: the guard reads that event as the Bash call it is."""
    assert_blocked(run_guard(skill_shell(project, command)), ".env", canary)


def test_a_skills_everyday_shell_command_passes(project: Path) -> None:
    done = run_guard(skill_shell(project, "ls -a"))
    assert (0, b"", b"") == (done.returncode, done.stdout, done.stderr)


def test_an_event_with_two_hosts_marks_is_read_in_the_first_host_s_dialect(
    project: Path, canary: str
) -> None:
    """The hosts' dialects are asked in HOSTS' order: Windsurf's mark before Cursor's, Cursor's
    before the Copilot runtime's (VS Code's), as the guard read them when one module held
    them all."""
    both = cursor(project, "beforeShellExecution", {"command": "cat .env"})
    windsurf = {
        **both,
        "agent_action_name": "pre_run_command",
        "tool_info": {"command_line": "cat .env", "cwd": str(project)},
    }
    assert_blocked(run_guard(windsurf), ".env", canary)  # Windsurf's: exit 2, nothing on stdout
    copilot = {**both, "toolName": "bash", "toolArgs": {"command": "cat .env"}}
    done = run_guard(copilot)
    assert 2 == done.returncode
    assert "deny" == json.loads(done.stdout)["permission"]  # Cursor's answer, not Copilot's
    assert canary not in (done.stdout + done.stderr).decode()
