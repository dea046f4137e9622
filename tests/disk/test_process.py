"""The one process runner (offprompt.disk.process), with real child programs: what every bounded
run of offprompt is promised, proved once here (the time limit kills the program with what it
started, each output is capped, a value goes in on stdin only, the environment is the one given,
nothing printed shows in a repr); then a reading of offprompt's sources that finds no other
module starting a program, save the two that are not bounded runs, each with why."""

from __future__ import annotations

import ast
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from offprompt.disk import process

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "offprompt"
SH = "/bin/sh"
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")


def _gone(pid: int, within: float = 3.0) -> bool:
    """The process `pid` has ended (a zombie counts: it runs nothing), waiting up to `within`."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().rsplit(")", 1)[-1].split()[0] == "Z":
            return True
        time.sleep(0.02)
    return False


def test_a_sleeper_is_killed_at_the_limit_with_its_grandchild(tmp_path: Path) -> None:
    """A program that starts a child and waits on it forever: stopped at the limit (no exit
    status), within the limit and the short read after it, and the child it started is gone
    too; what it printed before it hung is kept."""
    pid_file = tmp_path / "grandchild"
    script = f"sleep 60 & echo $! > {pid_file}; echo working; echo stuck >&2; wait"

    start = time.monotonic()
    ended = process.run([SH, "-c", script], env={"PATH": "/usr/bin:/bin"}, timeout=0.5)
    took = time.monotonic() - start

    assert (None, True, False) == (ended.code, ended.stopped, ended.too_long)
    assert 0.5 <= took < 0.5 + process.GRACE + 1.5
    assert (b"working\n", b"stuck\n") == (ended.out, ended.err)
    assert _gone(int(pid_file.read_text()))


def test_an_interruption_kills_the_program_with_what_it_started(tmp_path: Path) -> None:
    """An exception raised into the wait (Ctrl-C: KeyboardInterrupt) goes on up, and the
    program and the child it started are killed first, not left running."""
    pid_file = tmp_path / "grandchild"

    def interrupt(signum: int, frame: object) -> None:
        if pid_file.exists() and pid_file.read_text().strip():  # once the child is running
            raise KeyboardInterrupt
        signal.setitimer(signal.ITIMER_REAL, 0.05)

    before = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(KeyboardInterrupt):
            process.run(
                [SH, "-c", f"sleep 60 & echo $! > {pid_file}; wait"],
                env={"PATH": "/usr/bin:/bin"},
                timeout=30,
            )
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)

    assert _gone(int(pid_file.read_text()))


def test_a_program_that_closes_its_output_but_stays_is_stopped_at_the_limit() -> None:
    """Its outputs closed, still running: the wait for its exit is bounded by the same limit."""
    start = time.monotonic()
    ended = process.run([SH, "-c", "exec >&- 2>&-; exec sleep 60"], env={}, timeout=0.5)

    assert (None, True) == (ended.code, ended.stopped)
    assert time.monotonic() - start < 3


@pytest.mark.parametrize("stream", ["out", "err"])
def test_an_over_long_output_is_capped_and_the_program_killed(stream: str) -> None:
    """A program that prints without end on stdout (or stderr): stopped as soon as it passes
    the bound, with exactly the bound kept, long before the time limit."""
    most = 100_000
    redirect = "" if stream == "out" else " >&2"
    start = time.monotonic()
    ended = process.run(
        [SH, "-c", f"while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done{redirect}"],
        env={"PATH": "/usr/bin:/bin"},
        timeout=30,
        most=most,
    )

    assert (None, True, False) == (ended.code, ended.too_long, ended.stopped)
    assert most == len(getattr(ended, stream))
    assert time.monotonic() - start < 10


def test_output_at_the_bound_is_read_whole() -> None:
    """Exactly `most` bytes is an answer, not too long."""
    ended = process.run(
        [sys.executable, "-c", "import sys; sys.stdout.write('y' * 5000)"],
        env={},
        timeout=30,
        most=5000,
    )

    assert (0, 5000, False) == (ended.code, len(ended.out), ended.too_long)


def test_a_value_goes_in_on_stdin_only(tmp_path: Path, canary: str) -> None:
    """The value given as stdin reaches the program whole, and is in neither its command line
    nor its environment as the system shows them (/proc/PID/cmdline, /proc/PID/environ) while
    it runs; nor in the answer's repr."""
    got = tmp_path / "destination"
    pid_file = tmp_path / "pid"
    go_on = tmp_path / "go-on"
    # The program keeps what it read (the destination), then waits until the test has looked.
    script = (
        f"cat > {got}; echo $$ > {pid_file}; while [ ! -e {go_on} ]; do sleep 0.05; done; echo done"
    )
    results: list[process.Ended] = []
    runner = threading.Thread(
        target=lambda: results.append(
            process.run(
                [SH, "-c", script],
                env={"PATH": "/usr/bin:/bin", "OTHER": "1"},
                stdin=canary.encode(),
                timeout=30,
            )
        )
    )
    runner.start()
    try:
        deadline = time.monotonic() + 20
        while not pid_file.exists() or not pid_file.read_text().strip():
            assert time.monotonic() < deadline, "the program never read its stdin"
            time.sleep(0.02)
        pid = pid_file.read_text().strip()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    finally:
        go_on.touch()
        runner.join(30)

    assert got.read_text() == canary
    assert b"OTHER=1" in environ  # what was read is the program's own environment
    assert canary.encode() not in cmdline
    assert canary.encode() not in environ
    (ended,) = results
    assert (0, b"done\n") == (ended.code, ended.out)
    assert canary not in repr(ended)


