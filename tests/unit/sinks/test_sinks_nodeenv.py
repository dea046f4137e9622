"""offprompt.sinks.nodeenv reads .env text exactly as the maintained Node lines (22 and 24) do."""

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sinks_readers as readers
from helpers import tool_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st

from offprompt.sinks import nodeenv

# One process per binary answers every example: a JSON text per line in, parseEnv's result out.
PARSE_LINES = (
    "const u = require('util');"
    " const rl = require('readline').createInterface({ input: process.stdin });"
    " rl.on('line', (l) => process.stdout.write("
    "JSON.stringify(u.parseEnv(JSON.parse(l))) + '\\n'));"
)

Parser = Callable[[str], dict[str, str]]


@pytest.fixture(scope="module", params=readers.NODES)
def node_parse(request: pytest.FixtureRequest) -> Iterator[Parser]:
    """util.parseEnv of the official binary of one Node line, kept running for the module."""
    proc = subprocess.Popen(
        [tool_or_skip(request.param), "-e", PARSE_LINES],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=readers.CLEAN_ENV,
        text=True,
        encoding="utf-8",
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def parse(text: str) -> dict[str, str]:
        stdin.write(json.dumps(text) + "\n")  # ASCII only: no raw line break inside
        stdin.flush()
        line = stdout.readline()
        assert line, f"{request.param} stopped answering"
        parsed: dict[str, str] = json.loads(line)
        return parsed

    yield parse
    stdin.close()
    proc.wait(timeout=10)
    stdout.close()


ATOMS = [
    "A", "B", "export ", "export  ", "export\t", "=", " ", "  ", "\t", "\n", "\r\n", "\r", "#",
    "'", '"', "`", "\\n", "\\", "x", "é", "😀", "KEY=", "\n  \n", "# c", "=v", "[s]", "\n\t",
    "= \n", "=\t\n",
]  # fmt: skip
TEXTS = st.lists(st.one_of(st.sampled_from(ATOMS), st.text(max_size=3)), max_size=30).map("".join)


@settings(max_examples=2000, deadline=None, database=None)
@given(text=TEXTS)
def test_port_matches_node_util_parse_env_on_random_text(node_parse: Parser, text: str) -> None:
    """Random .env-like text: the port stores what Node 22's and 24's util.parseEnv store."""
    assert node_parse(text) == nodeenv.parse(text)


QUIRKS = [
    ("X=1\n  \nA=1\n", {"X": "1", "A": "1"}),
    ("X=1\n  # c\nA=1\n", {"X": "1", "A": "1"}),
    ("X=1\nLEFTOVER\n\t\nA=1\n", {"X": "1", "A": "1"}),
    ("X= \nA=1\n", {"X": "A=1"}),
    ("X=\t\n\n  A='1'\n", {"X": "A='1'"}),
    ("X=\nA=1\n", {"X": "", "A": "1"}),
    ("X='open\nA=1'\n", {"X": "open\nA=1"}),
    ("X='open\nA=1\n", {"X": "'open", "A": "1"}),
    ("\tA=1\t# c\n", {"A": "1"}),
    ("A='x\r\ny'\r\n", {"A": "x\ny"}),
    ('A="a\\nb"\n', {"A": "a\nb"}),
    ("export \t A=1\n", {"A": "1"}),
    ("export A=\n", {"export A": ""}),
    ("A=`x\nB=1`\n", {"A": "x\nB=1"}),
    ("A='x' B=2\nC=3", {"A": "x", "C": "3"}),
    ("A=v # c", {"A": "v"}),
    ("A=  ", {"A": ""}),
]


@pytest.mark.parametrize(("text", "expected"), QUIRKS)
def test_port_reproduces_node_quirks(text: str, expected: dict[str, str]) -> None:
    """The quirks that decide whether a written statement is seen."""
    assert expected == nodeenv.parse(text)


@pytest.mark.parametrize("node", readers.NODES)
@pytest.mark.parametrize(("text", "expected"), QUIRKS)
def test_env_file_flag_reads_like_the_port(
    tmp_path: Path, text: str, expected: dict[str, str], node: str
) -> None:
    """--env-file, the reader the contract names, agrees with the port on the quirks."""
    (tmp_path / ".env").write_text(text, newline="")
    names = [k for k in expected if k.isidentifier()]
    assert {k: expected[k] for k in names} == readers.nodejs(tmp_path, names, node)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("X= \nA=1\n", [("X", 0, 7, True)]),
        ("# c\r\nX='a\r\nb'\r\nA=1", [("X", 5, 13, False), ("A", 15, 18, False)]),
        ("  A=1 # c\n", [("A", 2, 9, False)]),
    ],
)
def test_assignments_say_where_node_read_each_value(
    text: str, expected: list[tuple[str, int, int, bool]]
) -> None:
    """Offsets are in the text as given (CRs counted), so a line number can be told."""
    found = [(a.key, a.start, a.end, a.reaches_on) for a in nodeenv.assignments(text)]
    assert expected == found
