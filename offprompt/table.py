"""Tables for a terminal: columns padded by how many cells each text takes on screen, so a row
of emoji (two cells each) lines up with the rows around it; and journal times in local time."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime

__all__ = ["cells", "lines", "local_time"]

# Shown in no cell of their own: the zero-width joiner and space, and the variation selectors.
_ZERO_WIDTH = frozenset({"\u200b", "\u200c", "\u200d", "\u2060", "\ufe0e", "\ufe0f"})


def cells(text: str) -> int:
    """How many terminal cells `text` takes: wide and full-width characters (emoji, CJK) two,
    combining marks and zero-width characters none, everything else one."""
    width = 0
    for char in text:
        if char in _ZERO_WIDTH or unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def lines(rows: Sequence[Sequence[str]], gap: str = "  ") -> list[str]:
    """`rows` laid out in columns, each padded to its widest cell; the last column unpadded."""
    if not rows:
        return []
    count = max(len(row) for row in rows)
    widths = [max((cells(row[i]) for row in rows if i < len(row)), default=0) for i in range(count)]
    out = []
    for row in rows:
        padded = [
            cell if i == len(row) - 1 else cell + " " * (widths[i] - cells(cell))
            for i, cell in enumerate(row)
        ]
        out.append(gap.join(padded).rstrip())
    return out


def local_time(at: str) -> str:
    """A journal time (`2026-11-30T02:41:07Z`, UTC) as this machine's local time
    (`2026-11-30 03:41:07`); a time in any other form is shown as it is."""
    try:
        when = datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return at
    return when.astimezone().strftime("%Y-%m-%d %H:%M:%S")