def test_without_stdin_the_program_reads_nothing() -> None:
    """No stdin given: the program's stdin is empty (never this process's own), so a read
    ends at once."""
    ended = process.run(["/bin/cat"], env={}, timeout=10)

    assert (0, b"", b"") == (ended.code, ended.out, ended.err)


def test_stdin_larger_than_a_pipe_goes_in_while_the_answer_comes_out() -> None:
    """A megabyte on stdin echoed back at once: fed and read together, neither side stalls."""
    data = os.urandom(512 * 1024).hex().encode()
    ended = process.run(["/bin/cat"], env={}, stdin=data, timeout=30)

    assert (0, data) == (ended.code, ended.out)


def test_the_environment_is_exactly_the_one_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing of this process's environment reaches the program unless the caller gives it."""
    monkeypatch.setenv("OFFPROMPT_TEST_PARENT_ONLY", "parent")
    ended = process.run(["/usr/bin/env"], env={"ONLY": "this"}, timeout=10)

    assert (0, b"ONLY=this\n") == (ended.code, ended.out)


def test_a_program_that_ended_is_not_held_by_what_it_left_running() -> None:
    """It exits at once but leaves a process of its own session holding its output: the answer
    comes at the limit with its own exit status, not as stopped."""
    script = "setsid sleep 5 & echo said; exit 3"
    ended = process.run([SH, "-c", script], env={"PATH": "/usr/bin:/bin"}, timeout=0.5)

    assert (3, False, b"said\n") == (ended.code, ended.stopped, ended.out)


def test_a_program_that_cannot_start_is_the_systems_error(tmp_path: Path) -> None:
    """A missing program: the OSError the system gave (ENOENT), nothing left running."""
    with pytest.raises(FileNotFoundError):
        process.run([str(tmp_path / "missing")], env={}, timeout=5)


def test_an_answer_is_frozen_and_its_repr_shows_sizes_only(canary: str) -> None:
    """The Ended cannot be changed, and its repr shows sizes, never what was printed."""
    ended = process.run(["/bin/cat"], env={}, stdin=canary.encode(), timeout=10)

    assert repr(ended) == (
        f"Ended(code=0, out=<{len(canary)} bytes>, err=<0 bytes>, stopped=False, too_long=False)"
    )
    with pytest.raises(AttributeError):
        ended.code = 1  # type: ignore[misc]


