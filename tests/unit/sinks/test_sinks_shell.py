"""offprompt.sinks.shell: which line starts bash reaches as a fresh command when sourcing."""

import pytest

from offprompt.sinks import shell

# (text, offset of a line start, bash begins a fresh command there)
CASES = [
    ("A=1\nB=2\n", 4, True),
    ("A='x\ny'\nB=2\n", 4, False),
    ("A='x\ny'\nB=2\n", 8, True),
    ('A="it\'s"\nB=2\n', 9, True),
    ("# it's a comment\nB=2\n", 17, True),
    ("A=1 # it's\nB=2\n", 11, True),
    ("A=1\r\nB=2\r\n", 5, True),
    ("A=${X}\nB=2\n", 7, True),
    ('A="${X}:1"\nB=2\n', 11, True),
    ("A=b#c'\nB=2\n", 7, False),
    ("A='it\\'s'\nB=2\n", 10, False),
    ("A=C:\\dir\\\nB=2\n", 10, False),
    ("A=$'a\\'b'\nB=2\n", 10, True),
    ("A=`true`\nB=2\n", 9, False),
    ("A=$(true)\nB=2\n", 10, False),
    ("if\nB=2\n", 3, False),
    ("{\nB=2\n", 2, False),
    ("cat <<EOF\nB=2\n", 10, False),
    ("A=(1 2)\nB=2\n", 8, False),
    ('A="${X:-"d"}"\nB=2\n', 14, False),
]


@pytest.mark.parametrize(("text", "offset", "clean"), CASES)
def test_scan_reports_fresh_command_starts(text: str, offset: int, clean: bool) -> None:
    """Clean only where bash certainly starts a new command outside any quote."""
    assert clean == (offset in shell.scan(text).clean)


def test_scan_says_where_it_stopped() -> None:
    """The offset and kind of the construct it cannot follow."""
    assert (6, "an unclosed quote") == shell.scan("A=1\nB='open\nC=2\n").stop
