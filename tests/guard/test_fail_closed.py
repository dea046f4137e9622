"""The hook command `offprompt init` writes fails closed (DESIGN §9 "Hooks fail closed"): run
through a real shell as the hosts run it, a guard that cannot start (its venv deleted, the tool
uninstalled), crashes or passes its deadline blocks the call with the host's blocking answer
and one stderr line saying how to mend it; the guard's own verdicts pass through unchanged."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import offprompt_venv
from test_guard import claude_event, written_project

from offprompt.agents import guard_install, hook_wrapper
from offprompt.agents.interface import ServerCommand
from offprompt.guard import hook

ROOT = Path(hook.__file__).parents[2]
MEND = "offprompt guard: blocked: offprompt could not run (exit {}):"
HOW = "reinstall it, or take this hook out with offprompt remove."
# How the hosts hand a hook command to a shell: Claude Code, Gemini CLI and Copilot `bash -c`;
# Codex `$SHELL -lc` (here /bin/sh, dash).
SHELLS = [[shutil.which("bash") or "/bin/bash", "-c"], ["/bin/sh", "-lc"]]


@pytest.fixture
def project(tmp_path: Path, canary: str) -> Path:
    return written_project(tmp_path, canary)


def run_hook(
    command: str, event: object, shell: list[str] | None = None, path: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`command` as a host runs it: through a shell with the person's PATH (or `path`), the
    event on stdin, stdin then closed."""
    return subprocess.run(
        [*(shell or SHELLS[0]), command],
        input=json.dumps(event).encode(),
        capture_output=True,
        env={**os.environ, "PATH": path or f"{os.environ['PATH']}:/usr/bin:/bin"},
        timeout=30,
        check=False,
    )


def command_for(offprompt: str, answer: hook_wrapper.Answer = "exit") -> str:
    """The command init writes for a server started as `OFFPROMPT serve`."""
    return guard_install.hook_command(ServerCommand(offprompt, ("serve",)), answer)


def assert_mended(done: subprocess.CompletedProcess[bytes], code: int, canary: str) -> None:
    """Blocked with exit 2 and exactly one stderr line: the mend line, naming the exit code."""
    err = done.stderr.decode()
    assert (2, b"") == (done.returncode, done.stdout)
    assert [MEND.format(code)] == [line[: len(MEND.format(code))] for line in err.splitlines()]
    assert err.rstrip("\n").endswith(HOW)
    assert canary not in err


@pytest.mark.parametrize("shell", SHELLS, ids=["bash", "sh"])
def test_a_deleted_venv_blocks_every_call_with_the_mend_line(
    project: Path, tmp_path: Path, canary: str, shell: list[str]
) -> None:
    """The hook pointed at a venv's offprompt, which worked; the venv deleted: `cat .env` and
    even `cat README.md` are blocked (the guard cannot tell them apart), one line says why."""
    offprompt = offprompt_venv(tmp_path / "venv")
    command = command_for(str(offprompt))
    cat_env = claude_event(project)("Bash", {"command": "cat .env"})
    readme = claude_event(project)("Bash", {"command": "cat README.md"})
    assert 2 == run_hook(command, cat_env, shell).returncode
    works = run_hook(command, readme, shell)
    assert (0, b"", b"") == (works.returncode, works.stdout, works.stderr)

    shutil.rmtree(tmp_path / "venv")

    assert_mended(run_hook(command, cat_env, shell), 127, canary)
    assert_mended(run_hook(command, readme, shell), 127, canary)


def test_an_uninstalled_tool_on_path_blocks(project: Path, tmp_path: Path, canary: str) -> None:
    """`uvx offprompt serve` declared, and no `uvx` any more: blocked, exit 127 named."""
    event = claude_event(project)("Bash", {"command": "cat .env"})
    server = ServerCommand("uvx", ("--from", "x", "offprompt", "serve"))

    done = run_hook(guard_install.hook_command(server), event, path=str(tmp_path / "empty"))

    assert_mended(done, 127, canary)


def test_a_guard_that_crashes_blocks(project: Path, tmp_path: Path, canary: str) -> None:
    """An `offprompt` that raises before deciding (exit 1, a traceback): blocked, and the
    traceback stays out of what the host shows; only the mend line reaches it."""
    offprompt = tmp_path / "bin" / "offprompt"
    offprompt.parent.mkdir()
    offprompt.write_text(f"#!{sys.executable}\nraise RuntimeError('a bug in offprompt')\n")
    offprompt.chmod(0o755)
    event = claude_event(project)("Bash", {"command": "cat README.md"})

    done = run_hook(command_for(str(offprompt)), event)

    assert_mended(done, 1, canary)
    assert b"Traceback" not in done.stderr


