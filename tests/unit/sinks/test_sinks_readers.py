"""What the writer accepts, python-dotenv, `node --env-file` (Node 22 and 24) and bash all read
back exactly.

The real readers are the oracle: every accepted value is written and read by each of them; every
refused value leaves the file byte-identical. Many keys share one file so each example spawns
one process per Node line and one bash.
"""

import os
import tempfile
from pathlib import Path

import pytest
import sinks_readers as readers
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from offprompt.errors import UnsafeValue, WriteError
from offprompt.sinks import SinkSpec, check_values, write

# Thousands of generated files read back by real bash and Node: about 20 s.
pytestmark = pytest.mark.slow

DOTENV = SinkSpec()

ACCEPTED = [
    "",
    "plain",
    "sk_live_51Habc-DEF.ghi/jkl+mno=:,@%",
    "=",
    "==leading=equals",
    "with space",
    "  leading and trailing  ",
    " ",
    "#hash",
    "a #not a comment",
    "a#b",
    "$HOME",
    "$1 and $$ and $",
    "${",
    "$X}",
    "${a:b}",
    "`whoami`",
    "\\n is two characters",
    "C:\\path\\to\\file",
    "\\x",
    "multi\nline\n",
    "\n",
    "\nleading newline",
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n",
    '{"type":"service_account","private_key":"-----BEGIN-----\\nabc\\n","id":"x"}',
    "it's",
    "'",
    "'leading",
    "trailing'",
    "it's\na multi-line value",
    "don't! ever!!",
    "it's #1 = best ~ * ? [a] {b,c} (d) ; & | < >",
    '"',
    '"quoted"',
    "tab\there",
    "\t",
    "emoji 😀 é ñ 中文 עברית",
    "\u2028line separator\u2029 and \x85 NEL",
    "\x1b[31mred\x1b[0m \x07 \x0b \x0c \x7f",
    "~",
    "~/x",
    "a=~",
    "*",
    "export X=1",
    "KEY=value\nOTHER=injected",
    "' \n# not a comment\nX='",
    "\ufeffbom",
    "x" * 5000,
]

REFUSED = [
    'it\'s "both"',
    "it's $5",
    "it's `x`",
    "it's C:\\dir",
    "a\\\\b",
    "ends in \\",
    "\\",
    "${HOME}",
    "pre${X:-default}post",
    "${}",
    "carriage\rreturn",
    "windows line\r\n",
    "nul\0byte",
    "broken \ud800 surrogate",
]


def test_accepted_table_reads_back_exactly_in_every_reader(project: Path) -> None:
    """Each tricky value in the table, written together, is what every reader sees."""
    values = {f"OP_T{i}": v for i, v in enumerate(ACCEPTED)}
    assert {} == check_values(DOTENV, values)
    result = write(project, DOTENV, values)
    assert values == dict(result.read_back)
    for reader, seen in readers.all_readers(project, list(values)).items():
        assert (reader, values) == (reader, seen)


@pytest.mark.parametrize("value", REFUSED)
def test_refused_table_leaves_the_file_byte_identical(project: Path, value: str) -> None:
    """A refused value, even beside fine ones, changes nothing."""
    env = project / ".env"
    env.write_bytes(b"# keep\r\nA=1\n")
    values = {"OK": "fine", "BAD": value}
    assert ["BAD"] == list(check_values(DOTENV, values))
    with pytest.raises(UnsafeValue):
        write(project, DOTENV, values)
    assert b"# keep\r\nA=1\n" == env.read_bytes()
    assert [".env"] == os.listdir(project)


def test_values_in_a_crlf_file_read_back_exactly_in_every_reader(project: Path) -> None:
    """New and replaced lines in a CRLF file carry no stray CR, for bash too."""
    (project / ".env").write_bytes(b"# windows\r\nOP_A=old\r\nOP_C=1 # note\r\n")
    values = {"OP_A": "it's", "OP_B": "two words", "OP_C": "", "OP_D": "l1\nl2"}
    write(project, DOTENV, values)
    for reader, seen in readers.all_readers(project, list(values)).items():
        assert (reader, values) == (reader, seen)


def test_replacing_into_an_existing_file_reads_back_in_every_reader(project: Path) -> None:
    """Replaced, deduplicated and appended keys read back; untouched ones keep their value."""
    (project / ".env").write_text(
        "# app\nexport OP_A='old\nvalue'\n  OP_KEEP=same # note\nOP_A=dup\n\nOP_B=\"x y\"\n"
    )
    values = {"OP_A": "new\nlines", "OP_B": "it's", "OP_C": "c"}
    write(project, DOTENV, values)
    expected = {**values, "OP_KEEP": "same"}
    for reader, seen in readers.all_readers(project, list(expected)).items():
        assert (reader, expected) == (reader, seen)


