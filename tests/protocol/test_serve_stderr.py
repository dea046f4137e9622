"""`offprompt serve` sets up its stderr logging only when it has something to say (the first
replies do without `logging`); what it says then still has the prefix and no traceback."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

from wire import Wire

# A stdio server whose tools/list cannot be written (a set is not JSON): the failure happens in
# the synchronous phase, before anything else set up logging.
BROKEN_LISTING = """
import sys
from offprompt.mcp.declaration import Tool
from offprompt.mcp.server import ServerInfo
from offprompt.mcp.stdio import App, run

async def handler(arguments, ctx):
    raise AssertionError("never called")

bad = Tool(name="bad", title="Bad", description="d", input_schema={"enum": {1, 2}},
           output_schema=None, annotations={}, handler=handler)
sys.exit(run(lambda: App([bad], ServerInfo("broken", "0"))))
"""

FAILING_APP = """
import sys
from offprompt.mcp.stdio import run

def make_app():
    raise ValueError("the listing could not be read")

sys.exit(run(make_app))
"""


def test_an_error_before_the_first_tool_call_is_one_prefixed_line(
    spawn: Callable[..., Wire],
) -> None:
    """A message that fails in the synchronous phase is logged with the prefix, and the server
    goes on answering."""
    w = spawn([sys.executable, "-c", BROKEN_LISTING])
    w.initialize()
    w.send({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
    assert w.request("ping", rid="after")["result"] == {}
    assert w.close() == 0
    lines = w.wait_stderr().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("offprompt: unexpected error handling a message (TypeError at ")


def test_a_failing_start_is_one_prefixed_line_without_traceback() -> None:
    """An app that cannot be made says so in one `offprompt: ` line, never a traceback."""
    done: Any = subprocess.run(
        [sys.executable, "-c", FAILING_APP],
        input=b"",
        capture_output=True,
        timeout=10,
        check=False,
    )
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 1
    assert len(lines) == 1, lines
    assert lines[0].startswith("offprompt: unexpected error (ValueError at ")
    assert "the listing could not be read" not in lines[0]