def test_a_guard_killed_by_a_signal_blocks(project: Path, tmp_path: Path, canary: str) -> None:
    """An `offprompt` killed (out of memory: SIGKILL, exit 137 in the shell): blocked."""
    offprompt = tmp_path / "offprompt"
    offprompt.write_text("#!/bin/sh\nkill -9 $$\n")
    offprompt.chmod(0o755)

    done = run_hook(command_for(str(offprompt)), claude_event(project)("Read", {"file_path": "x"}))

    assert_mended(done, 137, canary)


@pytest.mark.parametrize(
    ("answer", "deny"),
    [
        ("cursor", lambda m: {"permission": "deny", "user_message": m, "agent_message": m}),
        ("copilot", lambda m: {"permissionDecision": "deny", "permissionDecisionReason": m}),
    ],
)
def test_cursor_and_copilot_get_their_deny_on_stdout(
    project: Path, tmp_path: Path, answer: hook_wrapper.Answer, deny: object
) -> None:
    """A missing offprompt under Cursor's or VS Code's hook: the deny JSON those hosts read on
    stdout, holding the same mend line as stderr, and exit 2."""
    done = run_hook(
        command_for(str(tmp_path / "gone" / "offprompt"), answer), {"hook_event_name": "x"}
    )

    line = done.stderr.decode().rstrip("\n")
    assert 2 == done.returncode
    assert [deny(line)] == [json.loads(x) for x in done.stdout.decode().splitlines()]
    assert line.startswith(MEND.format(127))


EVENTS = {
    "claude": lambda p: claude_event(p)("Bash", {"command": "{}"}),
    "cursor": lambda p: {
        "hook_event_name": "beforeShellExecution",
        "cursor_version": "2.0",
        "workspace_roots": [str(p)],
        "command": "{}",
    },
    "copilot": lambda p: {"toolName": "bash", "toolArgs": {"command": "{}"}, "cwd": str(p)},
}


@pytest.mark.parametrize("dialect", EVENTS)
@pytest.mark.parametrize("command", ["cat .env", "cat README.md"])
def test_the_guards_own_verdicts_pass_through_unchanged(
    project: Path, dialect: str, command: str
) -> None:
    """The wrapped command answers exactly as the bare guard does: exit code, stdout (Cursor's
    and Copilot's JSON) and stderr (the reason), for a block and for a call let through."""
    event = json.loads(json.dumps(EVENTS[dialect](project)).replace("{}", command))
    answer: hook_wrapper.Answer = "exit" if dialect == "claude" else dialect
    argv = [sys.executable, "-m", "offprompt", "guard"]
    wrapped = hook_wrapper.wrap(tuple(argv), answer)

    bare = subprocess.run(argv, input=json.dumps(event).encode(), capture_output=True, check=False)
    got = run_hook(wrapped, event)

    assert (bare.returncode, bare.stdout, bare.stderr) == (got.returncode, got.stdout, got.stderr)
    assert bare.returncode == (2 if ".env" in command else 0)


def guard_process(code: str) -> list[str]:
    return [sys.executable, "-c", f"import sys\nfrom offprompt.guard import hook\n{code}"]


