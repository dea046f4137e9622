"""Raw JSON-line tests of tools/call: errors, refusals, progress, cancellation, MRTR state."""

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types.methods as methods
import pytest
from wire import OFFPROMPT, Wire, meta

URL_CAPS = {"elicitation": {"form": {}, "url": {}}}


def call(name: str, arguments: Any = None, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    params.update(extra)
    return params


def modern_call(name: str, arguments: Any = None, **extra: Any) -> dict[str, Any]:
    params = call(name, arguments, **extra)
    params["_meta"] = {**meta(), **params.get("_meta", {})}
    return params


def test_unknown_tool_is_invalid_params(wire: Wire) -> None:
    """An unknown tool name is a JSON-RPC -32602, in both revisions."""
    wire.initialize()
    assert wire.request("tools/call", call("nope"))["error"]["code"] == -32602
    assert wire.request("tools/call", modern_call("nope"))["error"]["code"] == -32602


@pytest.mark.parametrize("arguments", [[1], "text", 5, None])
def test_arguments_not_an_object_is_invalid_params(wire: Wire, arguments: Any) -> None:
    """arguments that are not an object (null included) get -32602."""
    wire.initialize()
    params = {"name": "echo", "arguments": arguments}
    assert wire.request("tools/call", params)["error"]["code"] == -32602


@pytest.mark.parametrize("arguments", [None, [], ["x"], "text", 5, 1.5, True])
@pytest.mark.parametrize("tool", ["collect_secret", "secret_status"])
def test_real_server_answers_non_object_arguments_with_invalid_params(
    spawn: Callable[..., Wire], project: Path, tool: str, arguments: Any
) -> None:
    """`offprompt serve`: `"arguments"` sent as null or any other non-object is the
    CallToolRequest shape broken, a JSON-RPC -32602 (not a refusal result), in both revisions."""
    server = spawn(OFFPROMPT, env={"OFFPROMPT_SANDBOX": "0", "BROWSER": "false"}, cwd=str(project))
    server.initialize()
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    answer = server.request("tools/call", params)
    assert "result" not in answer, answer
    assert answer["error"]["code"] == -32602
    modern = {**params, "_meta": meta()}
    assert server.request("tools/call", modern)["error"]["code"] == -32602


def test_real_server_keeps_absent_arguments_a_refusal_result(
    spawn: Callable[..., Wire], project: Path
) -> None:
    """No `arguments` at all is still no arguments (today's behaviour, not -32602):
    collect_secret answers its refusal result naming the missing `secrets`, and secret_status
    (whose arguments are all optional) its answer for the project's .env."""
    server = spawn(OFFPROMPT, env={"OFFPROMPT_SANDBOX": "0", "BROWSER": "false"}, cwd=str(project))
    server.initialize()
    r = server.request("tools/call", {"name": "collect_secret"})["result"]
    methods.validate_server_result("tools/call", "2025-11-25", r)
    assert r["isError"] is True
    assert r["content"][0]["text"].startswith("offprompt refused that request: ")
    assert "secrets is required" in r["content"][0]["text"]
    r = server.request("tools/call", {"name": "secret_status"})["result"]
    methods.validate_server_result("tools/call", "2025-11-25", r)
    assert "isError" not in r
    assert r["structuredContent"]["file"] == ".env"


def test_schema_violation_is_a_refusal_result(wire: Wire) -> None:
    """Schema violations are isError results with the refusal prefix and no structuredContent."""
    wire.initialize()
    r = wire.request("tools/call", call("echo", {"text": "x" * 51, "extra": 1}))["result"]
    methods.validate_server_result("tools/call", "2025-11-25", r)
    assert r["isError"] is True
    assert "structuredContent" not in r
    assert len(r["content"]) == 1
    text = r["content"][0]["text"]
    assert text.startswith("offprompt refused that request: ")
    assert "text must be at most 50 characters" in text
    assert "extra is not an allowed field" in text
    assert "x" * 51 not in text


def test_missing_required_argument_is_a_refusal_result(wire: Wire) -> None:
    """A missing required argument is a refusal naming it."""
    r = wire.request("tools/call", modern_call("echo", {}))["result"]
    methods.validate_server_result("tools/call", "2026-07-28", r)
    assert r["isError"] is True
    assert "text is required" in r["content"][0]["text"]


def test_success_has_structured_content_and_same_json_text(wire: Wire) -> None:
    """A result carries structuredContent and the same JSON as its last text block."""
    import json

    wire.initialize()
    r = wire.request("tools/call", call("echo", {"text": "hi"}))["result"]
    assert r["structuredContent"]["echo"] == "hi"
    assert r["content"][0]["text"] == "echoed"
    assert json.loads(r["content"][-1]["text"]) == r["structuredContent"]


def test_modern_tool_result_is_valid_2026(wire: Wire) -> None:
    """A modern tools/call result has resultType complete and serverInfo in _meta."""
    r = wire.request("tools/call", modern_call("echo", {"text": "hi"}))["result"]
    methods.validate_server_result("tools/call", "2026-07-28", r)
    assert r["resultType"] == "complete"
    assert r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "fixture"


def test_handler_exception_is_internal_error_without_detail(wire: Wire) -> None:
    """A crashing handler gets -32603 and no internal detail; the server goes on."""
    wire.initialize()
    r = wire.request("tools/call", call("boom"))
    assert r["error"]["code"] == -32603
    assert "internal detail" not in r["error"]["message"]
    assert wire.request("ping")["result"] == {}
    wire.close()
    err = wire.wait_stderr()
    assert "RuntimeError at " in err  # the kind and place are logged for the maintainer...
    assert "internal detail" not in err  # ...never the message, which could quote a value


def test_stray_output_never_reaches_stdout(wire: Wire) -> None:
    """print(), a child process and raw writes to fd 1 in a tool never reach the protocol stream."""
    wire.initialize()
    r = wire.request("tools/call", call("noisy"))
    assert r["result"]["structuredContent"] == {"ok": True}
    wire.close()
    assert wire.stdout_is_only_json()
    err = wire.wait_stderr()
    assert "stray print" in err
    assert "child output" in err
    assert "raw write to fd 1" in err


@pytest.mark.parametrize("token", [7, "tok"])
def test_progress_is_strictly_increasing_with_the_token(wire: Wire, token: Any) -> None:
    """A call with a progressToken gets progress with that token, strictly increasing."""
    wire.initialize()
    params = call("wait", {"steps": 4}, _meta={"progressToken": token})
    r = wire.request("tools/call", params)
    assert r["result"]["structuredContent"] == {"done": True}
    notes = [m for m in wire.backlog if m.get("method") == "notifications/progress"]
    assert [n["params"]["progressToken"] for n in notes] == [token] * 4
    values = [n["params"]["progress"] for n in notes]
    assert values == sorted(set(values))
    assert notes[0]["params"]["message"] == "step 0"


def test_no_progress_without_a_token(wire: Wire) -> None:
    """Without a progressToken no progress notification is sent."""
    wire.initialize()
    wire.request("tools/call", call("wait", {"steps": 3}))
    assert not [m for m in wire.backlog if m.get("method") == "notifications/progress"]


def test_cancelled_call_gets_no_response(wire: Wire) -> None:
    """notifications/cancelled stops the call; no response is ever sent for that id."""
    wire.initialize()
    wire.send(
        {
            "jsonrpc": "2.0",
            "id": 41,
            "method": "tools/call",
            "params": call("wait", {"forever": True}),
        }
    )
    time.sleep(0.3)
    wire.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 41, "reason": "user"},
        }
    )
    assert wire.request("ping", rid="after")["result"] == {}
    time.sleep(0.3)
    assert all(m.get("id") != 41 for m in wire.backlog)
    assert not any(b'"id":41' in line for line in wire.lines)


