"""A team's shared hook (DESIGN §9 "A team's shared hook"), run exactly as `init --shared` wrote
it, through `/bin/sh -c` as the hosts run it: on a machine without offprompt it blocks only a
call naming a dotenv file (or `.offprompt-`), with one line saying to install offprompt, and
lets every other call through; where offprompt is installed but fails, it blocks every call
as the personal hook does."""

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import shared
from click.testing import Result

Run = Callable[..., Result]
Event = dict[str, object]
pytestmark = pytest.mark.usefixtures("portable")

ABSENT = (
    "offprompt guard: blocked: this call names a .env file, which this project guards with"
    " offprompt, and offprompt is not installed here: install it (see the offprompt README)."
)
BROKEN = (
    "offprompt guard: blocked: offprompt could not run (exit 1): reinstall it, or take this"
    " hook out with offprompt remove."
)
# A PATH as a teammate's machine has it: the shell's tools, no offprompt (nor uvx).
BARE_PATH = "/usr/bin:/bin"


def _claude(project: Path, tool: str, tool_input: Event) -> Event:
    return {
        "session_id": "0b8e6f7a-1111-2222-3333-444455556666",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }


def _codex(project: Path, tool: str, tool_input: Event) -> Event:
    return {
        "session_id": "019a-codex",
        "turn_id": "1",
        "transcript_path": None,
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "call_1",
    }


def _gemini(project: Path, tool: str, tool_input: Event) -> Event:
    return {
        "session_id": "934fe459",
        "transcript_path": "/tmp/gemini/chats/session.jsonl",
        "cwd": str(project),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-12-01T12:44:03.875Z",
        "tool_name": tool,
        "tool_input": tool_input,
    }


def _cursor(project: Path, event: str, fields: Event) -> Event:
    return {
        "conversation_id": "c1",
        "generation_id": "g1",
        "model": "auto",
        "hook_event_name": event,
        "cursor_version": "2.4.0",
        "workspace_roots": [str(project)],
        "transcript_path": None,
        **fields,
    }


def _copilot(project: Path, tool: str, args: Event) -> Event:
    """The Copilot runtime's event: `toolArgs` is a JSON text inside the JSON."""
    return {"sessionId": "s1", "cwd": str(project), "toolName": tool, "toolArgs": json.dumps(args)}


PATCH = "*** Begin Patch\n*** Add File: src/app.py\n+print(1)\n*** End Patch\n"
# Per host: a shell command, a read of a file by the host's own tool, and a change to
# src/app.py (Cursor hooks no write: its read of the file).
Shapes = tuple[Callable[[Path, str], Event], Callable[[Path, str], Event], Callable[[Path], Event]]
SHAPES: dict[str, Shapes] = {
    "claude-code": (
        lambda p, c: _claude(p, "Bash", {"command": c}),
        lambda p, f: _claude(p, "Read", {"file_path": str(p / f)}),
        lambda p: _claude(p, "Write", {"file_path": str(p / "src/app.py"), "content": "x = 1"}),
    ),
    "codex": (
        lambda p, c: _codex(p, "Bash", {"command": c}),
        lambda p, f: _codex(p, "Bash", {"command": f"sed -n 1,200p {p / f}"}),
        lambda p: _codex(p, "apply_patch", {"command": PATCH}),
    ),
    "gemini": (
        lambda p, c: _gemini(p, "run_shell_command", {"command": c, "description": "x"}),
        lambda p, f: _gemini(p, "read_file", {"file_path": str(p / f)}),
        lambda p: _gemini(p, "write_file", {"file_path": "src/app.py", "content": "x = 1"}),
    ),
    "cursor": (
        lambda p, c: _cursor(p, "beforeShellExecution", {"command": c, "cwd": str(p)}),
        lambda p, f: _cursor(p, "beforeReadFile", {"file_path": str(p / f)}),
        lambda p: _cursor(p, "beforeReadFile", {"file_path": str(p / "src/app.py")}),
    ),
    "vscode": (
        lambda p, c: _copilot(p, "bash", {"command": c, "description": "x"}),
        lambda p, f: _copilot(p, "view", {"path": str(p / f)}),
        lambda p: _copilot(p, "create", {"path": str(p / "src/app.py"), "file_text": "x = 1"}),
    ),
}
# The file init --shared writes each host's hook into, and how the host takes an answer.
FILES = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/hooks.json",
    "vscode": ".github/hooks/offprompt.json",
}
ALLOW = {"cursor": b'{"permission":"allow"}\n'}