def test_programs_are_found_in_absolute_folders_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty PATH entry or `.` is wherever offprompt runs: a program there is never found;
    the first of the names found in an absolute folder is."""
    for name in ("gh", "fly"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    monkeypatch.chdir(tmp_path)

    assert process.find(["gh"], {"PATH": ":.:/nonexistent"}) is None
    assert process.find(["flyctl", "fly"], {"PATH": str(tmp_path)}) == str(tmp_path / "fly")


# Reading the sources: no other module starts a program -------------------------------------

# The calls that start a program, by the module they come from.
STARTERS = {
    "subprocess": {
        "run",
        "Popen",
        "call",
        "check_call",
        "check_output",
        "getoutput",
        "getstatusoutput",
    },
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "os": {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp"},
    "pty": {"spawn", "fork"},
}
# os.execv…, os.spawnl…: every name that starts so.
OS_PREFIXES = ("exec", "spawn")
# An event loop's own: `loop.subprocess_exec(...)`.
LOOP_STARTERS = {"subprocess_exec", "subprocess_shell"}

RUNNER = "offprompt/disk/process.py"
# (module, call) pairs that start a program outside the runner, each for a reason: neither is a
# run waited for, so neither has a time limit to keep.
ELSEWHERE = {
    # cloudflared runs for the whole session, read line by line for its URL, and is stopped
    # when the session closes (tunnel/process.py: TunnelProcess.close), not at a time limit.
    ("offprompt/tunnel/process.py", "asyncio.create_subprocess_exec"),
    # The opener of the person's browser: detached on purpose (the browser must outlive this
    # server), waited on only for a grace period to see whether it failed at once.
    ("offprompt/browser.py", "subprocess.Popen"),
}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def program_starts(source: str) -> list[tuple[str, int]]:
    """Each call in `source` that starts a program, with its line, named as module.function:
    through the module (`subprocess.Popen`, `asyncio.subprocess.create_subprocess_exec`, an
    alias of either) or a name imported from it (`from subprocess import run as go`)."""
    tree = ast.parse(source)
    modules: dict[str, str] = {}  # local name -> starting module
    functions: dict[str, str] = {}  # local name -> module.function
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root in STARTERS:
                    modules[alias.asname or root] = alias.name if alias.asname else root
        elif isinstance(node, ast.ImportFrom) and node.module:
            root = node.module.split(".")[0]
            for alias in node.names:
                if root in STARTERS and _starts(root, alias.name):
                    functions[alias.asname or alias.name] = f"{root}.{alias.name}"
                elif root == "asyncio" and alias.name == "subprocess":
                    modules[alias.asname or alias.name] = "asyncio"
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        head, _, last = name.rpartition(".")
        root = modules.get(head.split(".")[0]) if head else None
        module = root.split(".")[0] if root else None
        if module is not None and _starts(module, last):
            found.append((f"{module}.{last}", node.lineno))
        elif not head and name in functions:
            found.append((functions[name], node.lineno))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in LOOP_STARTERS:
            found.append((f"loop.{node.func.attr}", node.lineno))
    return found


def _starts(module: str, function: str) -> bool:
    return function in STARTERS.get(module, set()) or (
        module == "os" and function.startswith(OS_PREFIXES)
    )


def test_the_reader_finds_each_way_of_starting_a_program() -> None:
    """The check below would catch each way a module could start a program itself."""
    ways = {
        "import subprocess\nsubprocess.run(['x'])": [("subprocess.run", 2)],
        "import subprocess as sp\nsp.Popen(['x'])": [("subprocess.Popen", 2)],
        "from subprocess import check_output as co\nco(['x'])": [("subprocess.check_output", 2)],
        "import asyncio\nasyncio.create_subprocess_exec('x')": [
            ("asyncio.create_subprocess_exec", 2)
        ],
        "import asyncio\nasyncio.subprocess.create_subprocess_shell('x')": [
            ("asyncio.create_subprocess_shell", 2)
        ],
        "import os\nos.execvp('x', ['x'])": [("os.execvp", 2)],
        "import os\nos.posix_spawn('x', ['x'], {})": [("os.posix_spawn", 2)],
        "import os\nos.system('x')": [("os.system", 2)],
        "loop.subprocess_exec(f, 'x')": [("loop.subprocess_exec", 1)],
    }
    assert ways == {source: program_starts(source) for source in ways}
    assert [] == program_starts("from offprompt.disk import process\nprocess.run(['x'], env={})")
    assert [] == program_starts("import os\nos.path.join('a', 'b')\nrunner.run(call)")


def test_no_module_but_the_runner_starts_a_program() -> None:
    """Every bounded run of a program in offprompt goes through disk.process: a module that
    starts one itself fails here, unless it is listed above with why."""
    found = {
        (rel, call)
        for path in sorted(PACKAGE.rglob("*.py"))
        if (rel := path.relative_to(ROOT).as_posix()) != RUNNER
        for call, _ in program_starts(path.read_text(encoding="utf-8"))
    }

    assert set() == found - ELSEWHERE
    assert set() == ELSEWHERE - found  # an exemption no longer needed goes
    assert program_starts((ROOT / RUNNER).read_text(encoding="utf-8"))  # the reader sees it
