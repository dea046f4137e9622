"""python-dotenv loads when a .env is first read or written, not when the server starts."""

import json
import subprocess
import sys
from pathlib import Path

# The modules a fresh interpreter adds by importing the sinks (what a tool call imports).
PROBE = """
import json, sys
before = set(sys.modules)
import offprompt.sinks, offprompt.sinks.dotenv, offprompt.sinks.verify
print(json.dumps(sorted(set(sys.modules) - before)))
"""

HELLO = [
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "import-test", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
]


def _python_dotenv(modules: list[str]) -> list[str]:
    return [m for m in modules if m == "dotenv" or m.startswith("dotenv.")]


def test_importing_the_sinks_loads_no_python_dotenv() -> None:
    """offprompt.sinks and its dotenv/verify modules import python-dotenv inside functions."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert [] == _python_dotenv(json.loads(out))


def test_server_start_up_and_tools_list_load_no_python_dotenv(project: Path) -> None:
    """`offprompt serve` answers initialize and tools/list without importing python-dotenv."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "offprompt", "serve"],
        input="".join(json.dumps(m) + "\n" for m in HELLO),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [0, 1] == [a["id"] for a in answers if "result" in a]
    # -X importtime writes `import time: self | cumulative | module` for each module loaded.
    loaded = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line]
    assert any(m.startswith("offprompt.") for m in loaded)  # the report was read
    assert [] == _python_dotenv(loaded)