def deny(agent: str, why: str) -> bytes:
    """What the host reads on stdout beside exit 2 (Cursor's and Copilot's JSON deny, Claude
    Code's JSON block, which it shows the model instead of the hook's whole command)."""
    if agent == "claude-code":
        return (
            json.dumps({"decision": "block", "reason": why}, separators=(",", ":")).encode() + b"\n"
        )
    if agent == "cursor":
        answer = {"permission": "deny", "user_message": why, "agent_message": why}
    elif agent == "vscode":
        answer = {"permissionDecision": "deny", "permissionDecisionReason": why}
    else:
        return b""
    return json.dumps(answer, separators=(",", ":")).encode() + b"\n"


def hook_commands(value: object) -> list[str]:
    """Every hook command string in a hook file, in order."""
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k in ("command", "bash") and isinstance(v, str)]
        return found + [c for v in value.values() for c in hook_commands(v)]
    if isinstance(value, list):
        return [c for v in value for c in hook_commands(v)]
    return []


@pytest.fixture
def app(project: Path, canary: str) -> Path:
    """A project with a written .env and .env.local (each holding a canary) and a source."""
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    (project / ".env").write_text(f"KEY={canary}\n")
    (project / ".env.local").write_text(f"KEY={canary}\n")
    return project


def written_hook(run: Run, project: Path, agent: str, command: str = "offprompt serve") -> str:
    """The hook command `init --shared` wrote into `agent`'s file (the same for each event)."""
    done = run("init", "--agent", agent, *shared(project, command))
    assert 0 == done.exit_code, done.output
    commands = set(hook_commands(json.loads((project / FILES[agent]).read_text())["hooks"]))
    assert 1 == len(commands)
    return commands.pop()


def as_host(command: str, event: Event | str, path: str) -> subprocess.CompletedProcess[bytes]:
    """`command` as a host runs it: `/bin/sh -c`, the event on stdin, PATH `path`."""
    text = event if isinstance(event, str) else json.dumps(event)
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=text.encode(),
        capture_output=True,
        env={"PATH": path, "HOME": os.environ["HOME"]},
        timeout=30,
        check=False,
    )


def everyday(agent: str, project: Path) -> dict[str, Event]:
    shell, _, change = SHAPES[agent]
    return {"ls": shell(project, "ls -la src"), "change src/app.py": change(project)}


def naming(agent: str, project: Path) -> dict[str, Event | str]:
    """Calls that name a dotenv file, one spelling `.env` with a JSON `\\u002e` escape."""
    shell, read, _ = SHAPES[agent]
    escaped = json.dumps(shell(project, "cat .env")).replace(".env", "\\u002eenv")
    return {
        "cat .env": shell(project, "cat .env"),
        "read .env": read(project, ".env"),
        "grep KEY .env.local": shell(project, "grep KEY .env.local"),
        "\\u002eenv": escaped,
    }


def test_a_teammates_path_has_no_offprompt() -> None:
    """The PATH these tests give the hook lacks offprompt and uvx, as a teammate's would."""
    assert (None, None) == (
        shutil.which("offprompt", path=BARE_PATH),
        shutil.which("uvx", path=BARE_PATH),
    )


@pytest.mark.parametrize("agent", SHAPES)
def test_without_offprompt_everyday_calls_go_through(run: Run, app: Path, agent: str) -> None:
    """`ls` and a change to src/app.py: let through (exit 0, the host's allow where it has
    one), nothing on stderr."""
    command = written_hook(run, app, agent)

    got = {k: as_host(command, e, BARE_PATH) for k, e in everyday(agent, app).items()}

    want = (0, ALLOW.get(agent, b""), b"")
    assert {k: want for k in got} == {k: (d.returncode, d.stdout, d.stderr) for k, d in got.items()}


