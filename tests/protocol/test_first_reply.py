"""What `offprompt serve` loads before its first replies (DESIGN §2, "The path to the first
reply"): `offprompt.mcp`, a few small base modules and the standard library, nothing else.

The server runs as a host starts it, the console script and `python -m offprompt serve`, with
`modules_hook/` on PYTHONPATH: its `sitecustomize` records `sys.modules` at the moment each
answer is written (the instrument lives here, not in the product).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from wire import MODERN_META, ROOT

HOOK = Path(__file__).resolve().with_name("modules_hook")
LEGACY_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}
TOOLS = ["collect_secret", "await_secret", "cancel_secret", "secret_status"]

ALLOWED = {
    "offprompt",
    "offprompt.errors",
    "offprompt.utf8",
    "offprompt.mcp",
    "offprompt.mcp.jsonrpc",
    "offprompt.mcp.revisions",
    "offprompt.mcp.server",
    "offprompt.mcp.stdio",
    "offprompt.mcp.declaration",
    "offprompt.tools.app",
    "offprompt.tools",
}
"""Every offprompt module the first replies may load; `tools` is the package that reads the
listing, not `tools.schemas`, which needs the registry and the core."""

NOT_BEFORE_THE_FIRST_REPLY = {"asyncio", "dataclasses", "logging", "typing"}
"""Standard-library modules the first replies do without today (each costs milliseconds to
import): the event loop, the log and the annotations' helpers load with the first tool call."""

CONSOLE_SCRIPT = str(Path(sys.executable).with_name("offprompt"))
ENTRY_POINTS = {
    # The console script imports `offprompt.__main__` as a module; `-m` runs it as `__main__`.
    "console script": ([CONSOLE_SCRIPT, "serve"], ALLOWED | {"offprompt.__main__"}),
    "python -m": ([sys.executable, "-m", "offprompt", "serve"], ALLOWED),
}


def _env(record: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HOOK), *filter(None, [env.get("PYTHONPATH")])])
    env["OFFPROMPT_TEST_MODULES_FILE"] = str(record)
    return env


