"""offprompt.sinks.dotenv.parse reads .env text exactly as python-dotenv does, with offsets."""

import io

import pytest
from dotenv.parser import parse_stream
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from offprompt.sinks import dotenv

# (text, [(key, value, first_line, last_line)])
CASES = [
    ("A=1\n", [("A", "1", 1, 1)]),
    ("A=1", [("A", "1", 1, 1)]),
    ("# comment\n\nA=1\n", [("A", "1", 3, 3)]),
    ("export A=1\n", [("A", "1", 1, 1)]),
    ("  export   A = 1  \n", [("A", "1", 1, 1)]),
    ("A='x y' # c\n", [("A", "x y", 1, 1)]),
    ("A=x y # c\n", [("A", "x y", 1, 1)]),
    ("A=x#y\n", [("A", "x#y", 1, 1)]),
    ("A= # c\n", [("A", "# c", 1, 1)]),
    ("A=\nB=''\nC=\"\"\n", [("A", "", 1, 1), ("B", "", 2, 2), ("C", "", 3, 3)]),
    ("A\n", [("A", None, 1, 1)]),
    ("'A'=1\n", [("A", "1", 1, 1)]),
    ("A='l1\nl2'\nB=2\n", [("A", "l1\nl2", 1, 2), ("B", "2", 3, 3)]),
    ('A="l1\nl2"\nB=2\n', [("A", "l1\nl2", 1, 2), ("B", "2", 3, 3)]),
    ("A='l1\r\nl2'\r\nB=2\r\n", [("A", "l1\nl2", 1, 2), ("B", "2", 3, 3)]),
    ("A=1\rB=2\r", [("A", "1", 1, 1), ("B", "2", 2, 2)]),
    ('A="a\\nb\\"c\\\\"\n', [("A", 'a\nb"c\\', 1, 1)]),
    ("A='a\\nb\\'c\\\\'\n", [("A", "a\\nb'c\\", 1, 1)]),
    ("A=${B}\n", [("A", "${B}", 1, 1)]),
    ("garbage here\nA=1\n", [("A", "1", 2, 2)]),
    ("A='unclosed\nB=2\n", [("B", "2", 2, 2)]),
    ("A=1\nA=2\n", [("A", "1", 1, 1), ("A", "2", 2, 2)]),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_parse_reads_each_statement_like_python_dotenv(
    text: str, expected: list[tuple[str, str | None, int, int]]
) -> None:
    """Keys, values and line spans match the table."""
    actual = [(e.key, e.value, e.first_line, e.last_line) for e in dotenv.parse(text)]
    assert expected == actual


def test_entry_span_covers_indentation_and_line_ending_but_not_blank_lines_before() -> None:
    """start/end cut exactly the statement's own lines."""
    text = "X=1\n\n  export A='a\nb' # c\r\nY=2\n"
    (entry,) = [e for e in dotenv.parse(text) if e.key == "A"]
    assert "  export A='a\nb' # c\r\n" == text[entry.start : entry.end]
    assert ("  export ", " # c", "\r\n") == (entry.prefix, entry.comment, entry.eol)


def test_entry_keeps_only_a_comment_bash_also_reads_as_one() -> None:
    """A `#` glued to a closing quote is not kept as a comment."""
    (entry,) = dotenv.parse("A='x'#c\n")
    assert "" == entry.comment


def test_keys_lists_assigned_names_once_in_first_appearance_order() -> None:
    """Duplicates once, bare `KEY` lines left out."""
    assert ("B", "A", "C") == dotenv.keys("B=1\nA=2\nB=3\nNOVALUE\nC=\n")


def test_values_lets_the_last_assignment_win() -> None:
    """As python-dotenv, Node and bash do."""
    assert {"A": "2"} == dotenv.values("A=1\nA=2\n")


def test_bad_lines_names_the_statements_python_dotenv_skips() -> None:
    """Line numbers of unreadable statements."""
    assert (2, 4) == dotenv.bad_lines("A=1\n=x\nB=2\nC='open\n")


def test_entry_repr_holds_no_value(canary: str) -> None:
    """The value stays out of repr."""
    (entry,) = dotenv.parse(f"A={canary}\n")
    assert canary not in repr(entry)


# --- Differential: the same statements as python-dotenv on arbitrary .env-like text ---------

LINES = [
    "A=1",
    "export B=2",
    "  C = 3 ",
    "'D'=4",
    "E",
    "# comment = not",
    "",
    "   ",
    "F='x",
    "y'",
    'G="a\\"b"',
    "H=a # c",
    "I=a#b",
    "=bad",
    "J='q' junk",
    'K="m',
    'n"',
    "\tL=\t'v'\t#x",
    "M=${A}",
    "N='\\\\ \\' \\n'",
    'O="\\t\\x\\\\"',
    "P=' spaced '",
    "export",
    "export Q",
    "R=é😀",
    "S='#'",
    'T="it\'s"',
]


@st.composite
def dotenv_texts(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(
            st.tuples(
                st.one_of(st.sampled_from(LINES), st.text(max_size=8)),
                st.sampled_from(["\n", "\r\n", "\r"]),
            ),
            max_size=12,
        )
    )
    text = "".join(line + eol for line, eol in parts)
    if draw(st.booleans()) and text:
        text = text.rstrip("\r\n")
    return text


def _python_dotenv(text: str) -> tuple[list[tuple[str, str | None]], int]:
    # python-dotenv opens the file in universal-newline text mode, as this wrapper does.
    stream = io.TextIOWrapper(io.BytesIO(text.encode("utf-8", "surrogatepass")), encoding="utf-8")
    bindings = list(parse_stream(stream))
    return [(b.key, b.value) for b in bindings if b.key is not None], sum(b.error for b in bindings)


@settings(max_examples=600, deadline=None, database=None)
@given(text=dotenv_texts())
def test_parse_agrees_with_python_dotenv_on_any_text(text: str) -> None:
    """Same keys, values and number of skipped statements as python-dotenv's own parser."""
    expected, errors = _python_dotenv(text)
    actual = [(e.key, e.value) for e in dotenv.parse(text)]
    assert expected == actual
    assert errors == len(dotenv.bad_lines(text))


@settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(text=dotenv_texts())
def test_entries_never_overlap_and_stay_inside_the_text(text: str) -> None:
    """Spans are ordered, disjoint and in range, so splicing them is safe."""
    end = 0
    for entry in dotenv.parse(text):
        assert end <= entry.start < entry.end <= len(text)
        end = entry.end
