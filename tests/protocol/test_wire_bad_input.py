"""Bad input on the real `offprompt serve`, as raw JSON lines: one clear answer, then the next.

Lone surrogates (sent as JSON escapes, as a broken client would), NUL, control characters, final
newlines against anchored patterns and over-long paths, in every string field of every tool and
in the protocol envelope. Each case gets a refusal result or a JSON-RPC error, the server answers
the next line, and stderr holds only `offprompt: ` lines, no traceback.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from wire import OFFPROMPT, Wire, meta

REFUSED = "offprompt refused that request: "
SURROGATE = "\ud800"
LEGACY_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bad-input-test", "version": "1"},
}


@pytest.fixture
def server(spawn: Callable[..., Wire], project: Path) -> Wire:
    """`offprompt serve` in an empty project, initialized; nothing opens a browser."""
    w = spawn(OFFPROMPT, env={"OFFPROMPT_SANDBOX": "0", "BROWSER": "false"}, cwd=str(project))
    w.initialize()
    return w


def collect(**overrides: Any) -> dict[str, Any]:
    """collect_secret arguments for API_KEY, with `overrides` replacing top-level fields."""
    args: dict[str, Any] = {"secrets": [{"name": "API_KEY"}], "reason": "The tests need it."}
    args.update(overrides)
    return args


def tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def assert_still_serving(w: Wire) -> None:
    """The next line is answered, and everything on stderr so far is prefixed, no traceback."""
    assert w.request("ping", rid="still-there")["result"] == {}
    w.close()
    err = w.wait_stderr()
    assert "Traceback" not in err
    assert all(line.startswith("offprompt: ") for line in err.splitlines()), err


def refusal_text(answer: dict[str, Any]) -> str:
    """The one text block of a refusal result, checked to have DESIGN §3's shape."""
    result = answer["result"]
    assert result["isError"] is True
    assert "structuredContent" not in result
    (block,) = result["content"]
    assert block["text"].startswith(REFUSED)
    return str(block["text"])


# -- tool arguments: refusal results --------------------------------------------------------------

SECRET_FIELD_CASES: dict[str, tuple[dict[str, Any], str]] = {
    "name with a final newline": ({"name": "API_KEY\n"}, "secrets[0].name must match"),
    "name with a lone surrogate": ({"name": "API_KEY" + SURROGATE}, "secrets[0].name"),
    "name with NUL": ({"name": "API_KEY\x00"}, "secrets[0].name must match"),
    "caption with a lone surrogate": (
        {"name": "API_KEY", "caption": "from the dashboard" + SURROGATE},
        "secrets[0].caption must be valid Unicode text",
    ),
    "caption with NUL": (
        {"name": "API_KEY", "caption": "a\x00b"},
        "secrets[0].caption must not contain control characters",
    ),
    "caption with a line break": (
        {"name": "API_KEY", "caption": "one\ntwo"},
        "secrets[0].caption must not contain control characters",
    ),
    "provider with a lone surrogate": (
        {"name": "API_KEY", "provider": "stripe" + SURROGATE},
        "secrets[0].provider must be valid Unicode text",
    ),
    "format with a lone surrogate": (
        {"name": "API_KEY", "format": "hex" + SURROGATE},
        "secrets[0].format must be valid Unicode text",
    ),
    "generate encoding with a lone surrogate": (
        {"name": "API_KEY", "generate": {"encoding": "hex" + SURROGATE}},
        "secrets[0].generate.encoding must be valid Unicode text",
    ),
    "field name with a lone surrogate in a secret": (
        {"name": "API_KEY", "cap" + SURROGATE: "x"},
        "secrets[0] has a field whose name is not valid Unicode text",
    ),
    "field name with a lone surrogate in generate": (
        {"name": "API_KEY", "generate": {"by" + SURROGATE: 16}},
        "secrets[0].generate has a field whose name is not valid Unicode text",
    ),
}


@pytest.mark.parametrize("case", SECRET_FIELD_CASES, ids=list(SECRET_FIELD_CASES))
def test_bad_text_in_a_secret_entry_is_refused(server: Wire, case: str, canary: str) -> None:
    """Each bad string in a secrets[] entry is a refusal naming the field, never echoing it."""
    entry, says = SECRET_FIELD_CASES[case]
    arguments = collect(secrets=[entry], reason=f"reason {canary}")
    text = refusal_text(server.request("tools/call", tool("collect_secret", arguments)))
    assert says in text
    assert SURROGATE not in text
    assert canary not in text
    assert_still_serving(server)
    assert canary not in server.stderr


