"""`offprompt guard`, the hook hosts run before each tool call (DESIGN §14): read one event on
stdin, decide, answer in the host's dialect (exit 2 and one line on stderr to block).

Imports only re, json, glob and fnmatch beside what Python starts with, and reads the journal
itself, so the hook starts fast (DESIGN §14: ≤ 50 ms per call): no dataclasses, typing,
datetime, pathlib, click or platformdirs on this path (tests/guard/test_hook_imports.py checks).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping

from offprompt.guard import disk, events
from offprompt.guard.decide import decide
from offprompt.guard.protected import Protected

__all__ = ["MAX_EVENT_BYTES", "crude", "main", "reason"]

# An event larger than this is not one tool call; read no more than this from stdin.
MAX_EVENT_BYTES = 4 * 1024 * 1024

# The crude check used when the event cannot be understood: a dotenv name as its own token.
_CRUDE_DOTENV = re.compile(
    r"(?<![\w.-])\.env(?:\.local|\.development|\.production|\.staging|\.test|\.[\w-]+\.local)?"
    r"(?![\w.-])"
)


def crude(raw: str, protected: Protected) -> str | None:
    """When the event cannot be understood: a protected name anywhere in it, as a token."""
    m = _CRUDE_DOTENV.search(raw)
    if m:
        return m.group(0)
    for name in protected.written_names:
        if re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w.-])", raw):
            return name
    return None


def reason(name: str) -> str:
    """The one line the agent reads when a call is blocked."""
    return (
        f"offprompt guard: blocked: this would expose {name}, which holds secrets the model must"
        f" not see. Call the secret_status tool, or run `offprompt keys {name}`, to see which keys"
        " are set instead of reading the file."
    )


# --- the hook ----------------------------------------------------------------------------------


def main(stdin: bytes | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Read one event on stdin; exit 2 with one line on stderr to block, 0 to let it through.
    Cursor and the Copilot runtime also get their JSON answer on stdout.

    Any failure blocks only when the raw event names a protected file (crude check).
    """
    env = os.environ if environ is None else environ
    raw = b""
    protected = Protected()
    dialect = "claude"
    try:
        raw = sys.stdin.buffer.read(MAX_EVENT_BYTES) if stdin is None else stdin
        text = raw.decode("utf-8", "replace")
    except Exception:
        text = ""
    try:
        try:
            protected = Protected(disk.journal_files(env))
        except Exception:
            # An unreadable journal must not open the door to the dotenv files.
            protected = Protected()
        event = json.loads(text)
        if not isinstance(event, dict):
            raise ValueError("the event is not a JSON object")
        dialect = events.dialect(event)
        event = events.normalise(dialect, event)
        home = env.get("HOME") or os.path.expanduser("~")
        hit = decide(event, protected, home)
    except Exception:
        try:
            hit = crude(text, protected)
        except Exception:
            hit = ".env" if ".env" in text else None
    return events.answer(dialect, None if hit is None else reason(hit))
