"""The fast reader status uses (`dotenv_read`): python-dotenv's own answer on any text, and the
names `dotenv.Parsed` shows; linear in the text's size."""

import time
from pathlib import Path

import pytest
from dotenv import dotenv_values
from dotenv_texts import LINES, dotenv_texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from offprompt.sinks import dotenv, dotenv_read

PROPERTY = settings(
    max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
# Lines the fast path reads itself, and lines that look like them inside a value.
SIMPLE = [
    "A=1",
    "A = 1 ",
    "  export B=x=y # c",
    "C=",
    "C= #c",
    "D='v' # c",
    "D='v'#c",
    'E="$A b" #',
    "F",
    "export",
    "export  ",
    "export\t=1",
    "G=a b",
    "# c 'x",
    "   ",
    "H='#'",
    "I=\ufeffx",
    "J=a\xa0b",
    "K=-----BEGIN X",
    "abc=",
    "-----END X-----",
    "lower=1",
    "-----BEGIN RSA PRIVATE KEY-----",
    "A B=1",
    "export A B",
    "A\tB",
    "A #c",
    "=x",
    " = ",
]


@st.composite
def texts(draw: st.DrawFn) -> str:
    lines = draw(
        st.lists(st.sampled_from(SIMPLE + LINES) | st.text(alphabet="AB='\"# \t\n\\", max_size=8))
    )
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return (
        draw(st.sampled_from(["", "\ufeff"])) + eol.join(lines) + draw(st.sampled_from(["", eol]))
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dotenv_read")


def check(text: str, folder: Path) -> None:
    path = folder / ".env"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    expected = {k: v for k, v in dotenv_values(path, interpolate=False).items() if v is not None}
    got = dotenv_read.read(text)
    parsed = dotenv.Parsed(text)
    assert got.values == expected
    assert got.values == parsed.values
    assert (got.keys, got.opaque) == (parsed.keys, parsed.opaque)
    assert got.bad_lines == parsed.bad_lines


@PROPERTY
@given(text=texts())
def test_reads_as_python_dotenv_and_shows_what_parsed_shows(text: str, folder: Path) -> None:
    """Same values as python-dotenv reading the file, same names and opacity as Parsed."""
    check(text, folder)


@PROPERTY
@given(text=dotenv_texts())
def test_reads_the_grammar_texts_as_python_dotenv(text: str, folder: Path) -> None:
    """The same on the texts the parser's own tests use."""
    check(text, folder)


@pytest.mark.parametrize(
    "text",
    [
        "F='x\nA=1\nB=2\n'\nC=3\n",  # a quote left open swallows lines the regex would read
        'K="m\nA=1\nn"\nB=2\n',
        "A=1\nF='x\n",
        "export  \nA=1\n",
        "A=1\r\nB='2'\r\n",
        # with no quote after it, a quote left open is skipped as python-dotenv skips it
        "F='x\nA=1\n=y\nB=2\n",
        'K="m\nA=1\nexport B=2\n',
        "F='x\nA=1\nG=\"y\nB=2\n",
        'F=\'x\nA=1\nG="y\nB=2"\nC=3\n',
        "F='x' junk\nA=1\n'\n",
        "=a\n=b\nA=1\nB\n=c",
        "A=1\nB=2",
    ],
)
def test_a_value_spanning_simple_lines_reads_as_python_dotenv(text: str, folder: Path) -> None:
    check(text, folder)


@pytest.mark.parametrize(
    "line",
    [
        b"A=1\n",
        b"KEY_0000001=value-0000001\n",
        b"A='v' # c\n",
        b"-----BEGIN\n",
        b"-----BEGIN X-----\n",
        b"=x\n",
    ],
)
def test_linear_in_size(line: bytes) -> None:
    """16 MiB of one shape is read in a few seconds: no shape makes it quadratic. Timed in this
    process's own CPU time, so other work on the machine does not count against it."""
    text = (line * ((16 << 20) // len(line))).decode()
    start = time.process_time()
    dotenv_read.read(text)
    assert time.process_time() - start < 10  # DESIGN §12: a 16 MiB target within 10 s


def test_the_deadline_is_kept_however_the_lines_alternate() -> None:
    """Simple lines between short runs python-dotenv must read (so no line number the clock was
    read at comes round, and every run is small): a deadline already past still stops the read
    instead of letting it run to the end."""
    text = ('S=1\nA="\\x"\nB="\\x"\nC="\\x"\n') * 5000
    with pytest.raises(dotenv_read.TooSlow):
        dotenv_read.read(text, deadline=time.monotonic() - 1)
    assert dotenv_read.read(text).keys  # without a deadline it reads to the end


# Lines that open a quote and lines the runs read, so a quote left open meets runs after it,
# with and without a quote further on.
RUNS_AND_OPEN_QUOTES = [
    "A=1",
    "B=x=y",
    "=x",
    "=",
    "F='x",
    'G="y',
    "x'",
    'y"',
    "C='a'",
    "D",
    "  E=2",
]


@PROPERTY
@given(
    lines=st.lists(st.sampled_from(RUNS_AND_OPEN_QUOTES), max_size=30),
    end=st.sampled_from(["", "\n"]),
)
def test_runs_after_a_quote_left_open_read_as_python_dotenv(
    lines: list[str], end: str, folder: Path
) -> None:
    """The runs read in one call, and a quote left open before them, agree with python-dotenv."""
    check("\n".join(lines) + end, folder)
