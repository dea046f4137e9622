"""offprompt.sinks.dotenv.parse reads .env text as python-dotenv does, with raw-text offsets."""

import io
import os
import re
from pathlib import Path

import pytest
from dotenv import dotenv_values
from dotenv.parser import Binding, parse_stream
from dotenv_texts import GRAMMAR, dotenv_texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from offprompt.sinks import dotenv, dotenv_read

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
    ("A= # c\n", [("A", "", 1, 1)]),
    ("A=#c\n", [("A", "#c", 1, 1)]),
    ("A=\nB=''\nC=\"\"\n", [("A", "", 1, 1), ("B", "", 2, 2), ("C", "", 3, 3)]),
    ("A\n", [("A", None, 1, 1)]),
    ("'A'=1\n", [("A", "1", 1, 1)]),
    ("A='l1\nl2'\nB=2\n", [("A", "l1\nl2", 1, 2), ("B", "2", 3, 3)]),
    ('A="l1\nl2"\nB=2\n', [("A", "l1\nl2", 1, 2), ("B", "2", 3, 3)]),
    ("A='l1\r\nl2'\r\nB=2\r\n", [("A", "l1\nl2", 1, 2), ("B", "2", 3, 3)]),
    ("A=1\rB=2\r", [("A", "1", 1, 1), ("B", "2", 2, 2)]),
    ('A="a\\nb\\"c\\\\"\n', [("A", 'a\nb"c\\', 1, 1)]),
    ("A='a\\nb\\'c\\\\'\n", [("A", "a\\nb'c\\", 1, 1)]),
    ('O="\\t\\x\\\\"\nG="a\\"b"\n', [("O", "\t\\x\\", 1, 1), ("G", 'a"b', 2, 2)]),
    ("A=${B}\n", [("A", "${B}", 1, 1)]),
    ("garbage here\nA=1\n", [("A", "1", 2, 2)]),
    ("A='unclosed\nB=2\n", [("B", "2", 2, 2)]),
    ("A=1\nA=2\n", [("A", "1", 1, 1), ("A", "2", 2, 2)]),
    ("\ufeffA=1\n", [("A", "1", 1, 1)]),
]


def read_file(text: str, folder: Path) -> Path:
    """`text` as a UTF-8 file, bytes exactly as given (no newline translation on write)."""
    path = folder / ".env"
    path.write_bytes(text.encode("utf-8"))
    return path


def bindings(path: Path) -> list[Binding]:
    """python-dotenv's own statements, from the file opened the way `dotenv_values` opens it."""
    with open(path, encoding="utf-8") as f:
        return list(parse_stream(f))


def held(path: Path) -> dict[str, str]:
    """`dotenv_values(path)` before interpolation, without the keys it maps to None."""
    return {k: v for k, v in dotenv_values(path, interpolate=False).items() if v is not None}


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_parse_reads_each_statement_as_the_table_says(
    text: str, expected: list[tuple[str, str | None, int, int]]
) -> None:
    """Keys, values and line spans match the table."""
    actual = [(e.key, e.value, e.first_line, e.last_line) for e in dotenv.parse(text)]
    assert expected == actual


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_table_says_what_python_dotenv_reads(
    text: str, expected: list[tuple[str, str | None, int, int]], tmp_path: Path
) -> None:
    """The table's keys and values are python-dotenv's own, from a file on disk."""
    statements = [(b.key, b.value) for b in bindings(read_file(text, tmp_path)) if b.key]
    assert [(key, value) for key, value, _, _ in expected] == statements


def test_escaped_backslash_before_a_closing_quote_ends_the_value(tmp_path: Path) -> None:
    """`O="\\t\\x\\\\"` ends at its quote, so the next line is a statement of its own."""
    text = 'O="\\t\\x\\\\"\nG="a\\"b"\n'
    assert held(read_file(text, tmp_path)) == dotenv.Parsed(text).values
    assert ("O", "G") == dotenv.Parsed(text).keys