def test_cancel_of_unknown_id_is_ignored(wire: Wire) -> None:
    """A cancellation for an unknown or finished id changes nothing."""
    wire.initialize()
    wire.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "ghost"}}
    )
    assert (
        wire.request("tools/call", call("echo", {"text": "ok"}))["result"]["structuredContent"][
            "echo"
        ]
        == "ok"
    )


def test_duplicate_in_flight_id_is_refused(wire: Wire) -> None:
    """A second request reusing an id still in flight gets -32600; the first still answers."""
    wire.initialize()
    wire.send(
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": call("wait", {"steps": 2, "pause": 0.3}),
        }
    )
    time.sleep(0.1)
    wire.send({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    first = wire.response(5)
    second = wire.response(5)
    assert {("error" in first), ("error" in second)} == {True, False}


def test_legacy_elicitation_round_trip(wire: Wire) -> None:
    """A legacy URL elicitation carries mode, url, message and elicitationId; accept completes."""
    wire.initialize(URL_CAPS)
    wire.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call("elicit")})
    ask = wire.expect(lambda m: m.get("method") == "elicitation/create")
    p = ask["params"]
    assert p["mode"] == "url"
    assert p["elicitationId"] == "req-1"
    assert p["url"].startswith("http://127.0.0.1:")
    assert "TEST_KEY" in p["message"]
    wire.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}})
    r = wire.response(3)
    assert r["result"]["structuredContent"]["outcome"] == "accept"
    done = [m for m in wire.backlog if m.get("method") == "notifications/elicitation/complete"]
    assert done[0]["params"] == {"elicitationId": "req-1"}


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ({"result": {"action": "decline"}}, "decline"),
        ({"result": {"action": "cancel"}}, "cancel"),
        ({"result": {"action": "bogus"}}, "error"),
        ({"error": {"code": -32602, "message": "url mode not supported"}}, "error"),
    ],
)
def test_legacy_elicitation_answers(wire: Wire, answer: dict[str, Any], outcome: str) -> None:
    """decline, cancel, a bad action and an error answer each reach the tool as such."""
    wire.initialize(URL_CAPS)
    wire.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call("elicit")})
    ask = wire.expect(lambda m: m.get("method") == "elicitation/create")
    wire.send({"jsonrpc": "2.0", "id": ask["id"], **answer})
    assert wire.response(3)["result"]["structuredContent"]["outcome"] == outcome


