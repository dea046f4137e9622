"""offprompt.sinks.shell: the assignments bash makes when it sources a .env, or what stops it."""

import tempfile
from pathlib import Path

import pytest
import sinks_readers as readers
from hypothesis import event, given, settings
from hypothesis import strategies as st

from offprompt.sinks import shell

# (text, every (name, value) assigned in order; None where the value expands)
UNDERSTOOD = [
    ("", []),
    ("# it's a comment\n\n  \t\n", []),
    ("A=1\nB=2\n", [("A", "1"), ("B", "2")]),
    ("A='x\ny'\nB=2\n", [("A", "x\ny"), ("B", "2")]),
    ('A="it\'s"\nB=2\n', [("A", "it's"), ("B", "2")]),
    ("A=1 # it's\nB=2\n", [("A", "1"), ("B", "2")]),
    ("A=1\r\n\r\nB=2 #\r\n", [("A", "1\r"), ("B", "2")]),
    ('A=${X}\nB="${X:-d}:$1"\n', [("A", None), ("B", None)]),
    ("A=b#c\nB=a\\ b\n", [("A", "b#c"), ("B", "a b")]),
    ("A=$'a\\'b'\n", [("A", None)]),
    ("A=C:\\dir\\\nB=2\n", [("A", "C:dirB=2")]),
    ("A=1 B=2;C=3 && D=4 ||\n\n# c\nE=5\n", [(n, str(i)) for i, n in enumerate("ABCDE", 1)]),
    ("export A=1 B\nexport C+=x\n", [("A", "1"), ("C", "x")]),
    ('A="a\\"b\\$c\\d"\n', [("A", 'a"b$c\\d')]),
    ("A=$ B=a$\n", [("A", "$"), ("B", "a$")]),
    ("A=~/x\n", [("A", None)]),
    ("\ufeffA=1\nB=2\n", [("B", "2")]),
]


@pytest.mark.parametrize(("text", "assigned"), UNDERSTOOD)
def test_analyze_lists_every_assignment(text: str, assigned: list[tuple[str, str | None]]) -> None:
    """Assignment-only files are understood, each assignment with its value after quote removal."""
    script = shell.analyze(text)
    assert None is script.problem
    assert assigned == [(a.name, a.value) for c in script.commands for a in c.assignments]


# (text, offset of the problem, what it says starts with)
NOT_UNDERSTOOD = [
    ("A=1\nB='open\nC=2\n", 6, "an unclosed quote"),
    ('A="open\n', 2, "an unclosed quote"),
    ("A=`true`\n", 2, "a backtick"),
    ('A="$(true)"\n', 3, "a $(...) command"),
    ('A="$\\\n(true)"\n', 3, "a $(...) command"),
    ("A=$((B=1))\n", 2, "a $((...)) arithmetic"),
    ("A=$[B=1]\n", 2, "a $[...] arithmetic"),
    ("if\nB=2\n", 0, "the shell keyword 'if'"),
    ("{\nB=2\n", 0, "the shell keyword '{'"),
    ("A=1 <<EOF\nB=2\n", 4, "a redirection"),
    ("A=(1 2)\n", 2, "a parenthesis"),
    ('A="${X:-"d"}"\n', 3, "a ${...} expansion"),
    ("A=${X:=d}\n", 2, "a ${...} expansion"),
    ("A[1]=2\n", 0, "an array element assignment"),
    ("A=1 B\n", 4, "a command"),
    ('"A"=1\n', 0, "a command"),
    ("\\export A=1\n", 0, "a command"),
    ("A=1 | B=2\n", 4, "a pipe"),
    ("A=1 & B=2\n", 4, "a '&'"),
    ("; A=1\n", 0, "a ';' with no command"),
    ("A=1 &&\n", 4, "a && with no command after it"),
    ("A=1\0\n", 3, "a NUL character"),
    ("PS1=x\n", 0, "an assignment to PS1"),
    ("export -p\n", 7, "an 'export' with an option"),
]


@pytest.mark.parametrize(("text", "offset", "what"), NOT_UNDERSTOOD)
def test_analyze_stops_at_the_first_construct_it_does_not_follow(
    text: str, offset: int, what: str
) -> None:
    """The offset and kind of the construct, in words."""
    problem = shell.analyze(text).problem
    assert problem is not None
    assert (offset, what) == (problem.offset, problem.what[: len(what)])


def test_commands_after_and_or_say_so() -> None:
    """A command joined by && or || runs only on the previous one's status."""
    commands = shell.analyze("A=1 &&\nB=2\nC=3 || D=4\n").commands
    assert [("", -1), ("&&", 4), ("", -1), ("||", 15)] == [(c.after, c.after_at) for c in commands]


# --- Property against real bash ------------------------------------------------------------
# Pieces that mostly make understood text, and a few raw characters that unbalance it. No
# `export`, CR or `||`: those make assignments analyze counts but bash may skip (an assignment
# before a command is temporary), which is safe but not what this test compares.
PIECES = [
    *["A=", "B=", "A+=", "x", " ", "\n", ";", " && ", "#c", "\t"] * 3,
    "'a b'",
    "'l1\nl2'",
    '"q $A"',
    '"it\'s \\" \\$ \\\\ \\x"',
    '"${B:-d}"',
    "${A}",
    "$'t\\'x'",
    "\\ ",
    "\\\n",
    "\\\\",
    "$",
    "=",
    "é",
    "'",
    '"',
    "\\",
    "{",
    "}",
    "~",
    "$\\\n",
]


@settings(max_examples=300, deadline=None, database=None)
@given(pieces=st.lists(st.sampled_from(PIECES), min_size=1, max_size=12))
def test_understood_text_gives_bash_values_analyze_predicts(pieces: list[str]) -> None:
    """Wherever analyze understands a text and knows a value, real bash ends with that value."""
    text = "".join(pieces)
    script = shell.analyze(text)
    if script.problem is not None:
        return
    expected: dict[str, str | None] = {}
    for a in (a for c in script.commands for a in c.assignments):
        before = expected.get(a.name, "")
        joined = None if before is None or a.value is None else before + a.value
        expected[a.name] = joined if a.append else a.value
    known = {n: v for n, v in expected.items() if v is not None}
    if not known:
        return
    event("compared with bash")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / ".env").write_text(text)
        assert known == readers.bash(Path(tmp), list(known))
