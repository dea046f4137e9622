"""No value, nor any part of one, in an exception message, a repr or a log line."""

import logging
import subprocess
from pathlib import Path

import pytest

from offprompt.errors import OffpromptError, TrackedFile, UnsafeValue, WriteError
from offprompt.sinks import SinkSpec, check_values, write


def assert_clean(error: BaseException, canary: str) -> None:
    assert canary not in str(error)
    assert canary not in repr(error)
    assert canary not in repr(error.args)


def test_unsafe_value_error_and_reasons_hold_no_value(project: Path, canary: str) -> None:
    """Refusing a value names the key, not the value."""
    values = {"A": f"{canary}'\"", "B": f"${{{canary}}}", "C": f"{canary}\r"}
    reasons = check_values(SinkSpec(), values)
    assert ["A", "B", "C"] == sorted(reasons)
    assert all(canary not in r for r in reasons.values())
    with pytest.raises(UnsafeValue) as caught:
        write(project, SinkSpec(), values)
    assert_clean(caught.value, canary)


def test_write_result_repr_holds_no_value(project: Path, canary: str) -> None:
    """read_back is out of the repr."""
    result = write(project, SinkSpec(), {"A": canary})
    assert canary == result.read_back["A"]
    assert canary not in repr(result)


def test_tracked_file_error_holds_no_value(project: Path, canary: str) -> None:
    """The git refusal names the file only."""
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".env").write_text("X=1\n")
    subprocess.run(["git", "add", ".env"], cwd=project, check=True)
    with pytest.raises(TrackedFile) as caught:
        write(project, SinkSpec(), {"A": canary})
    assert_clean(caught.value, canary)


def test_swallowed_line_error_holds_no_value(project: Path, canary: str) -> None:
    """The refusal to write below an unclosed quote names the key only."""
    (project / ".env").write_text('X="open\n')
    with pytest.raises(WriteError) as caught:
        write(project, SinkSpec(), {"A": f"it's {canary}"})
    assert_clean(caught.value, canary)


def test_existing_file_content_stays_out_of_errors(project: Path, canary: str) -> None:
    """A secret already in an unreadable file is not quoted back either."""
    (project / ".env").write_bytes(f"OLD={canary}\n".encode() + b"\xff")
    with pytest.raises(OffpromptError) as caught:
        write(project, SinkSpec(), {"A": "1"})
    assert_clean(caught.value, canary)


def test_debug_log_holds_no_value(
    project: Path, canary: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Logging at debug names keys and counts only."""
    with caplog.at_level(logging.DEBUG, logger="offprompt"):
        write(project, SinkSpec(), {"A": canary})
        write(project, SinkSpec("file", "k"), {"K": canary})
    assert "A" in caplog.text
    assert canary not in caplog.text


def test_hidden_line_error_holds_no_value(project: Path, canary: str) -> None:
    """The refusal that names a line hiding the new one quotes neither it nor any value."""
    (project / ".env").write_text(f"OLD={canary}\n  # {canary}\nX= \t\n")
    with pytest.raises(WriteError) as caught:
        write(project, SinkSpec(), {"A": canary})
    assert "line 3 of .env" in str(caught.value)
    assert_clean(caught.value, canary)