def test_legacy_elicitation_times_out(spawn: Any) -> None:
    """No answer within the window reaches the tool as a timeout; a late answer is ignored."""
    wire = spawn(env={"FIXTURE_ELICIT_WAIT": "0.3"})
    wire.initialize(URL_CAPS)
    wire.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call("elicit")})
    ask = wire.expect(lambda m: m.get("method") == "elicitation/create")
    assert wire.response(3)["result"]["structuredContent"]["outcome"] == "timeout"
    wire.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}})
    assert wire.request("ping")["result"] == {}


@pytest.mark.parametrize("caps", [{}, {"elicitation": {}}, {"elicitation": {"form": {}}}])
def test_no_url_capability_means_no_elicitation(wire: Wire, caps: dict[str, Any]) -> None:
    """Without elicitation.url declared, no URL elicitation is sent in either revision."""
    wire.initialize(caps)
    legacy = wire.request("tools/call", call("elicit"))
    assert legacy["result"]["structuredContent"]["outcome"] == "unsupported"
    m = meta(**{"io.modelcontextprotocol/clientCapabilities": caps})
    modern = wire.request("tools/call", call("elicit", _meta=m))
    assert modern["result"]["resultType"] == "complete"
    assert modern["result"]["structuredContent"]["outcome"] == "unsupported"
    assert not any(b"elicitation/create" in line for line in wire.lines)


def test_legacy_roots(wire: Wire) -> None:
    """roots/list goes to a client that declared roots, and the URIs reach the tool."""
    wire.initialize({"roots": {"listChanged": True}})
    wire.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call("roots")})
    ask = wire.expect(lambda m: m.get("method") == "roots/list")
    wire.send(
        {
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {"roots": [{"uri": "file:///work/p", "name": "p"}, {"bad": 1}]},
        }
    )
    assert wire.response(3)["result"]["structuredContent"]["roots"] == ["file:///work/p"]


def test_roots_not_asked_without_capability(wire: Wire) -> None:
    """A client without the roots capability is never sent roots/list."""
    wire.initialize({})
    assert wire.request("tools/call", call("roots"))["result"]["structuredContent"]["roots"] is None


# -- 2026-07-28 multi round-trip ----------------------------------------------------------------


