"""The guard's bash reader (offprompt/guard/bash.py) reads quotes and `$` as bash does, through
the lexer it shares with the .env analysis (offprompt/bashlex.py)."""

from pathlib import Path

import pytest

from offprompt.guard.bash import ShellSyntax, scan
from offprompt.guard.decide import decide
from offprompt.guard.protected import Protected


def texts(line: str) -> list[list[str]]:
    return [[w.text for w in c.words] for c in scan(line, "/home/me", "/work")]


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('cat \'a b\' "c\\"d"', [["cat", "a b", 'c"d']]),
        ("cat $'it\\'s' .env", [["cat", "it's", ".env"]]),  # `\'` does not end `$'…'`
        ('echo "a\\\nb" "\\x"', [["echo", "ab", "\\x"]]),
        ("cat $HOME/.env ${PWD}/x", [["cat", "/home/me/.env", "/work/x"]]),
    ],
)
def test_words_after_quote_removal(line: str, words: list[list[str]]) -> None:
    """Single, double and `$'…'` quotes and `$NAME` read as bash reads them."""
    assert words == texts(line)


def test_a_dollar_before_a_non_ascii_letter_is_a_dollar() -> None:
    """`$é` expands nothing in bash (names are ASCII): the word is known, not dynamic."""
    (command,) = scan("cat $é", "/home/me", "/work")

    assert [("cat", False), ("$é", False)] == [(w.text, w.dynamic) for w in command.words]


@pytest.mark.parametrize("line", ["cat 'open", 'cat "open', "cat $'open\\'"])
def test_an_open_quote_is_not_shell(line: str) -> None:
    """An open quote raises ShellSyntax, so the hook falls back to its crude check."""
    with pytest.raises(ShellSyntax):
        scan(line, "/home/me", "/work")


@pytest.mark.parametrize(
    ("command", "hit"),
    [("cat $'it\\'s' .env", ".env"), ("echo $'it\\'s' .env", None)],
)
def test_an_escaped_quote_in_ansi_c_quotes_is_read_as_bash_reads_it(
    tmp_path: Path, command: str, hit: str | None
) -> None:
    """`$'it\\'s'` is one word: the command after it is judged as it is, not as an open
    quote."""
    event = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(tmp_path)}

    assert hit == decide(event, Protected(), str(tmp_path))