def test_blank_after_equals_then_hash_is_an_empty_value_and_a_comment() -> None:
    """`A= # c` is A='' with a comment (python-dotenv 1.2), and the comment is kept."""
    (entry,) = dotenv.parse("A= # c\n")
    assert ("", " # c") == (entry.value, entry.comment)


def test_crlf_inside_a_quoted_value_reads_as_lf_like_the_file(tmp_path: Path) -> None:
    """Values are what dotenv_values(path) reads: CRLF and CR inside quotes become LF."""
    text = "A='l1\r\nl2\rl3'\r\nB=2\r\n"
    assert {"A": "l1\nl2\nl3", "B": "2"} == dotenv.Parsed(text).values
    assert held(read_file(text, tmp_path)) == dotenv.Parsed(text).values


def test_a_later_bare_key_unsets_the_value_as_in_python_dotenv(tmp_path: Path) -> None:
    """`A=1` then `A`: dotenv_values maps A to None, so A is neither a value nor a key."""
    text = "A=1\nB=2\nA\n"
    assert ({"B": "2"}, ("B",)) == (dotenv.Parsed(text).values, dotenv.Parsed(text).keys)
    assert held(read_file(text, tmp_path)) == dotenv.Parsed(text).values


def test_leading_bom_is_not_part_of_the_first_key() -> None:
    """python-dotenv drops a leading BOM; the entry starts after it, so the upsert keeps it."""
    text = "\ufeffA=1\nB=2\n"
    first = dotenv.parse(text)[0]
    assert ("A", 1, "A=1\n") == (first.key, first.start, text[first.start : first.end])


def test_entry_span_covers_indentation_and_line_ending_but_not_blank_lines_before() -> None:
    """start/end cut exactly the statement's own lines, offsets in the raw (CRLF) text."""
    text = "X=1\r\n\r\n  export A='a\r\nb' # c\r\nY=2\r\n"
    (entry,) = [e for e in dotenv.parse(text) if e.key == "A"]
    assert "  export A='a\r\nb' # c\r\n" == text[entry.start : entry.end]
    assert ("  export ", " # c", "\r\n") == (entry.prefix, entry.comment, entry.eol)
    assert (3, 4) == (entry.first_line, entry.last_line)


def test_entry_keeps_only_a_comment_bash_also_reads_as_one() -> None:
    """A `#` glued to a closing quote is not kept as a comment."""
    (entry,) = dotenv.parse("A='x'#c\n")
    assert "" == entry.comment


def test_comment_is_all_of_it_from_the_first_hash_python_dotenv_skips() -> None:
    """A `#` inside quotes is value; from the first blank-then-`#` after them on, comment."""
    entries = dotenv.parse("A='v #1' # c #2\nB=x # c #3\n")
    assert [" # c #2", " # c #3"] == [e.comment for e in entries]


def test_keys_lists_assigned_names_once_in_first_appearance_order() -> None:
    """Duplicates once, bare `KEY` lines left out."""
    assert ("B", "A", "C") == dotenv.Parsed("B=1\nA=2\nB=3\nNOVALUE\nC=\n").keys


def test_values_lets_the_last_assignment_win() -> None:
    """As python-dotenv, Node and bash do."""
    assert {"A": "2"} == dotenv.Parsed("A=1\nA=2\n").values


def test_bad_lines_names_the_statements_python_dotenv_skips() -> None:
    """Line numbers of unreadable statements, where their text starts (not the blank before)."""
    assert (2, 6) == dotenv.bad_lines("A=1\n=x\nB=2\n\n\nC='open\n")


def test_entry_repr_holds_no_value(canary: str) -> None:
    """The value stays out of repr."""
    (entry,) = dotenv.parse(f"A={canary}\n")
    assert canary not in repr(entry)


# --- Differential: python-dotenv itself on arbitrary .env-like text -------------------------

