"""The page's paste parser (web/paste.js) reads .env text exactly as python-dotenv does.

There is no python-dotenv in a browser, so the page keeps a port; python-dotenv itself is the
oracle. One table (dotenv_cases.json) runs through both; seeded random texts compare them too.
"""

import io
import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
from dotenv.parser import parse_stream
from helpers import node_or_skip

from offprompt.sinks import dotenv

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "web" / "paste.js"
CASES: list[dict[str, Any]] = json.loads((Path(__file__).parent / "dotenv_cases.json").read_text())
# Characters that steer the grammar, whitespace that Python and JavaScript class differently
# (U+001C, U+0085 are blanks only to Python, U+FEFF only to JavaScript), and astral text.
ALPHABET = [
    *"AB_=x'\"#\\ \t\n\r$",
    *("export ", "\x1c", "\x85", "\xa0", "\ufeff", "\u2028", "é", "\U0001f34b"),
]

# Loads the page script as a plain script (no module wrapper), then parses every text at once.
RUNNER = r"""
const fs = require("fs");
const vm = require("vm");
vm.runInThisContext(fs.readFileSync(process.argv[1], "utf8"), { filename: process.argv[1] });
const texts = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(texts.map((t) => offpromptParseDotenv(t))));
"""


def python_parse(text: str) -> dict[str, Any]:
    """What python-dotenv reads from a file holding `text`, in paste.js's shape.

    A skipped statement is numbered by the line its text starts on, after the blank lines
    python-dotenv counts into it (its own warning names the line where those begin).
    """
    # Opened as dotenv_values(path) opens a file: UTF-8, universal newlines.
    stream = io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8")
    bindings = list(parse_stream(stream))
    bad = []
    for b in bindings:
        if b.error:
            s = b.original.string
            bad.append(b.original.line + s[: len(s) - len(s.lstrip())].count("\n"))
    return {"entries": [[b.key, b.value] for b in bindings if b.key is not None], "bad": bad}


def node_parse(texts: list[str]) -> list[dict[str, Any]]:
    """Every text through web/paste.js in one Node process."""
    proc = subprocess.run(
        [node_or_skip(), "-e", RUNNER, str(SCRIPT)],
        input=json.dumps(texts).encode("utf-8"),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    result: list[dict[str, Any]] = json.loads(proc.stdout)
    return result


def expected(case: dict[str, Any]) -> dict[str, Any]:
    return {"entries": case["entries"], "bad": case["bad"]}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_python_dotenv_reads_each_table_case_as_stated(case: dict[str, Any]) -> None:
    """python-dotenv gives the table's entries and unreadable lines."""
    assert python_parse(case["text"]) == expected(case)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_offprompt_reads_each_table_case_as_stated(case: dict[str, Any]) -> None:
    """offprompt.sinks.dotenv (the server's side of a pasted file) agrees with the table."""
    actual = {
        "entries": [[e.key, e.value] for e in dotenv.parse(case["text"])],
        "bad": list(dotenv.bad_lines(case["text"])),
    }
    assert expected(case) == actual


def test_page_parser_reads_every_table_case_as_stated() -> None:
    """web/paste.js gives the table's entries and unreadable lines for every case."""
    got = node_parse([c["text"] for c in CASES])
    mismatched = [c["name"] for c, g in zip(CASES, got, strict=True) if g != expected(c)]
    assert mismatched == []


def test_page_parser_agrees_with_python_on_random_texts() -> None:
    """2,000 seeded random texts of grammar characters parse alike in both."""
    rng = random.Random(20260728)  # noqa: S311 - a fixed test sample, not a secret
    texts = ["".join(rng.choices(ALPHABET, k=rng.randint(0, 30))) for _ in range(2000)]
    got = node_parse(texts)
    mismatched = [t for t, g in zip(texts, got, strict=True) if g != python_parse(t)]
    assert mismatched == []


def test_table_covers_the_grammar() -> None:
    """The table holds at least 50 cases, some with unreadable lines and some multi-line values."""
    assert len(CASES) >= 50
    assert any(c["bad"] for c in CASES)
    assert any(v and "\n" in v for c in CASES for _, v in c["entries"])
