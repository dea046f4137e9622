"""`offprompt collect` in remote mode asks for the confirmation code on its own terminal
(DESIGN §17): the right code writes, a wrong one says how many tries are left, the fifth exits
3 with nothing written; without a terminal the code is read from stdin, or it says what to do.
The held submit is made by `confirm_collect.py`, as the person's page makes one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect
from dotenv import dotenv_values

from offprompt.crypto.confirm import shown

DRIVER = Path(__file__).resolve().parent / "confirm_collect.py"
PROMPT = "Type the code the offprompt page shows: "


def remote_env(tmp_path: Path, values: dict[str, str]) -> dict[str, str]:
    return {
        **os.environ,
        "OFFPROMPT_SANDBOX": "1",
        "OFFPROMPT_TUNNEL": "off",
        "CONFIRM_VALUES": json.dumps(values),
        "CONFIRM_CODE": str(tmp_path / "code.txt"),
    }


def read_code(tmp_path: Path) -> str:
    out = tmp_path / "code.txt"
    deadline = time.monotonic() + 15
    while not out.exists():
        assert time.monotonic() < deadline, "the submit was not held"
        time.sleep(0.05)
    return out.read_text()


def wrong(code: str) -> str:
    return ("2" if code[0] != "2" else "3") + code[1:]


def spawn(project: Path, tmp_path: Path, canary: str) -> pexpect.spawn:
    child = pexpect.spawn(
        sys.executable,
        [str(DRIVER), "collect", "API_KEY"],
        cwd=str(project),
        env=remote_env(tmp_path, {"API_KEY": canary}),
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 120),
    )
    child.setecho(False)  # what is on screen is what offprompt wrote, not what was typed
    return child


def test_collect_asks_for_the_code_on_its_terminal(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """A wrong code says 4 tries are left and asks again; the right one writes the value and
    prints the fingerprint. The code is never written back to the terminal."""
    child = spawn(project, tmp_path, canary)
    child.expect_exact(PROMPT)
    code = read_code(tmp_path)
    child.sendline(wrong(code))
    child.expect_exact("That code was wrong: 4 tries left.")
    child.expect_exact(PROMPT)
    child.sendline(shown(code).lower())
    child.expect(pexpect.EOF)
    child.close()
    screen = child.before or ""
    assert child.exitstatus == 0, screen
    assert "Fingerprint " in screen
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    assert code not in screen
    assert shown(code) not in screen
    assert canary not in screen


def test_the_fifth_wrong_code_exits_3_and_writes_nothing(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """Five wrong codes: exit 3, the reason said, no file."""
    child = spawn(project, tmp_path, canary)
    for left in (4, 3, 2, 1):
        child.expect_exact(PROMPT)
        child.sendline(wrong(read_code(tmp_path)))
        child.expect_exact(f"That code was wrong: {left} {'try' if left == 1 else 'tries'} left.")
    child.expect_exact(PROMPT)
    child.sendline(wrong(read_code(tmp_path)))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3
    assert "Five wrong confirmation codes" in (child.before or "")
    assert not (project / ".env").exists()


def test_without_a_terminal_the_code_is_read_from_stdin(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """stdin is a pipe: the code written to it is read as typed, and the value is written."""
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), "collect", "API_KEY"],
        cwd=project,
        env=remote_env(tmp_path, {"API_KEY": canary}),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    code = read_code(tmp_path)
    out, err = proc.communicate(code + "\n", timeout=30)
    assert proc.returncode == 0, err
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    assert out.splitlines()[-1].startswith("Fingerprint ")
    for text in (out, err):
        assert code not in text
        assert canary not in text


def test_with_stdin_closed_it_says_what_to_do(project: Path, tmp_path: Path, canary: str) -> None:
    """No stdin at all: it says the code cannot be typed and how to run it, exit 3, no file."""
    done = subprocess.run(
        [sys.executable, str(DRIVER), "collect", "API_KEY"],
        cwd=project,
        env=remote_env(tmp_path, {"API_KEY": canary}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 3
    assert "stdin is closed" in done.stderr
    assert "in a terminal" in done.stderr
    assert not (project / ".env").exists()
