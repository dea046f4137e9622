"""`offprompt init` on a terminal, for an agent whose one user-level entry serves every project
(Codex): when that entry would start another command for projects offprompt set up before, init
asks first (issue 46 item 5); `--yes` (and a script, stdin no terminal) goes on, saying so. A
real pseudo-terminal, as a person who types the command gets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect  # type: ignore[import-untyped]
from cli_helpers import COMMAND

OTHER = "/opt/other/bin/offprompt serve"
QUESTION = "change it for them too?"


def init(project: Path, command: str, *more: str) -> list[str]:
    return [
        sys.executable, "-m", "offprompt", "init", "--agent", "codex", "--project", str(project),
        "--command", command, *more,
    ]  # fmt: skip


def two_set_up(tmp_path: Path, home: Path) -> tuple[Path, Path]:
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    alpha.mkdir()
    beta.mkdir()
    done = subprocess.run(init(alpha, COMMAND), capture_output=True, text=True, timeout=60)
    assert 0 == done.returncode, done.stdout + done.stderr
    return alpha, beta


def user_config(home: Path) -> str:
    return (home / ".codex" / "config.toml").read_text()


def test_on_a_terminal_init_asks_and_no_keeps_the_entry(tmp_path: Path, home: Path) -> None:
    """Answer no: the user config is byte for byte as before, the line says it was left."""
    alpha, beta = two_set_up(tmp_path, home)
    before = user_config(home)
    argv = init(beta, OTHER)

    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", timeout=30, env=dict(os.environ))
    try:
        child.expect_exact(str(alpha))
        child.expect_exact(QUESTION)
        child.sendline("n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)

    assert before == user_config(home)
    assert "left as it is" in (child.before or "")


def test_yes_goes_on_without_asking(tmp_path: Path, home: Path) -> None:
    """`--yes` on a terminal: no question, the entry starts the new command, said so."""
    alpha, beta = two_set_up(tmp_path, home)
    argv = init(beta, OTHER, "--yes")

    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", timeout=30, env=dict(os.environ))
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)

    said = child.before or ""
    assert QUESTION not in said
    assert "/opt/other/bin/offprompt" in user_config(home)
    assert f"{alpha}" in said