TOP_LEVEL_CASES: dict[str, tuple[dict[str, Any], str]] = {
    "reason with a lone surrogate": (
        collect(reason="Billing needs it " + SURROGATE),
        "reason must be valid Unicode text",
    ),
    "reason with NUL": (
        collect(reason="Billing\x00 needs it"),
        "reason must not contain control characters",
    ),
    "reason with an escape character": (
        collect(reason="Billing \x1b[2J needs it"),
        "reason must not contain control characters",
    ),
    "sink path with a lone surrogate": (
        collect(sink={"path": ".env" + SURROGATE}),
        "sink.path must be valid Unicode text",
    ),
    "sink kind with a lone surrogate": (
        collect(sink={"kind": "dotenv" + SURROGATE}),
        "sink.kind must be valid Unicode text",
    ),
    "sink path with NUL": (
        collect(sink={"path": ".env\x00x"}),
        "must not contain control characters",
    ),
    "sink path with a line break": (
        collect(sink={"path": ".env\nx"}),
        "must not contain control characters",
    ),
    "sink path with a part over 255 bytes": (
        collect(sink={"path": "a" * 256}),
        "longer than 255 bytes",
    ),
    "sink path of many-byte characters over 255 bytes": (
        collect(sink={"path": "é" * 128}),
        "longer than 255 bytes",
    ),
    "sink path longer than the system allows": (
        # 1023 characters, within the schema's 1024; 4047 bytes before the project's own.
        collect(sink={"path": "/".join(["😀" * 63] * 16)}),
        "too long",
    ),
    "field name with a lone surrogate": (
        collect(**{"colour" + SURROGATE: "blue"}),
        "arguments has a field whose name is not valid Unicode text",
    ),
    "field name with a lone surrogate in sink": (
        collect(sink={"pa" + SURROGATE: ".env"}),
        "sink has a field whose name is not valid Unicode text",
    ),
}


@pytest.mark.parametrize("case", TOP_LEVEL_CASES, ids=list(TOP_LEVEL_CASES))
def test_bad_text_in_collect_arguments_is_refused(server: Wire, case: str) -> None:
    """Each bad reason, sink or field name is a refusal result; the server goes on."""
    arguments, says = TOP_LEVEL_CASES[case]
    text = refusal_text(server.request("tools/call", tool("collect_secret", arguments)))
    assert says in text
    assert SURROGATE not in text
    assert_still_serving(server)


REQUEST_ID_CASES: dict[str, tuple[dict[str, Any], str]] = {
    "request id with a final newline": ({"request_id": "abc\n"}, "request_id must match"),
    "request id with a lone surrogate": (
        {"request_id": "abc" + SURROGATE},
        "request_id must be valid Unicode text",
    ),
    "request id with NUL": ({"request_id": "abc\x00"}, "request_id must match"),
    "field name with a lone surrogate": (
        {"request_id": "abc", "x" + SURROGATE: 1},
        "arguments has a field whose name is not valid Unicode text",
    ),
}


@pytest.mark.parametrize("name", ["await_secret", "cancel_secret"])
@pytest.mark.parametrize("case", REQUEST_ID_CASES, ids=list(REQUEST_ID_CASES))
def test_bad_request_id_is_refused(server: Wire, name: str, case: str) -> None:
    """await_secret and cancel_secret refuse a bad request_id by the schema, never echoing it."""
    arguments, says = REQUEST_ID_CASES[case]
    text = refusal_text(server.request("tools/call", tool(name, arguments)))
    assert says in text
    assert SURROGATE not in text
    assert "abc\n" not in text
    assert_still_serving(server)


def test_newline_in_a_name_opens_no_page(server: Wire) -> None:
    """`API_KEY\\n` is refused before any request exists: no page, no link, no log of it."""
    arguments = collect(secrets=[{"name": "API_KEY\n"}])
    answer = server.request("tools/call", tool("collect_secret", arguments))
    refusal_text(answer)
    assert "http://" not in str(answer)
    assert_still_serving(server)
    assert "collecting" not in server.stderr


