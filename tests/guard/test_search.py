"""Recursive searches in a shell command (offprompt/guard/search.py): `grep -r` reads every
file under the folder, `rg` skips hidden and git-ignored files unless told otherwise."""

import json
from pathlib import Path

import pytest
from test_guard import SHAPES, assert_blocked, claude_event, run_guard, written_project

from offprompt.guard import hook as guard


@pytest.fixture
def project(tmp_path: Path, canary: str) -> Path:
    return written_project(tmp_path, canary)


RECURSIVE = [
    ("grep -r OPENAI .", ".env"),
    ("grep -rn KEY", ".env"),
    ("grep -R -i key ./", ".env"),
    ("grep -d recurse KEY .", ".env"),
    ("cd src && grep -rn KEY ..", ".env"),
    ("grep -r --include='*' KEY .", ".env"),
    ("grep -r --exclude='*.py' KEY .", ".env"),
    # The journal's file: not hidden, not ignored (no repository here).
    ("grep -r --exclude='.env*' KEY .", "config/service.json"),
    ("rg KEY", "config/service.json"),
    ("rg --hidden -g '!config' KEY", ".env"),
    ("rg -uu KEY .", ".env"),
]
RECURSIVE_PASSING = [
    "grep -rn API src/",
    "grep -r --include='*.py' KEY .",
    "grep -r --exclude='.env*' --exclude-dir=config KEY .",
    "grep -r KEY src config/../src",
    "rg KEY src",
    "rg -g '!config' KEY",
    "grep -n KEY README.md",
    "git grep -n KEY",
]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(("command", "name"), RECURSIVE)
def test_a_recursive_search_that_opens_a_protected_file_is_blocked(
    project: Path, canary: str, shape: str, command: str, name: str
) -> None:
    """grep -r (which reads every file under the folder) and rg (which skips hidden and
    git-ignored files unless told otherwise), their filters weighed."""
    event = SHAPES[shape](project)("Bash", {"command": command})

    assert_blocked(run_guard(event), name, canary)


@pytest.mark.parametrize("command", RECURSIVE_PASSING)
def test_a_recursive_search_that_reaches_no_protected_file_passes(
    project: Path, command: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A folder without one, filters that leave them out, rg skipping the hidden .env."""
    event = claude_event(project)("Bash", {"command": command})

    code = guard.main(stdin=json.dumps(event).encode())

    assert (0, b"", b"") == (code, *capsysbinary.readouterr())
