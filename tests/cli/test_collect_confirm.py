"""`offprompt collect` in remote mode asks for the confirmation code on its own terminal
(DESIGN §17): the right code writes, a wrong one says how many tries are left, the fifth exits
3 with nothing written; without a terminal the code is read from stdin, or it says what to do.

End to end: a real `offprompt collect` (`OFFPROMPT_SANDBOX=1`, no tunnel) prints its sealed
link; the person, a sealing HTTP client, opens it, claims the request, submits, and reads the
code off the page's answer. The code is never printed by offprompt itself."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import IO

import pexpect
from dotenv import dotenv_values
from sandbox.person import sealed_submit

from offprompt.crypto.confirm import shown

COLLECT = [sys.executable, "-m", "offprompt", "collect", "API_KEY"]
PROMPT = "Type the code the offprompt page shows: "
LINK = re.compile(r"http://127\.0\.0\.1:\d+/r/[0-9a-f]{32}#k=[A-Za-z0-9_-]+")


def remote_env() -> dict[str, str]:
    return {**os.environ, "OFFPROMPT_SANDBOX": "1", "OFFPROMPT_TUNNEL": "off"}


def submit(link: str, value: str) -> tuple[str, str]:
    """The person opens the link and submits `value`: the page holds it and shows the code.
    Returns the code and the fingerprint the person's page computed."""
    answer, expected = sealed_submit(link, {"API_KEY": value})
    data = answer.json()
    assert (answer.status, data["status"]) == (200, "confirm"), answer.body[:300]
    code = data["confirm_code"]
    assert isinstance(code, str)
    return code, expected


def wrong(code: str) -> str:
    return ("2" if code[0] != "2" else "3") + code[1:]


def spawn(project: Path) -> pexpect.spawn:
    child = pexpect.spawn(
        COLLECT[0],
        COLLECT[1:],
        cwd=str(project),
        env=remote_env(),
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 120),
    )
    child.setecho(False)  # what is on screen is what offprompt wrote, not what was typed
    return child


def link_on(child: pexpect.spawn) -> tuple[str, str]:
    """The link `collect` printed, and the screen up to it."""
    child.expect(LINK)
    return child.after, child.before or ""


def link_in(stream: IO[str]) -> tuple[str, str]:
    """Read `stream` until the link: the link and everything read."""
    seen = ""
    while True:
        line = stream.readline()
        assert line, f"no link in {seen!r}"
        seen += line
        found = LINK.search(line)
        if found:
            return found.group(0), seen


def test_collect_asks_for_the_code_on_its_terminal(project: Path, canary: str) -> None:
    """A wrong code says 4 tries are left and asks again; the right one writes the value and
    prints the fingerprint the person's page computed. The code is never written back to the
    terminal."""
    child = spawn(project)
    link, screen = link_on(child)
    code, expected = submit(link, canary)
    child.expect_exact(PROMPT)
    screen += child.before or ""
    child.sendline(wrong(code))
    child.expect_exact("That code was wrong: 4 tries left.")
    child.expect_exact(PROMPT)
    screen += child.before or ""
    assert not (project / ".env").exists()
    child.sendline(shown(code).lower())
    child.expect(pexpect.EOF)
    child.close()
    screen += child.before or ""
    assert child.exitstatus == 0, screen
    assert f"Fingerprint {expected}" in screen
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    assert code not in screen
    assert shown(code) not in screen
    assert canary not in screen


def test_the_fifth_wrong_code_exits_3_and_writes_nothing(project: Path, canary: str) -> None:
    """Five wrong codes: exit 3, the reason said, no file; the right code comes too late."""
    child = spawn(project)
    link, _ = link_on(child)
    code, _ = submit(link, canary)
    for left in (4, 3, 2, 1):
        child.expect_exact(PROMPT)
        child.sendline(wrong(code))
        child.expect_exact(f"That code was wrong: {left} {'try' if left == 1 else 'tries'} left.")
    child.expect_exact(PROMPT)
    child.sendline(wrong(code))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3
    assert "Five wrong confirmation codes" in (child.before or "")
    assert not (project / ".env").exists()


def test_without_a_terminal_the_code_is_read_from_stdin(project: Path, canary: str) -> None:
    """stdin is a pipe: the code written to it is read as typed, and the value is written;
    neither the code nor the value is on stdout or stderr."""
    proc = subprocess.Popen(
        COLLECT,
        cwd=project,
        env=remote_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        link, before = link_in(proc.stderr)
        code, expected = submit(link, canary)
        out, err = proc.communicate(code + "\n", timeout=30)
    finally:
        proc.kill()
        proc.wait()
    err = before + err
    assert proc.returncode == 0, err
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    assert out.splitlines()[-1] == f"Fingerprint {expected}"
    for text in (out, err):
        assert code not in text
        assert shown(code) not in text
        assert canary not in text


def test_with_stdin_closed_it_says_what_to_do(project: Path, canary: str) -> None:
    """No stdin at all: once the person's submit is held, it says the code cannot be typed
    and how to run it, exit 3, no file."""
    proc = subprocess.Popen(
        COLLECT,
        cwd=project,
        env=remote_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        link, _ = link_in(proc.stderr)
        submit(link, canary)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 3
    assert "stdin is closed" in err
    assert "in a terminal" in err
    assert not (project / ".env").exists()
