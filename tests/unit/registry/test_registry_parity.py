"""web/rules.js reaches the same verdicts, lines and hints as the Python engine (in Node)."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import registry_cases as table
from helpers import node_or_skip

from offprompt.registry import CheckVerdict, Field, check, page_data

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "web" / "rules.js"

# Loads the page script as a plain script (no module wrapper), then answers every case at once.
RUNNER = r"""
const fs = require("fs");
const vm = require("vm");
vm.runInThisContext(fs.readFileSync(process.argv[1], "utf8"), { filename: process.argv[1] });
const input = JSON.parse(fs.readFileSync(0, "utf8"));
const check = ([ref, value]) => offpromptCheck(input.fields[ref], value, input.hints);
const out = input.cases.map(check);
process.stdout.write(JSON.stringify(out));
"""


def as_json(verdict: CheckVerdict) -> dict[str, Any]:
    """A verdict in the shape offpromptCheck returns."""
    return {
        "ok": verdict.ok,
        "lines": [
            {"rule_id": ln.rule_id, "text": ln.text, "passed": ln.passed, "detail": ln.detail}
            for ln in verdict.lines
        ],
        "hint": verdict.hint,
    }


def run_node(
    cases: list[tuple[str, str]], fields: dict[str, Field | None] | None = None
) -> list[dict[str, Any]]:
    """Every case through web/rules.js in one Node process (fields default to the case refs)."""
    if fields is None:
        fields = {ref: table.field_for(ref) for ref in sorted({ref for ref, _ in cases})}
    data = page_data(fields)
    payload = {"fields": data["fields"], "hints": data["hints"], "cases": cases}
    proc = subprocess.run(
        [node_or_skip(), "-e", RUNNER, str(SCRIPT)],
        input=json.dumps(payload).encode("utf-8"),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert 0 == proc.returncode, proc.stderr.decode(errors="replace")
    result: list[dict[str, Any]] = json.loads(proc.stdout)
    return result


@pytest.fixture(scope="module")
def node_results() -> list[dict[str, Any]]:
    """The whole table's verdicts from Node, computed once."""
    return run_node(table.all_cases())


def test_table_is_large_enough() -> None:
    """The shared table holds at least 300 cases, 150 of them with a stated verdict."""
    assert len(table.all_cases()) >= 300
    assert len(table.HAND) >= 150


def test_node_matches_python_on_every_case(node_results: list[dict[str, Any]]) -> None:
    """CheckVerdict, every line (id, text, passed, detail) and hint agree for every case."""
    cases = table.all_cases()
    python = [as_json(check(table.field_for(ref), value)) for ref, value in cases]
    mismatched = [
        (ref, value, p, n)
        for (ref, value), p, n in zip(cases, python, node_results, strict=True)
        if p != n
    ]
    assert [] == mismatched[:3], f"{len(mismatched)} of {len(cases)} cases differ"


def test_node_reaches_the_stated_verdicts(node_results: list[dict[str, Any]]) -> None:
    """Node decides every hand-written case the way the table says."""
    expected = [ok for _, _, ok in table.HAND]
    assert expected == [r["ok"] for r in node_results[: len(table.HAND)]]


def test_node_accepts_a_null_field() -> None:
    """A field with no provider and no format accepts anything, with no lines."""
    expected = [as_json(check(None, "anything"))]
    assert expected == run_node([("plain", "anything")], {"plain": None})
