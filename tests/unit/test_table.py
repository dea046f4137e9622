"""Terminal tables line up whatever the cells hold, and journal times read as local time."""

import os
import time
from collections.abc import Iterator

import pytest

from offprompt.table import cells, lines, local_time


@pytest.mark.parametrize(
    ("text", "width"),
    [
        ("abc", 3),
        ("🍋 🥝 🌮 🧀", 11),
        ("日本", 4),
        ("e\u0301", 1),  # e + combining acute accent
        ("❤\ufe0f", 1),  # the variation selector takes no cell of its own
        ("", 0),
    ],
)
def test_cells_counts_what_a_terminal_shows(text: str, width: int) -> None:
    """Emoji and CJK take two cells, combining marks and selectors none."""
    assert width == cells(text)


def test_a_column_of_emoji_lines_up_with_a_column_of_dashes() -> None:
    """The column after a fingerprint starts at the same cell on every row."""
    rows = [("FINGERPRINT", "CLIENT"), ("🍋 🥝 🌮 🧀", "claude-code"), ("-", "codex")]

    out = lines(rows)

    starts = {
        cells(line[: line.index(client)]) for line, (_, client) in zip(out, rows, strict=True)
    }
    assert {13} == starts


@pytest.fixture
def zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process in India's time zone (UTC+05:30, no daylight saving), then back."""
    monkeypatch.setenv("TZ", "IST-05:30")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.skipif(not hasattr(time, "tzset"), reason="time.tzset is Unix's")
@pytest.mark.usefixtures("zone")
def test_journal_times_are_shown_in_local_time() -> None:
    """02:41:07 UTC is 08:11:07 at UTC+05:30."""
    assert os.environ["TZ"] == "IST-05:30"
    assert "2026-11-30 08:11:07" == local_time("2026-11-30T02:41:07Z")


def test_a_time_in_another_form_is_shown_as_it_is() -> None:
    """A hand-edited journal line does not crash the table."""
    assert "yesterday" == local_time("yesterday")
