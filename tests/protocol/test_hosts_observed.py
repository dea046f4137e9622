"""The exact opening sequences today's Claude Code and Codex send (reference/hosts-observed.md)."""

import json
from typing import Any

import mcp_types.methods as methods
from wire import OFFPROMPT, Wire

CLAUDE_INFO = (
    '{"name":"claude-code","title":"Claude Code","version":"2.1.328",'
    '"description":"Anthropic\'s agentic coding tool","websiteUrl":"https://claude.com/claude-code"}'
)
CLAUDE_META = (
    '{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":'
    + CLAUDE_INFO
    + ',"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},'
    '"elicitation":{"form":{},"url":{}}}}'
)
CLAUDE_OPENING = [
    '{"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{"_meta":'
    + CLAUDE_META
    + "}}",
    '{"method":"tools/list","jsonrpc":"2.0","id":0,"params":{"_meta":' + CLAUDE_META + "}}",
]
CODEX_OPENING = [
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    '"capabilities":{"experimental":{"codex/auth-change":{}},"elicitation":{"form":{},"url":{}}},'
    '"clientInfo":{"name":"codex-mcp-client","title":"Codex","version":"0.169.0"}}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":0}}}',
]


def replay(wire: Wire, lines: list[str]) -> None:
    for line in lines:
        wire.send_raw(line.encode() + b"\n")


def test_claude_code_opening_is_answered_modern(spawn: Any) -> None:
    """Claude Code 2.1.328: server/discover then a modern tools/list, both valid 2026 results."""
    wire = spawn(OFFPROMPT)
    replay(wire, CLAUDE_OPENING)
    discover = wire.response("server-discover-probe-1")["result"]
    tools = wire.response(0)["result"]
    methods.validate_server_result("server/discover", "2026-07-28", discover)
    methods.validate_server_result("tools/list", "2026-07-28", tools)
    assert "2026-07-28" in discover["supportedVersions"]
    assert discover["instructions"]


def test_claude_code_fallback_initialize_after_discover(spawn: Any) -> None:
    """Claude Code falls back to initialize on the same process; it must still succeed."""
    wire = spawn(OFFPROMPT)
    replay(wire, CLAUDE_OPENING[:1])
    wire.response("server-discover-probe-1")
    init = json.loads(CODEX_OPENING[0])
    init["params"]["protocolVersion"] = "2025-11-25"
    init["params"]["clientInfo"] = json.loads(CLAUDE_INFO)
    wire.send(init)
    assert wire.response(0)["result"]["protocolVersion"] == "2025-11-25"


def test_codex_opening_is_answered_legacy(spawn: Any) -> None:
    """Codex 0.169: initialize 2025-06-18, initialized, tools/list with a bare progressToken."""
    wire = spawn(OFFPROMPT)
    replay(wire, CODEX_OPENING)
    init = wire.response(0)["result"]
    assert init["protocolVersion"] == "2025-06-18"
    methods.validate_server_result("initialize", "2025-11-25", init)
    tools = wire.response(1)["result"]
    assert "resultType" not in tools
    methods.validate_server_result("tools/list", "2025-11-25", tools)


def test_codex_declared_url_mode_gets_url_elicitation(wire: Wire) -> None:
    """Codex negotiates 2025-06-18 but declares URL mode: capabilities decide, so it is asked."""
    replay(wire, CODEX_OPENING)
    wire.response(1)
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "_meta": {
                "callId": "call_1",
                "x-codex-turn-metadata": {"model": "gpt-5"},
                "progressToken": 1,
            },
            "name": "elicit",
            "arguments": {},
        },
    }
    wire.send(call)
    ask = wire.expect(lambda m: m.get("method") == "elicitation/create")
    assert ask["params"]["mode"] == "url"
    wire.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}})
    assert wire.response(2)["result"]["structuredContent"]["outcome"] == "decline"


def test_claude_code_print_mode_cancel_retry(wire: Wire) -> None:
    """Claude Code -p retries at once with cancel and a new progressToken; the tool hears it."""
    replay(wire, CLAUDE_OPENING)
    wire.response(0)
    meta = json.loads(CLAUDE_META)
    first = {
        "method": "tools/call",
        "params": {
            "name": "elicit",
            "arguments": {},
            "_meta": {**meta, "claudecode/toolUseId": "toolu_01", "progressToken": 1},
        },
        "jsonrpc": "2.0",
        "id": 1,
    }
    wire.send(first)
    r1 = wire.response(1)["result"]
    assert r1["resultType"] == "input_required"
    (key,) = r1["inputRequests"]
    second = json.loads(json.dumps(first))
    second["id"] = 2
    second["params"]["_meta"]["progressToken"] = 2
    second["params"]["inputResponses"] = {key: {"action": "cancel"}}
    second["params"]["requestState"] = r1["requestState"]
    wire.send(second)
    r2 = wire.response(2)["result"]
    methods.validate_server_result("tools/call", "2026-07-28", r2)
    assert r2["structuredContent"]["outcome"] == "cancel"
