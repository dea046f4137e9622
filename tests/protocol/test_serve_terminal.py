"""`offprompt serve` started by a person on a terminal says what it is (DESIGN §9), and still
serves: a real pseudo-terminal, as a person who types the command gets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

CONSOLE_SCRIPT = str(Path(sys.executable).with_name("offprompt"))
NOTE = "offprompt serve: this is the MCP server your agent starts itself"


@pytest.mark.parametrize(
    "argv",
    [[CONSOLE_SCRIPT, "serve"], [sys.executable, "-m", "offprompt", "serve"]],
    ids=["console script", "python -m"],
)
def test_serve_on_a_terminal_says_agents_start_it_and_to_run_init(argv: list[str]) -> None:
    """On a TTY: one line naming `offprompt init`, then a typed word gets the parse error."""
    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", timeout=10)
    try:
        child.expect_exact(NOTE)
        child.expect_exact("`offprompt init`")
        child.expect(r"\r?\n")
        child.sendline("hello")
        child.expect(r"\{.*\}")
        answer = json.loads(child.after)
        assert -32700 == answer["error"]["code"]
    finally:
        child.sendeof()
        child.close(force=True)


def test_serve_on_a_pipe_prints_nothing_on_stderr() -> None:
    """A host starts it on pipes: no note there (hosts show stderr in their logs)."""
    done = subprocess.run(
        [sys.executable, "-m", "offprompt", "serve"],
        input=b"",
        capture_output=True,
        timeout=20,
        check=True,
    )

    assert (b"", b"") == (done.stdout, done.stderr)
