"""The python-dotenv check before a write asks python-dotenv itself, as an app reads the file."""

import logging
from pathlib import Path

import pytest
import sinks_readers as readers

from offprompt.errors import WriteError
from offprompt.sinks import SinkSpec, verify, write

DOTENV = SinkSpec(kind="dotenv", path=".env")


def test_an_escaped_backslash_before_a_closing_quote_does_not_stop_a_write(
    project: Path, canary: str
) -> None:
    """`X='a\\\\'` ends at its quote for python-dotenv, so a quoted value after it reads back."""
    (project / ".env").write_text("X='a\\\\'\n")
    values = {"OP_A": f"{canary} two"}
    write(project, DOTENV, values)
    for reader, seen in readers.all_readers(project, ["OP_A"]).items():
        assert (reader, values) == (reader, seen)


def test_a_line_python_dotenv_runs_into_ours_stops_the_write_and_names_it(
    project: Path, canary: str
) -> None:
    """`X='a\\'` escapes its quote, so python-dotenv would read our line as part of X."""
    before = b"# top\nX='a\\'\n"
    (project / ".env").write_bytes(before)
    with pytest.raises(WriteError) as caught:
        write(project, DOTENV, {"OP_A": f"{canary} two"})
    message = str(caught.value)
    assert "python-dotenv" in message
    assert "line 2" in message
    assert canary not in message
    assert before == (project / ".env").read_bytes()


def test_the_check_reads_crlf_text_as_the_file_would_be_read() -> None:
    """A CRLF file is read with universal newlines, as `dotenv_values(path)` reads it."""
    text = "X=1\r\nOP_A='l1\r\nl2'\r\n"
    texts = verify._Texts(text, "")
    assert verify._python_dotenv(texts, {"OP_A": "l1\nl2"}, ".env") is None
    assert verify._python_dotenv(texts, {"OP_A": "l1\r\nl2"}, ".env") is not None


def test_python_dotenv_warnings_for_skipped_lines_stay_quiet(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Its line numbers are of the text not yet written; ours name the file's own lines."""
    caplog.set_level(logging.DEBUG)
    text = "=bad\nOP_A=v\n"
    assert verify._python_dotenv(verify._Texts(text, text), {"OP_A": "v"}, ".env") is None
    assert [] == [r for r in caplog.records if r.name.startswith("dotenv")]
    assert [] == logging.getLogger("dotenv.main").filters