# --- Property ------------------------------------------------------------------------------

TOKENS = [
    "'",
    '"',
    "`",
    "\\",
    "\\\\",
    "\\n",
    "\\'",
    "\n",
    "$",
    "$X",
    "${X}",
    "${X:-d}",
    "${",
    "}",
    "#",
    " #",
    " ",
    "  ",
    "=",
    "\t",
    "!",
    "~",
    "*",
    "export ",
    "A=",
    "😀",
    "é",
    "中",
    "\u2028",
    "\x85",
    "\x1b",
    "\r",
    "\0",
]
_MIXED = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=2)), max_size=7)
# Weighted towards the quoted forms: bare values are the easy case.
VALUES = st.one_of(
    _MIXED.map("".join),
    _MIXED.map("".join),
    _MIXED.map(lambda parts: "'" + "".join(parts)),
    st.text(max_size=10),
    st.from_regex(r"[A-Za-z0-9_@%+=:,./-]{1,12}", fullmatch=True),
)
SEEDS = [
    "",
    "SEED=1\n",
    "# top\n\nSEED='two words' # c\nOP_K0=old\nOP_K3=\"it's\"\nOP_K0=dup",
    "# crlf\r\nOP_K1=old\r\nSEED=1\r\n",
    "export OP_K2='multi\nline'\n  export OP_K5=x # note\n",
    "X=1\n  \n\t\n  # indented, Node 20 glued it on\nSEED=1\n",
]
KEYS = [f"OP_K{i}" for i in range(20)]


@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(values=st.lists(VALUES, min_size=len(KEYS), max_size=len(KEYS)), seed=st.sampled_from(SEEDS))
def test_every_accepted_value_reads_back_exactly_and_every_refused_one_changes_nothing(
    values: list[str], seed: str
) -> None:
    """Property over the real readers, 20 values per file."""
    asked = dict(zip(KEYS, values, strict=True))
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        env = project / ".env"
        env.write_bytes(seed.encode())
        refused = check_values(DOTENV, asked)
        if refused:
            with pytest.raises(UnsafeValue):
                write(project, DOTENV, asked)
            assert seed.encode() == env.read_bytes()
            assert [".env"] == os.listdir(project)
        accepted = {k: v for k, v in asked.items() if k not in refused}
        if not accepted:
            return
        result = write(project, DOTENV, accepted)
        assert accepted == dict(result.read_back)
        for reader, seen in readers.all_readers(project, list(accepted)).items():
            assert (reader, accepted) == (reader, seen)


# Existing files with every kind of line a person (or a broken tool) leaves in a .env. Nothing
# here prints or changes anything when bash sources it.
EXISTING_LINES = [
    "X1=plain",
    "export X2='two words'",
    '  X3="it\'s"',
    "# comment, it's",
    "",
    "  ",
    "\t",
    "   # indented",
    "LEFTOVER",
    "X4='multi\nline'",
    "X5=a # note",
    "X6='it\\'s'",
    'X7="a\\"b"',
    "X8=`true`",
    "X9=$(true)",
    "X10=C:\\dir\\",
    "X11='unclosed",
    'X12="unclosed',
    "X13=${X1}",
    'X14="${X1}:1"',
    "if",
    "X15='a'#b'c",
    "=bad",
    "X16=a=b",
    "export X17",
    "X18",
    "X19=`open",
    "X20= ",
    "export X21=\t ",
    "OP_K0=old",
    "export OP_K1='old\nvalue'",
    "  OP_K2=old # note",
]
ACCEPTED_VALUES = VALUES.filter(lambda v: not check_values(DOTENV, {"V": v}))


@settings(
    max_examples=250,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    lines=st.lists(
        st.tuples(st.sampled_from(EXISTING_LINES), st.sampled_from(["\n", "\r\n"])), max_size=8
    ),
    final_newline=st.booleans(),
    values=st.lists(ACCEPTED_VALUES, min_size=5, max_size=5),
)
def test_around_any_existing_lines_a_write_is_read_back_exactly_or_refused(
    lines: list[tuple[str, str]], final_newline: bool, values: list[str]
) -> None:
    """Whatever the file holds, a write reads back in every reader or changes nothing."""
    before = "".join(line + eol for line, eol in lines)
    if not final_newline:
        before = before.rstrip("\r\n")
    asked = {f"OP_K{i}": v for i, v in enumerate(values)}
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        env = project / ".env"
        env.write_bytes(before.encode())
        try:
            write(project, DOTENV, asked)
        except WriteError:
            event("refused because of an existing line")
            assert before.encode() == env.read_bytes()
            assert [".env"] == os.listdir(project)
            return
        for reader, seen in readers.all_readers(project, list(asked)).items():
            assert (reader, asked) == (reader, seen)
