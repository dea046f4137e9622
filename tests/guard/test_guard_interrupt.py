"""Claude Code 2.1.335+ sends an `Interrupt` event (a turn stopped) to hooks registered for it;
its output is ignored by the host. The guard lets it be: exit 0, nothing on stdout or stderr,
whatever it carries, so a guard registered under a catch-all never stands in a stop's way."""

from pathlib import Path

import pytest
from test_guard import run_guard, written_project


@pytest.fixture
def project(tmp_path: Path, canary: str) -> Path:
    return written_project(tmp_path, canary)


def interrupt(project: Path, source: str, reason: str) -> dict[str, object]:
    """An Interrupt event as Claude Code 2.1.337's hook schema describes it."""
    return {
        "session_id": "c794b6b0-d8cc-4e1e-9472-d3910036779d",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "Interrupt",
        "source": source,
        "reason": reason,
        "via": "terminal",
    }


@pytest.mark.parametrize(
    ("source", "reason"),
    [("user", "stop"), ("session", "rewind"), ("system", "permission_denied"), ("user", "other")],
)
def test_an_interrupt_event_passes_quietly(project: Path, source: str, reason: str) -> None:
    """No tool is about to run: the guard answers nothing and lets it be."""
    done = run_guard(interrupt(project, source, reason))
    assert (0, b"", b"") == (done.returncode, done.stdout, done.stderr)


def test_an_interrupt_event_naming_a_protected_file_still_passes(project: Path) -> None:
    """Even fields that name `.env` (a stop's message quoting a command) read nothing: exit 0."""
    event = {**interrupt(project, "user", "stop"), "message": "cat .env", "tool_name": "Bash"}
    done = run_guard(event)
    assert (0, b"", b"") == (done.returncode, done.stdout, done.stderr)
