"""Today's hosts, message for message (reference/hosts-observed.md), on the real server."""

from typing import Any

from wire import Wire

from .flow import Flow, secrets_of

CODEX_INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {
        "experimental": {"codex/auth-change": {}},
        "elicitation": {"form": {}, "url": {}},
    },
    "clientInfo": {"name": "codex-mcp-client", "title": "Codex", "version": "0.169.0"},
}
CLAUDE_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {
        "name": "claude-code",
        "title": "Claude Code",
        "version": "2.1.328",
        "description": "Anthropic's agentic coding tool",
        "websiteUrl": "https://claude.com/claude-code",
    },
    "io.modelcontextprotocol/clientCapabilities": {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    },
}


def call(rid: int, meta: dict[str, Any], args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    params = {"name": "collect_secret", "arguments": args, "_meta": meta, **extra}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def test_codex_gets_no_dialog_for_the_local_page_and_the_browser_writes(
    flow: Flow, canary: str
) -> None:
    """Codex 0.169 (2025-06-18 + elicitation.url) declines every http:// dialog unseen, so none
    is sent: $BROWSER opens the page once and it is written."""
    args = secrets_of("OPENAI_API_KEY")
    env = {**flow.env, **flow.person("http", {"OPENAI_API_KEY": canary})}
    wire = Wire(flow.command(), env=env, cwd=str(flow.project))
    try:
        opened = wire.request("initialize", CODEX_INIT, rid=0)
        assert opened["result"]["protocolVersion"] == "2025-06-18"
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        wire.send(call(2, {"callId": "call_1", "progressToken": 1}, args))
        answer = wire.response(2, timeout=20)["result"]
        wire.close()
    finally:
        wire.kill()
    (note,) = flow.wait_person_notes()
    assert b"elicitation/create" not in flow.traffic()
    flow.assert_fingerprint(answer, note["fingerprint"], client="codex-mcp-client")
    flow.assert_contained(
        canary, stderr=wire.wait_stderr(), results=(answer,), name="OPENAI_API_KEY"
    )


def test_claude_print_mode_cancels_and_the_browser_writes(flow: Flow, canary: str) -> None:
    """Claude Code -p (2026-07-28, retry with cancel): $BROWSER, progress, then written."""
    args = secrets_of("OPENAI_API_KEY")
    env = {**flow.env, **flow.person("http", {"OPENAI_API_KEY": canary})}
    meta = {**CLAUDE_META, "claudecode/toolUseId": "toolu_01"}
    wire = Wire(flow.command(), env=env, cwd=str(flow.project))
    try:
        wire.send(call(1, {**meta, "progressToken": 1}, args))
        first = wire.response(1)["result"]
        (key,) = first["inputRequests"]
        answers = {key: {"action": "cancel"}}
        state = first["requestState"]
        wire.send(
            call(2, {**meta, "progressToken": 2}, args, inputResponses=answers, requestState=state)
        )
        progress = wire.expect(lambda m: m.get("method") == "notifications/progress")
        answer = wire.response(2, timeout=20)["result"]
        wire.close()
    finally:
        wire.kill()
    (note,) = flow.wait_person_notes()
    assert first["resultType"] == "input_required"
    assert first["inputRequests"][key]["params"]["url"] == note["url"]
    assert progress["params"]["progressToken"] == 2
    assert answer["resultType"] == "complete"
    flow.assert_fingerprint(answer, note["fingerprint"], client="claude-code")
    flow.assert_contained(
        canary, stderr=wire.wait_stderr(), results=(first, answer), name="OPENAI_API_KEY"
    )