def test_a_guard_past_its_deadline_blocks_a_call_it_has_not_read(project: Path) -> None:
    """A host that never closes stdin: at the deadline the guard blocks (exit 2, one line),
    through the wrapper too, instead of waiting for the host's timeout."""
    argv = guard_process("sys.exit(hook.main(deadline=0.5))")
    started = time.monotonic()
    with subprocess.Popen(
        [*SHELLS[0], hook_wrapper.wrap(tuple(argv), "exit")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        assert proc.stderr is not None
        proc.stdin.write(b'{"tool_name": "Bash", "tool_input": {"command": "cat .env')
        proc.stdin.flush()
        try:
            proc.wait(timeout=20)  # stdin still open: the host has not finished writing
        finally:
            proc.kill()
        took = time.monotonic() - started
        out, err = proc.stdout.read(), proc.stderr.read()

    assert (2, b"") == (proc.returncode, out)
    assert [hook.TIMED_OUT.format(0.5)] == err.decode().splitlines()
    assert 0.4 < took < 5


def test_a_guard_stuck_deciding_is_blocked_at_its_deadline(project: Path) -> None:
    """The rules never return (a loop in pure Python): blocked at the deadline, whatever the
    call names; Cursor's deny JSON on stdout as well."""
    argv = guard_process(
        "def forever(*a):\n    while True:\n        pass\n"
        "hook.decide = forever\nsys.exit(hook.main(deadline=0.5))"
    )
    event = EVENTS["cursor"](project) | {"command": "cat README.md"}

    done = subprocess.run(
        argv, input=json.dumps(event).encode(), capture_output=True, timeout=20, check=False
    )

    why = hook.TIMED_OUT.format(0.5)
    assert (2, [why]) == (done.returncode, done.stderr.decode().splitlines())
    assert {"permission": "deny", "user_message": why, "agent_message": why} == json.loads(
        done.stdout
    )


def test_a_guard_that_decides_in_time_is_not_cut_short(project: Path) -> None:
    """An everyday call well inside the deadline: let through, and the alarm is off (a sleep
    after the answer past the deadline still ends with exit 0)."""
    argv = guard_process(
        "code = hook.main(deadline=0.5)\nimport time\ntime.sleep(1)\nsys.exit(code)"
    )
    event = claude_event(project)("Bash", {"command": "cat README.md"})

    done = subprocess.run(
        argv, input=json.dumps(event).encode(), capture_output=True, timeout=20, check=False
    )

    assert (0, b"", b"") == (done.returncode, done.stdout, done.stderr)


def test_an_event_larger_than_the_guard_reads_is_read_to_the_end(project: Path) -> None:
    """A 6 MiB event (a Write of a big file): the host's write finishes (Codex lets a call
    through when it cannot write the event), and the call, too large to read whole, is
    blocked (DESIGN §14)."""
    event = claude_event(project)("Write", {"file_path": ".env", "content": "x" * (6 << 20)})
    data = json.dumps(event).encode()
    with subprocess.Popen(
        [sys.executable, "-m", "offprompt", "guard"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdin is not None
        assert proc.stderr is not None
        proc.stdin.write(data)  # BrokenPipeError here if the guard stopped reading
        proc.stdin.close()
        proc.wait(timeout=30)
        err = proc.stderr.read()

    assert 2 == proc.returncode
    assert b"too large" in err


def test_the_host_limits_init_sets_outlast_the_guards_deadline() -> None:
    """Every host limit init writes is longer than the guard's own deadline, so a slow guard
    ends in the guard's block, never in the host's timeout (which lets the call through in
    Codex and Gemini CLI)."""
    assert hook_wrapper.HOST_LIMIT >= 2 * hook.DEADLINE


def test_a_block_without_a_reason_still_says_blocked(project: Path, tmp_path: Path) -> None:
    """A guard that exits 2 and writes nothing (its stderr gone): the host still gets a reason,
    since Codex lets a call through on an exit 2 with an empty stderr."""
    offprompt = tmp_path / "offprompt"
    offprompt.write_text("#!/bin/sh\nexit 2\n")
    offprompt.chmod(0o755)

    done = run_hook(command_for(str(offprompt)), claude_event(project)("Read", {"file_path": "x"}))

    assert (2, b"", b"offprompt guard: blocked.\n") == (done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize("shared", [False, True], ids=["personal", "shared"])
@pytest.mark.parametrize("answer", ["exit", "cursor", "copilot"])
def test_the_wrapper_reads_alike_in_every_shell_a_host_may_use(
    answer: hook_wrapper.Answer, shared: bool
) -> None:
    """Hosts hand the command to bash, `$SHELL -lc` (zsh, fish) or sh: the script sits in one
    pair of single quotes and holds nothing those shells read differently there (a single
    quote, a backslash before a quote or a backslash, a backtick); split as a POSIX shell
    splits it, it is `/bin/sh -c SCRIPT offprompt-guard ARGV…`. A team's shared form too."""
    argv = ("/home/me/.local/bin/offprompt", "guard")
    script = (hook_wrapper.shared_script if shared else hook_wrapper.script)(answer)

    assert [] == [bad for bad in ("'", "\\\\", "\\'", "`") if bad in script]
    assert ["/bin/sh", "-c", script, "offprompt-guard", *argv] == shlex.split(
        hook_wrapper.wrap(argv, answer, shared=shared)
    )