# Each example writes one file; the folder is shared, since hypothesis runs examples one by one.
PROPERTY = settings(
    max_examples=400,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dotenv")


@PROPERTY
@given(text=dotenv_texts())
def test_python_dotenv_statements_are_the_whole_text_in_order(text: str, folder: Path) -> None:
    """The offsets' premise: the statements' original texts, blank lines, comments and
    unreadable lines included, put together give the text python-dotenv read."""
    read = bindings(read_file(text, folder))
    lf = text.replace("\r\n", "\n").replace("\r", "\n")
    assert lf.removeprefix("\ufeff") == "".join(b.original.string for b in read)


@PROPERTY
@given(text=dotenv_texts())
def test_parse_values_keys_and_bad_lines_agree_with_python_dotenv(text: str, folder: Path) -> None:
    """Same statements, values, keys and skipped statements as python-dotenv reading the file."""
    path = read_file(text, folder)
    read = bindings(path)
    assert [(b.key, b.value) for b in read if b.key is not None] == [
        (e.key, e.value) for e in dotenv.parse(text)
    ]
    assert held(path) == dotenv.Parsed(text).values
    # keys: python-dotenv's names that are names; a PEM block hides its lines; none at all when
    # a name outside DESIGN §3.1's pattern says the text is no dotenv file.
    names = tuple(k for k in held(path) if re.fullmatch(r"[A-Z][A-Z0-9_]{0,127}", k))
    parsed = dotenv.Parsed(text)
    if parsed.opaque:
        assert parsed.keys == ()
    elif "-----begin" in text.lower():
        assert [k for k in names if k in parsed.keys] == list(parsed.keys)
    else:
        assert names == parsed.keys
    # Each skipped statement by the line its text starts on: no earlier than python-dotenv's
    # line (the end of the statement before), and that raw line starts the statement's text.
    lines = re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff"))
    errors = [b for b in read if b.error]
    bad = dotenv.bad_lines(text)
    assert len(errors) == len(bad)
    for b, number in zip(errors, bad, strict=True):
        assert b.original.line <= number
        assert lines[number - 1].lstrip() == b.original.string.lstrip().split("\n", 1)[0]


@PROPERTY
@given(text=dotenv_texts())
def test_each_entry_span_alone_reads_as_that_entry(text: str) -> None:
    """Spans are ordered, disjoint, in range, start with the prefix, end with the comment and
    line ending, and python-dotenv reads each span alone as exactly that statement."""
    end = 0
    for e in dotenv.parse(text):
        assert end <= e.start < e.end <= len(text)
        end = e.end
        span = text[e.start : e.end]
        assert span.startswith(e.prefix)
        assert span.endswith(e.comment + e.eol)
        # After a line break, so that a key starting with U+FEFF is not taken for a BOM.
        alone = "\n" + span.replace("\r\n", "\n").replace("\r", "\n")
        assert [(e.key, e.value, False)] == [
            (b.key, b.value, b.error) for b in parse_stream(io.StringIO(alone))
        ]


# Lines that interpolate, from the file and from the environment (`OP_FROM_ENV` is set there,
# and `A` too, which a line of the file overrides), and lines that open and close PEM blocks.
INTERPOLATING = [
    "X=${A}",
    "Y=${OP_FROM_ENV}",
    "Z=${OP_UNSET:-fallback}",
    "W='${X}${Y}'",
    'V="${A}-${OP_FROM_ENV:-no}"',
    "A=${A}b",
    "U=${",
    "T",
    "T=${T}",
]
PEM_LINES = ["K=-----BEGIN X", "abc=", "-----END X-----", "L=-----BEGIN Y-----END", "M=1"]


@st.composite
def mixed_texts(draw: st.DrawFn, extra: list[str]) -> str:
    lines = draw(st.lists(st.sampled_from(extra), max_size=8))
    text = draw(dotenv_texts())
    cut = draw(st.integers(0, len(lines)))
    return "\n".join(lines[:cut]) + "\n" + text + "\n" + "\n".join(lines[cut:])


@PROPERTY
@given(text=mixed_texts(INTERPOLATING))
def test_read_by_python_dotenv_is_what_dotenv_values_gives(text: str, folder: Path) -> None:
    """What the write check takes python-dotenv to read is `dotenv_values(path)` (interpolation
    on, the file's keys over the environment's) for the same file."""
    saved = {k: os.environ.get(k) for k in ("A", "OP_FROM_ENV")}
    os.environ.update(A="env-a", OP_FROM_ENV="env-value")
    try:
        path = read_file(text, folder)
        assert dotenv_values(path) == dotenv.Parsed(text).read_by_python_dotenv
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@PROPERTY
@given(text=mixed_texts(PEM_LINES))
def test_keys_leave_out_every_statement_inside_an_unquoted_pem_block(text: str) -> None:
    """`keys` in one pass gives what checking each statement against each block gives, and
    leaves out every statement that starts on a line after a BEGIN up to its END."""
    lines = dotenv._newlines_to_lf(text).split("\n")
    blocks = dotenv_read.pem_blocks(dotenv._newlines_to_lf(text))
    for begin, end in blocks:
        assert "-----begin" in lines[begin - 1].lower()
        assert end > len(lines) or "-----end" in lines[end - 1].lower()
    inside = [e for e in dotenv.parse(text) if any(a < e.first_line <= b for a, b in blocks)]
    named = {e.key for e in dotenv.parse(text) if e not in inside}
    shown = re.compile(r"[A-Z][A-Z0-9_]{0,127}")
    parsed = dotenv.Parsed(text)
    if any(not shown.fullmatch(k) for k in named):
        assert parsed.keys == ()
    else:
        assert tuple(k for k in parsed.values if k in named) == parsed.keys


def same_parse(a: dotenv.Parsed, b: dotenv.Parsed) -> None:
    assert (a.entries, a.bad_lines, a.resume) == (b.entries, b.bad_lines, b.resume)


@PROPERTY
@given(
    old=dotenv_texts(),
    cut=st.tuples(st.integers(0, 200), st.integers(0, 200)),
    inserted=st.text(alphabet=GRAMMAR, max_size=12) | st.sampled_from(["\n", "\r", "\ufeffA=1\n"]),
)
def test_an_edited_text_parses_the_same_resumed_from_the_text_it_was_edited_from(
    old: str, cut: tuple[int, int], inserted: str
) -> None:
    """Reading only from the first change on (`like`) gives every statement, skipped line and
    resume point that reading the whole edited text gives, whatever the edit."""
    lo, hi = sorted(min(c, len(old)) for c in cut)
    new = old[:lo] + inserted + old[hi:]
    same_parse(dotenv.Parsed(new), dotenv.Parsed(new, like=dotenv.Parsed(old)))


@PROPERTY
@given(
    old=dotenv_texts(),
    names=st.lists(st.sampled_from(["A", "B", "E", "W", "NEW"]), min_size=1, max_size=3),
    value=st.sampled_from(["v", "a b", "it's", "l1\nl2", ""]),
)
def test_an_upserted_text_parses_the_same_resumed_from_the_original(
    old: str, names: list[str], value: str
) -> None:
    """As the write uses it: the upsert's text read from its first change on reads as a whole."""
    before = dotenv.Parsed(old)
    new = dotenv.upsert(old, dict.fromkeys(names, value), parsed=before).text
    same_parse(dotenv.Parsed(new), dotenv.Parsed(new, like=before))


PEM_LEFT_BARE = (
    "A=1\n"
    "PRIVATE_KEY=-----BEGIN PRIVATE KEY-----\n"
    "q83hdsT5sR2lKz==\n"
    "MIIEvQIBADAN\n"
    "  AB12CD=x\n"
    "-----END PRIVATE KEY-----\n"
    "B=2\n"
    'QUOTED="-----BEGIN X-----\nabc=\n-----END X-----"\n'
    "C=3\n"
)


def test_keys_never_name_a_line_of_a_value_left_unquoted(folder: Path) -> None:
    """python-dotenv reads the lines of an unquoted PEM block as keys (a stretch of the secret
    each); keys gives the names around them and none of those lines."""
    path = read_file(PEM_LEFT_BARE, folder)
    assert {"q83hdsT5sR2lKz", "AB12CD"} <= set(held(path))  # what python-dotenv makes of it

    assert ("A", "PRIVATE_KEY", "B", "QUOTED", "C") == dotenv.Parsed(PEM_LEFT_BARE).keys