@pytest.mark.parametrize("agent", SHAPES)
def test_without_offprompt_a_call_naming_a_dotenv_file_is_blocked(
    run: Run, app: Path, agent: str, canary: str
) -> None:
    """`cat .env`, a read of .env by the host's tool, `grep KEY .env.local`, and `.env` spelt
    with a JSON escape: blocked with the host's answer and the one line saying to install."""
    command = written_hook(run, app, agent)

    got = {k: as_host(command, e, BARE_PATH) for k, e in naming(agent, app).items()}

    # The escaped one is blocked for what it could spell, and says so (ESCAPED).
    why = {k: ESCAPED if k.startswith("\\u") else ABSENT for k in got}
    want = {k: (2, deny(agent, w), w.encode() + b"\n") for k, w in why.items()}
    assert want == {k: (d.returncode, d.stdout, d.stderr) for k, d in got.items()}
    assert not any(canary.encode() in d.stdout + d.stderr for d in got.values())


@pytest.mark.parametrize("agent", SHAPES)
def test_an_installed_offprompt_that_fails_blocks_every_call(
    run: Run, app: Path, agent: str, tmp_path: Path
) -> None:
    """An `offprompt` on PATH that exits 1: every call blocked, `ls` too, with the mend line
    (fail closed, as the personal hook)."""
    command = written_hook(run, app, agent)
    broken = tmp_path / "broken-bin"
    broken.mkdir()
    (broken / "offprompt").write_text("#!/bin/sh\nexit 1\n")
    (broken / "offprompt").chmod(0o755)
    calls = {**everyday(agent, app), **naming(agent, app)}

    got = {k: as_host(command, e, f"{broken}:{BARE_PATH}") for k, e in calls.items()}

    want = (2, deny(agent, BROKEN), BROKEN.encode() + b"\n")
    assert {k: want for k in got} == {k: (d.returncode, d.stdout, d.stderr) for k, d in got.items()}


# Raw event text (a Claude Code Bash call's command, as it sits in the JSON) → blocked?
NAMES = [
    ("cat .env", True),
    ("cat ./.env.production", True),
    ("cat .ENV.Test", True),
    ("cat .env.staging.local", True),
    ("cat .env*", True),
    ("cat .env.*", True),
    ("ls .offprompt-0123456789abcdef/", True),
    ('cat \\".env\\"', True),
    ("cat \\\\\\n.env", True),  # a backslash-newline (JSON `\\\n`) ahead of the name
    ("cat \\t.env", True),
    ("printf \\u0041", True),  # any \u escape could spell a name: blocked
    ("cat .env.example", False),
    ("cat .envrc", False),
    ("node -e process.env.HOME", False),
    ("grep -r process.env[ src", False),
    ("printf \\\\users", False),
    ("git commit -m tidy", False),
]


@pytest.mark.parametrize(("command", "blocked"), NAMES)
def test_without_offprompt_the_check_reads_the_names_in_the_json(
    run: Run, app: Path, command: str, blocked: bool
) -> None:
    """The check over the event's raw JSON: dotenv names however the JSON or the case spells
    them, a `\\u` escape, globs straight after the name; not `.env.example`, `.envrc` nor
    `process.env`."""
    hook = written_hook(run, app, "claude-code")
    text = json.dumps(_claude(app, "Bash", {"command": "@"})).replace("@", command)

    done = as_host(hook, text, BARE_PATH)

    assert (2 if blocked else 0) == done.returncode


def test_without_offprompt_an_escape_inside_copilots_json_text_is_blocked(
    run: Run, app: Path
) -> None:
    """Copilot's toolArgs is JSON inside a string: `\\u002e` there reaches the hook as
    `\\\\u002e`, and still blocks."""
    hook = written_hook(run, app, "vscode")
    event = _copilot(app, "bash", {"command": "@"})
    event["toolArgs"] = str(event["toolArgs"]).replace("@", "cat \\u002eenv")

    done = as_host(hook, event, BARE_PATH)

    assert (2, ESCAPED.encode() + b"\n") == (done.returncode, done.stderr)
    assert "\\\\u002eenv" in json.dumps(event)


