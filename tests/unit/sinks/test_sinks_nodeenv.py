"""offprompt.sinks.nodeenv reads .env text exactly as Node 20's own parser does."""

import json
import random
import subprocess
from pathlib import Path

import pytest
import sinks_readers as readers

from offprompt.sinks import nodeenv

ATOMS = [
    "A", "B", "export ", "export  ", "=", " ", "  ", "\t", "\n", "\r\n", "\r", "#", "'", '"',
    "`", "\\n", "\\", "x", "é", "😀", "KEY=", "\n  \n", "# c", "=v",
]  # fmt: skip

PARSE_MANY = (
    "const u = require('util');"
    " const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
    " process.stdout.write(JSON.stringify(texts.map((t) => u.parseEnv(t))));"
)


def node_parse_many(texts: list[str]) -> list[dict[str, str]]:
    out = subprocess.run(
        [readers.node(), "-e", PARSE_MANY],
        input=json.dumps(texts).encode(),
        capture_output=True,
        check=True,
        timeout=60,
        env=readers.CLEAN_ENV,
    ).stdout
    parsed: list[dict[str, str]] = json.loads(out)
    return parsed


@pytest.mark.parametrize("seed", [1, 2])
def test_port_matches_node_util_parse_env_on_random_text(seed: int) -> None:
    """5000 random .env-like texts per seed, parsed by Node in one process: same result."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    texts = ["".join(rng.choice(ATOMS) for _ in range(rng.randint(0, 25))) for _ in range(5000)]
    expected = node_parse_many(texts)
    mismatches = [(t, e) for t, e in zip(texts, expected, strict=True) if nodeenv.parse(t) != e]
    assert [] == mismatches[:5]


QUIRKS = [
    ("X=1\n  \nA=1\n", {"X": "1", "\nA": "1"}),
    ("X=1\n  # c\nA=1\n", {"X": "1", "# c\nA": "1"}),
    ("  # c\nA=1\n", {"A": "1"}),
    ("X=1\n =v\n", {"X": "1", "\n": "v"}),
    ("A='x\r\ny'\r\n", {"A": "x\ny"}),
    ('A="a\\nb"\n', {"A": "a\nb"}),
    ("export  A=1\n", {" A": "1"}),
    ("A=`x\nB=1`\n", {"A": "x\nB=1"}),
    ("A=v # c", {"A": "v"}),
    ("A=  ", {"A": ""}),
]


@pytest.mark.parametrize(("text", "expected"), QUIRKS)
def test_port_reproduces_node_quirks(text: str, expected: dict[str, str]) -> None:
    """The quirks that decide whether a written statement is seen."""
    assert expected == nodeenv.parse(text)


@pytest.mark.parametrize(("text", "expected"), QUIRKS[:5])
def test_env_file_flag_reads_like_util_parse_env(
    tmp_path: Path, text: str, expected: dict[str, str]
) -> None:
    """--env-file, the reader the contract names, agrees with the port on the quirks."""
    (tmp_path / ".env").write_text(text, newline="")
    names = [k for k in expected if k.isidentifier()]
    assert {k: expected[k] for k in names} == readers.nodejs(tmp_path, names)
