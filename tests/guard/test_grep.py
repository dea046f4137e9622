"""grep's words read once (offprompt/guard/grep.py): what a recursive search opens, and which
words may name a file the program reads, the pattern left out only when it is certain."""

from pathlib import Path

import pytest

from offprompt.guard.bash import Word
from offprompt.guard.decide import decide
from offprompt.guard.grep import parse
from offprompt.guard.protected import Protected


def words(line: str) -> list[Word]:
    return [Word(w) for w in line.split()]


def texts(found: list[Word]) -> list[str]:
    return [w.text for w in found]


@pytest.mark.parametrize(
    ("line", "files"),
    [
        ("KEY .env", [".env"]),  # the first operand is the pattern
        (".env src/main.py", ["src/main.py"]),
        ("-e KEY .env", [".env"]),
        ("-n -i KEY src", ["src"]),
        ("-f .env src", [".env", "src"]),  # a pattern file is read
        ("-f.env src", [".env", "src"]),
        ("--file=.env src", [".env", "src"]),
        ("-if .env src", [".env", "src"]),
        # An option argument before the first operand: which word is the pattern is unsure.
        ("-m 5 KEY .env", ["5", "KEY", ".env"]),
        ("-D KEY .env", ["KEY", ".env"]),
        # `-f` read as `-m`'s argument may still give the pattern: nothing is left out.
        ("KEY -m -f .env", ["KEY", "-f", ".env"]),
        ("-- -x .env", [".env"]),
        # ack's --match gives the pattern: every operand is a file it reads.
        ("--match=KEY .env", [".env"]),
        ("--match KEY .env", [".env"]),
    ],
)
def test_the_words_that_may_name_a_read_file(line: str, files: list[str]) -> None:
    """`files` holds pattern files, option arguments and operands, and leaves out only the
    word certain to be the pattern."""
    assert files == texts(parse(words(line)).files)


def test_the_search_options_are_read_from_the_same_words() -> None:
    """Recursion, filters and rg's switches come from the one reading, and `operands` are the
    words after the pattern."""
    got = parse(words("-rn --include *.py --exclude-dir=vendor -g !*.md --hidden -u KEY src lib"))

    assert (True, True, True) == (got.recursive, got.hidden, got.no_ignore)
    assert (["*.py"], ["*.md"], ["vendor", "*.md"]) == (
        got.includes,
        got.excludes,
        got.excluded_dirs,
    )
    assert ["src", "lib"] == texts(got.operands)


def test_an_option_known_only_at_run_time_leaves_the_search_undecided() -> None:
    """`grep -r$X KEY .`: the search rules decide nothing (the file check still runs)."""
    assert parse([Word("-r$X", dynamic=True), Word("KEY"), Word(".")]).dynamic
    assert not parse([Word("-r"), Word("KEY"), Word(".")]).dynamic


@pytest.mark.parametrize(
    ("command", "hit"),
    [
        ("ag -D KEY .env", ".env"),
        ("grep -m 5 KEY .env", ".env"),
        ("grep -f .env src/main.py", ".env"),
        ("grep KEY -m -f .env", ".env"),
        ("grep -n .env src/main.py", None),
        ("grep -e .env -n src/main.py", None),
    ],
)
def test_a_grep_command_is_judged_by_the_words_it_reads(
    tmp_path: Path, command: str, hit: str | None
) -> None:
    """A grep that may open a dotenv file is blocked; one that only searches for its name is
    not."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("x\n")
    event = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(tmp_path)}

    assert hit == decide(event, Protected(), str(tmp_path / "home"))