def _baseline(tmp_path: Path) -> set[str]:
    """What the interpreter itself loads for `pass` (site, the venv's .pth hooks, the hook)."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys; print(' '.join(sys.modules))"],
        env=_env(tmp_path / "unused"),
        capture_output=True,
        text=True,
        check=True,
    )
    return set(done.stdout.split())


def _first_replies(cmd: list[str], tmp_path: Path) -> tuple[list[dict[str, Any]], list[set[str]]]:
    """Start `cmd`, ask the four first-reply questions of both revisions; the answers, and for
    each the modules loaded when it was written."""
    record = tmp_path / "modules"
    modern = {"_meta": MODERN_META}
    asks: list[tuple[str, dict[str, Any] | None]] = [
        ("initialize", LEGACY_INIT),
        ("tools/list", None),
        ("server/discover", modern),
        ("tools/list", modern),
    ]
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(record),
        cwd=str(ROOT),
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    answers = []
    try:
        for rid, (method, params) in enumerate(asks):
            msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
            if params is not None:
                msg["params"] = params
            proc.stdin.write(json.dumps(msg).encode() + b"\n")
            proc.stdin.flush()
            answers.append(json.loads(proc.stdout.readline()))
        loaded = [set(line.split()) for line in record.read_text(encoding="utf-8").splitlines()]
    finally:
        proc.stdin.close()
        proc.wait(10)
        proc.stdout.close()
    return answers, loaded


def _unexpected(loaded: set[str], baseline: set[str], allowed: set[str]) -> dict[str, Any]:
    """What a first reply must not have loaded, by kind; empty when all is well."""
    ours = {m for m in loaded if m == "offprompt" or m.startswith("offprompt.")}
    others = loaded - ours - baseline
    third_party = sorted(
        {m.split(".")[0] for m in others} - set(sys.stdlib_module_names) - {"__main__"}
    )
    found: dict[str, Any] = {}
    if ours - allowed:
        found["offprompt modules not allowed"] = sorted(ours - allowed)
    if allowed - ours:
        found["allowed offprompt modules not loaded (update ALLOWED)"] = sorted(allowed - ours)
    if third_party:
        found["outside the standard library"] = third_party
    heavy = sorted(others & NOT_BEFORE_THE_FIRST_REPLY)
    if heavy:
        found["standard library the first reply does without"] = heavy
    return found


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_first_replies_load_only_the_protocol_layer(entry: str, tmp_path: Path) -> None:
    """initialize, server/discover and tools/list (both revisions) load exactly the allowed
    offprompt modules, nothing outside the standard library, and none of asyncio, logging,
    dataclasses and typing."""
    cmd, allowed = ENTRY_POINTS[entry]
    answers, loaded = _first_replies(cmd, tmp_path)
    asks = len(answers)
    assert [a["result"]["serverInfo"]["name"] for a in answers[::2]] == ["offprompt"] * 2
    assert [[t["name"] for t in a["result"]["tools"]] for a in answers[1::2]] == [TOOLS] * 2
    baseline = _baseline(tmp_path)
    assert [_unexpected(at, baseline, allowed) for at in loaded] == [{}] * asks


def test_an_import_of_the_registry_on_the_path_is_caught(tmp_path: Path) -> None:
    """The check is not blind: a server that imports the registry before it answers is named."""
    serve = (
        "import sys, offprompt.registry; sys.argv[1:] = ['serve'];"
        " from offprompt.__main__ import main; main()"
    )
    _, loaded = _first_replies([sys.executable, "-c", serve], tmp_path)
    found = _unexpected(loaded[0], _baseline(tmp_path), ALLOWED | {"offprompt.__main__"})
    assert "offprompt.registry" in found["offprompt modules not allowed"]


def test_a_third_party_import_on_the_path_is_caught(tmp_path: Path) -> None:
    """A package outside the standard library loaded before the first reply is named."""
    serve = (
        "import sys, click; sys.argv[1:] = ['serve']; from offprompt.__main__ import main; main()"
    )
    _, loaded = _first_replies([sys.executable, "-c", serve], tmp_path)
    found = _unexpected(loaded[0], _baseline(tmp_path), ALLOWED | {"offprompt.__main__"})
    assert found["outside the standard library"] == ["click"]


def test_the_event_loop_or_typing_on_the_path_is_caught(tmp_path: Path) -> None:
    """asyncio (which brings logging) or typing loaded before the first reply is named, and
    nothing else is."""
    serve = (
        "import sys, asyncio, typing; sys.argv[1:] = ['serve'];"
        " from offprompt.__main__ import main; main()"
    )
    _, loaded = _first_replies([sys.executable, "-c", serve], tmp_path)
    found = _unexpected(loaded[0], _baseline(tmp_path), ALLOWED | {"offprompt.__main__"})
    heavy = ["asyncio", "logging", "typing"]
    assert found == {"standard library the first reply does without": heavy}


NOT_FOR_A_LOCAL_LINK = {
    "cryptography",  # sealing: remote requests only
    "offprompt.crypto.seal",
    "offprompt.registry",  # only a provider or format needs it
    "offprompt.tunnel.binary",  # finding or fetching cloudflared: remote only
    "offprompt.tunnel.process",
}


def test_a_first_local_collect_links_without_tunnel_seal_or_registry(
    tmp_path: Path, project: Path
) -> None:
    """The cold path from a first collect_secret to its link loads nothing that a local
    request of plain names does not need (aiohttp itself loads beside it, off the loop)."""
    record = tmp_path / "modules"
    env = dict(_env(record), OFFPROMPT_SANDBOX="0", BROWSER="false")
    proc = subprocess.Popen(
        [sys.executable, "-m", "offprompt", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=str(project),
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    args = {"secrets": [{"name": "API_KEY"}], "reason": "The tests need it."}
    try:
        for msg in (
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": LEGACY_INIT},
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "collect_secret", "arguments": args},
            },
        ):
            proc.stdin.write(json.dumps(msg).encode() + b"\n")
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
        at_link = set(record.read_text(encoding="utf-8").splitlines()[-1].split())
    finally:
        proc.stdin.close()
        proc.wait(10)
        proc.stdout.close()
    assert "url" in answer["result"]["structuredContent"]
    assert sorted(at_link & NOT_FOR_A_LOCAL_LINK) == []