# -- the envelope: JSON-RPC errors ---------------------------------------------------------------


def test_lone_surrogate_in_the_id_is_invalid_request_with_null_id(server: Wire) -> None:
    """An id that is not valid Unicode cannot be echoed: -32600 with id null (JSON-RPC 2.0)."""
    server.send({"jsonrpc": "2.0", "id": "x" + SURROGATE, "method": "ping"})
    answer = server.expect(lambda m: "error" in m)
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600
    assert_still_serving(server)


def test_lone_surrogate_in_the_method_is_an_error_with_the_id(server: Wire) -> None:
    """A method that is not valid Unicode gets -32600 with the request's id, not silence."""
    server.send({"jsonrpc": "2.0", "id": 7, "method": "pi" + SURROGATE + "ng"})
    answer = server.response(7)
    assert answer["error"]["code"] == -32600
    assert SURROGATE not in answer["error"]["message"]
    assert_still_serving(server)


ENVELOPE_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "argument key beside arguments": (
        "tools/call",
        {**tool("await_secret", {"request_id": "abc"}), "x" + SURROGATE: 1},
    ),
    "tool name": ("tools/call", tool("await" + SURROGATE, {"request_id": "abc"})),
    "_meta key": (
        "tools/call",
        {**tool("await_secret", {"request_id": "abc"}), "_meta": {"k" + SURROGATE: 1}},
    ),
    "_meta value": (
        "tools/call",
        {**tool("await_secret", {"request_id": "abc"}), "_meta": {"k": "v" + SURROGATE}},
    ),
    "progressToken": (
        "tools/call",
        {**tool("await_secret", {"request_id": "abc"}), "_meta": {"progressToken": SURROGATE}},
    ),
    "clientInfo name in initialize": (
        "initialize",
        {**LEGACY_INIT, "clientInfo": {"name": "evil" + SURROGATE, "version": "1"}},
    ),
    "clientInfo name in modern _meta": (
        "tools/list",
        {
            "_meta": meta(
                **{"io.modelcontextprotocol/clientInfo": {"name": SURROGATE, "version": "1"}}
            )
        },
    ),
    "ping params key": ("ping", {"k" + SURROGATE: 1}),
}


@pytest.mark.parametrize("case", ENVELOPE_CASES, ids=list(ENVELOPE_CASES))
def test_lone_surrogate_in_params_is_invalid_params(server: Wire, case: str) -> None:
    """Outside `arguments`, text that is not valid Unicode is -32602 with the id."""
    method, params = ENVELOPE_CASES[case]
    answer = server.request(method, params, rid="bad")
    assert answer["error"]["code"] == -32602
    assert SURROGATE not in answer["error"]["message"]
    assert_still_serving(server)


def test_lone_surrogate_in_a_notification_is_ignored(server: Wire) -> None:
    """A notification gets no answer whatever it holds, and does not stop the server."""
    server.send({"jsonrpc": "2.0", "method": "notifications/x" + SURROGATE, "params": {"a": "b"}})
    server.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": SURROGATE}}
    )
    assert_still_serving(server)
    assert len(server.lines) == 2  # initialize's answer and the ping's


def test_non_utf8_line_is_a_parse_error(server: Wire) -> None:
    """Bytes that are not UTF-8 are a parse error with id null."""
    server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping\xff"}\n')
    answer = server.next()
    assert answer is not None
    assert answer["id"] is None
    assert answer["error"]["code"] == -32700
    assert_still_serving(server)


def test_nul_in_a_workspace_hint_is_no_crash(
    spawn: Callable[..., Wire], isolated_env: Path
) -> None:
    """Started in $HOME, a workspace hint holding NUL is no project: a refusal, not -32603."""
    w = spawn(OFFPROMPT, env={"OFFPROMPT_SANDBOX": "0", "BROWSER": "false"}, cwd=str(isolated_env))
    w.initialize()
    params = {**tool("collect_secret", collect()), "_meta": {"workspaceFolders": "/tmp/a\x00b"}}
    text = refusal_text(w.request("tools/call", params))
    assert "could not tell which project folder" in text
    assert_still_serving(w)