def first_round(wire: Wire, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    r = wire.request("tools/call", modern_call("elicit", arguments or {}))["result"]
    methods.validate_server_result("tools/call", "2026-07-28", r)
    assert r["resultType"] == "input_required"
    return r


def retry(
    wire: Wire,
    state: Any,
    responses: Any = None,
    arguments: dict[str, Any] | None = None,
    **meta_over: Any,
) -> dict[str, Any]:
    params = modern_call("elicit", arguments or {}, requestState=state)
    if responses is not None:
        params["inputResponses"] = responses
    params["_meta"].update(meta_over)
    return wire.request("tools/call", params)


def test_input_required_shape(wire: Wire) -> None:
    """The first modern round asks for a URL elicitation (no elicitationId) and seals state."""
    r = first_round(wire)
    ask = r["inputRequests"]["page"]
    assert ask["method"] == "elicitation/create"
    assert set(ask["params"]) == {"mode", "url", "message"}
    assert isinstance(r["requestState"], str)
    assert "ttlMs" not in r


def test_retry_with_accept_completes(wire: Wire) -> None:
    """The retry with accept and the echoed state reaches the tool with its own payload."""
    r = first_round(wire)
    done = retry(wire, r["requestState"], {"page": {"action": "accept"}})["result"]
    methods.validate_server_result("tools/call", "2026-07-28", done)
    assert done["structuredContent"] == {"outcome": "accept", "state": {"round": 1}}


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_retry_with_decline_or_cancel_reaches_the_tool(wire: Wire, action: str) -> None:
    """decline and cancel on the retry are the tool's to handle (the ladder goes on)."""
    r = first_round(wire)
    done = retry(wire, r["requestState"], {"page": {"action": action}})["result"]
    assert done["structuredContent"]["outcome"] == action


def test_missing_input_response_asks_again(wire: Wire) -> None:
    """A retry without the requested key gets a fresh input_required, not an error."""
    r = first_round(wire)
    again = retry(wire, r["requestState"], {"other": {"action": "accept"}})["result"]
    assert again["resultType"] == "input_required"
    assert again["requestState"] != r["requestState"]
    done = retry(wire, again["requestState"], {"page": {"action": "accept"}})["result"]
    assert done["structuredContent"]["state"] == {"round": 2}


def test_extra_input_responses_are_ignored(wire: Wire) -> None:
    """Extra inputResponses keys do not disturb the answer."""
    r = first_round(wire)
    done = retry(wire, r["requestState"], {"page": {"action": "accept"}, "zzz": {"x": 1}})["result"]
    assert done["structuredContent"]["outcome"] == "accept"


@pytest.mark.parametrize("responses", [None, [1], "accept"])
def test_input_responses_not_an_object_is_invalid_params(wire: Wire, responses: Any) -> None:
    """null or non-object inputResponses get -32602."""
    r = first_round(wire)
    params = modern_call("elicit", {}, requestState=r["requestState"], inputResponses=responses)
    assert wire.request("tools/call", params)["error"]["code"] == -32602


def tamper(state: str) -> str:
    i = len(state) // 3
    return state[:i] + ("A" if state[i] != "A" else "B") + state[i + 1 :]


@pytest.mark.parametrize(
    "mutate",
    [
        tamper,
        lambda s: s + "x",
        lambda s: s.split(".")[0],
        lambda s: "",
        lambda s: 12,
        lambda s: "a.b",
    ],
    ids=["flipped", "appended", "no-mac", "empty", "number", "garbage"],
)
def test_tampered_state_is_invalid_params(wire: Wire, mutate: Any) -> None:
    """A requestState that fails verification gets -32602, never a re-prompt."""
    r = first_round(wire)
    assert (
        retry(wire, mutate(r["requestState"]), {"page": {"action": "accept"}})["error"]["code"]
        == -32602
    )


def test_replayed_state_is_invalid_params(wire: Wire) -> None:
    """A state opens once: replaying it after use gets -32602."""
    r = first_round(wire)
    assert "result" in retry(wire, r["requestState"], {"page": {"action": "accept"}})
    assert retry(wire, r["requestState"], {"page": {"action": "accept"}})["error"]["code"] == -32602


def test_state_for_other_arguments_is_invalid_params(wire: Wire) -> None:
    """A state is bound to the arguments it was issued for."""
    r = first_round(wire, {"tag": "a"})
    bad = retry(wire, r["requestState"], {"page": {"action": "accept"}}, arguments={"tag": "b"})
    assert bad["error"]["code"] == -32602


def test_state_for_other_client_is_invalid_params(wire: Wire) -> None:
    """A state is bound to the client's name."""
    r = first_round(wire)
    other = {"io.modelcontextprotocol/clientInfo": {"name": "someone-else", "version": "1"}}
    assert (
        retry(wire, r["requestState"], {"page": {"action": "accept"}}, **other)["error"]["code"]
        == -32602
    )


def test_expired_state_is_invalid_params(spawn: Any) -> None:
    """A state past its expiry gets -32602."""
    wire = spawn(env={"FIXTURE_STATE_TTL": "0.2"})
    r = first_round(wire)
    time.sleep(0.5)
    assert retry(wire, r["requestState"], {"page": {"action": "accept"}})["error"]["code"] == -32602


def test_input_responses_without_state_is_invalid_params(wire: Wire) -> None:
    """inputResponses with no requestState gets -32602."""
    params = modern_call("elicit", {}, inputResponses={"page": {"action": "accept"}})
    assert wire.request("tools/call", params)["error"]["code"] == -32602


def test_state_from_another_process_is_invalid_params(spawn: Any) -> None:
    """The sealing key is per process: another server refuses the state."""
    a, b = spawn(), spawn()
    r = first_round(a)
    assert retry(b, r["requestState"], {"page": {"action": "accept"}})["error"]["code"] == -32602