def test_without_offprompt_a_uvx_command_checks_names_too(
    run: Run, app: Path, fake_program: Callable[[str], Path]
) -> None:
    """`uvx --from … offprompt serve` shared, and no uvx on the teammate's PATH: `ls` goes
    through, `cat .env` is blocked with the install line naming the source."""
    fake_program("uvx")
    source = "git+https://example.invalid/o/offprompt"
    hook = written_hook(run, app, "claude-code", f"uvx --from {source} offprompt serve")
    shell, _, _ = SHAPES["claude-code"]
    line = (
        "offprompt guard: blocked: this call names a .env file, which this project guards with"
        f" offprompt, and offprompt is not installed here (nor could uvx fetch it from {source}):"
        f" install it: pipx install {source}\n"
    )

    done = {c: as_host(hook, shell(app, c), BARE_PATH) for c in ("ls", "cat .env")}

    assert {"ls": (0, b""), "cat .env": (2, line.encode())} == {
        c: (d.returncode, d.stderr) for c, d in done.items()
    }


TEAMMATES = (
    "note: teammates without offprompt: the shared hook blocks only calls that name a .env"
    " file, saying to install offprompt; every other call runs"
)
GIT = "uvx --from git+https://example.invalid/o/offprompt{} offprompt serve"
COMMIT = "@0123456789abcdef0123456789abcdef01234567"


def test_init_shared_says_once_what_a_teammate_without_offprompt_gets(
    run: Run, project: Path
) -> None:
    """One line, however many agents got the hook."""
    done = run("init", "--agent", "claude-code", "--agent", "codex", *shared(project))

    assert 0 == done.exit_code, done.output
    assert 1 == done.stdout.splitlines().count(TEAMMATES)


@pytest.mark.parametrize(
    "options", [["--no-guard", *shared(Path("."))], []], ids=["no-guard", "personal"]
)
def test_init_says_nothing_of_teammates_without_a_shared_hook(
    run: Run, project: Path, options: list[str]
) -> None:
    """No shared hook written (--no-guard, or the personal scope): no such line."""
    where = [o if o != "." else str(project) for o in options] or ["--project", str(project)]

    done = run("init", "--agent", "claude-code", *where)

    assert 0 == done.exit_code, done.output
    assert TEAMMATES not in done.stdout


@pytest.mark.parametrize(
    ("command", "said"),
    [(GIT.format(""), 1), (GIT.format("@v1"), 1), (GIT.format(COMMIT), 0)],
    ids=["default-branch", "tag", "commit"],
)
def test_a_hook_that_fetches_before_every_call_is_said_to_once(
    run: Run, project: Path, fake_program: Callable[[str], Path], command: str, said: int
) -> None:
    """`uvx --from git+…` not pinned to a commit fetches the source before each tool call the
    hook sees: init says so once (not per agent); a pinned commit is not said to."""
    fake_program("uvx")

    done = run("init", "--agent", "claude-code", "--agent", "codex", *shared(project, command))

    assert 0 == done.exit_code, done.output
    fetches = [line for line in done.stdout.splitlines() if "before every tool call" in line]
    assert said == len(fetches), done.stdout
    assert all(line.startswith("note: ") for line in fetches)


ESCAPED = (
    "offprompt guard: blocked: this call holds a JSON escape code, which could spell the name of"
    " a .env file, which this project guards with offprompt, and offprompt is not installed"
    " here: install it (see the offprompt README)."
)


def test_without_offprompt_a_call_blocked_only_for_an_escape_says_so(run: Run, app: Path) -> None:
    """A commit message with an escaped é names no .env file: it is blocked (the check cannot
    read what an escape spells) with its own reason, not "this call names a .env file"."""
    hook = written_hook(run, app, "claude-code")
    text = json.dumps(_claude(app, "Bash", {"command": 'git commit -m "caf\u00e9"'}))
    assert "\\u00e9" in text

    done = as_host(hook, text, BARE_PATH)

    assert (2, ESCAPED.encode() + b"\n") == (done.returncode, done.stderr)
