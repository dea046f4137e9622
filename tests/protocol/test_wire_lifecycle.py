"""Raw JSON-line tests of framing and lifecycle in both revisions."""

import signal
import time
from collections.abc import Callable
from pathlib import Path

import mcp_types.methods as methods
import pytest
from wire import MODERN_META, OFFPROMPT, Wire, meta

LEGACY_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


@pytest.mark.parametrize(
    ("asked", "answered"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ],
)
def test_initialize_negotiates_version(wire: Wire, asked: str, answered: str) -> None:
    """initialize echoes a handshake version we speak and counter-offers 2025-11-25 otherwise."""
    r = wire.request("initialize", dict(LEGACY_INIT, protocolVersion=asked), rid=0)
    assert r["result"]["protocolVersion"] == answered
    assert r["result"]["serverInfo"]["name"] == "fixture"
    assert r["result"]["capabilities"] == {"tools": {}}
    methods.validate_server_result("initialize", "2025-11-25", r["result"])


def test_id_type_is_echoed_exactly(wire: Wire) -> None:
    """A request id comes back with the type it arrived with (0 stays an integer)."""
    assert wire.request("initialize", LEGACY_INIT, rid=0)["id"] == 0
    assert wire.request("ping", rid="0")["id"] == "0"


def test_request_before_initialize_without_meta_is_invalid_params(wire: Wire) -> None:
    """tools/list with neither initialize nor modern _meta gets -32602 naming the missing keys."""
    r = wire.request("tools/list", rid=1)
    assert r["error"]["code"] == -32602
    assert "io.modelcontextprotocol/protocolVersion" in r["error"]["message"]
    assert "io.modelcontextprotocol/clientCapabilities" in r["error"]["message"]


def test_unknown_modern_version_is_32022(wire: Wire) -> None:
    """An unknown protocolVersion in _meta gets -32022 with supported and requested."""
    params = {"_meta": meta(**{"io.modelcontextprotocol/protocolVersion": "1900-01-01"})}
    r = wire.request("tools/list", params)
    assert r["error"]["code"] == -32022
    assert r["error"]["data"] == {
        "supported": ["2026-07-28", "2025-11-25"],
        "requested": "1900-01-01",
    }


def test_missing_client_capabilities_is_invalid_params(wire: Wire) -> None:
    """A modern request without clientCapabilities is malformed: -32602 naming the key."""
    m = dict(MODERN_META)
    del m["io.modelcontextprotocol/clientCapabilities"]
    r = wire.request("server/discover", {"_meta": m})
    assert r["error"]["code"] == -32602
    assert "clientCapabilities" in r["error"]["message"]


def test_client_info_is_optional_in_modern_meta(wire: Wire) -> None:
    """clientInfo may be absent from a modern request."""
    m = dict(MODERN_META)
    del m["io.modelcontextprotocol/clientInfo"]
    r = wire.request("tools/list", {"_meta": m})
    methods.validate_server_result("tools/list", "2026-07-28", r["result"])


def test_server_discover_result_is_valid(wire: Wire) -> None:
    """server/discover answers a valid DiscoverResult with cache hints and instructions."""
    r = wire.request("server/discover", {"_meta": meta()})["result"]
    methods.validate_server_result("server/discover", "2026-07-28", r)
    assert r["resultType"] == "complete"
    assert r["supportedVersions"] == ["2026-07-28", "2025-11-25"]
    assert isinstance(r["ttlMs"], int)
    assert r["cacheScope"] in ("public", "private")
    assert r["instructions"] == "fixture server"
    assert r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "fixture"


def test_modern_tools_list_carries_cache_hints(wire: Wire) -> None:
    """A modern tools/list has resultType, ttlMs and cacheScope and is the same twice."""
    a = wire.request("tools/list", {"_meta": meta()})["result"]
    b = wire.request("tools/list", {"_meta": meta()})["result"]
    methods.validate_server_result("tools/list", "2026-07-28", a)
    assert a == b
    assert [t["name"] for t in a["tools"]][:2] == ["echo", "wait"]


def test_legacy_tools_list_has_no_result_type(wire: Wire) -> None:
    """A legacy tools/list is the 2025-11-25 shape, without resultType."""
    wire.initialize()
    r = wire.request("tools/list")["result"]
    methods.validate_server_result("tools/list", "2025-11-25", r)
    assert "resultType" not in r


def test_initialize_after_modern_discover_succeeds(wire: Wire) -> None:
    """Claude Code may send initialize after a successful server/discover on the same process."""
    assert "result" in wire.request("server/discover", {"_meta": meta()})
    r = wire.request("initialize", LEGACY_INIT, rid=0)
    assert r["result"]["protocolVersion"] == "2025-11-25"
    assert "result" in wire.request("tools/list", {"_meta": meta()})


def test_modern_and_legacy_interleave_on_one_process(wire: Wire) -> None:
    """After initialize, modern requests are still served as modern, legacy ones as legacy."""
    wire.initialize()
    modern = wire.request(
        "tools/call", {"name": "echo", "arguments": {"text": "a"}, "_meta": meta()}
    )
    legacy = wire.request("tools/call", {"name": "echo", "arguments": {"text": "b"}})
    assert modern["result"]["resultType"] == "complete"
    assert modern["result"]["structuredContent"]["revision"] == "2026-07-28"
    assert "resultType" not in legacy["result"]
    assert legacy["result"]["structuredContent"]["revision"] == "2025-11-25"


def test_ping_in_each_revision(wire: Wire) -> None:
    """Legacy ping answers {}; ping under 2026-07-28 is a removed method: -32601."""
    assert wire.request("ping")["result"] == {}
    assert wire.request("ping", {"_meta": meta()})["error"]["code"] == -32601


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"not json\n", -32700),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"\n', -32700),
        (b"\xff\xfe\n", -32700),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n', -32600),
        (b"42\n", -32600),
        (b'{"id":1,"method":"ping"}\n', -32600),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n', -32600),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n', -32600),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":5}\n', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}\n', -32602),
    ],
)
def test_malformed_lines_get_errors_and_server_lives(wire: Wire, raw: bytes, code: int) -> None:
    """Every malformed line gets a JSON-RPC error; the server keeps serving after it."""
    wire.send_raw(raw)
    msg = wire.next()
    assert msg is not None
    assert msg["error"]["code"] == code
    assert wire.request("ping")["result"] == {}


def test_blank_lines_and_stray_notifications_are_ignored(wire: Wire) -> None:
    """Blank lines, unknown notifications and uncorrelated responses get no answer."""
    wire.send_raw(b"\n   \n")
    wire.send({"jsonrpc": "2.0", "method": "notifications/whatever"})
    wire.send({"jsonrpc": "2.0", "id": "nobody-asked", "result": {}})
    r = wire.request("ping", rid="after")
    assert r == {"jsonrpc": "2.0", "id": "after", "result": {}}
    assert len(wire.lines) == 1


def test_oversize_line_is_a_parse_error(wire: Wire) -> None:
    """A line over the 4 MiB cap is refused as a parse error and the server goes on."""
    wire.send_raw(
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * (5 << 20) + b'"}}\n'
    )
    assert wire.next()["error"]["code"] == -32700  # type: ignore[index]
    assert wire.request("ping")["result"] == {}


def test_unknown_method_is_32601(wire: Wire) -> None:
    """An unknown method after initialize gets -32601; so does one under 2026-07-28."""
    wire.initialize()
    assert wire.request("resources/list")["error"]["code"] == -32601
    assert (
        wire.request("logging/setLevel", {"_meta": meta(), "level": "info"})["error"]["code"]
        == -32601
    )


def test_server_never_sends_requests_before_initialized(wire: Wire) -> None:
    """Before notifications/initialized no URL elicitation is sent; the tool hears 'unsupported'."""
    wire.request("initialize", dict(LEGACY_INIT, capabilities={"elicitation": {"url": {}}}), rid=0)
    r = wire.request("tools/call", {"name": "elicit", "arguments": {}})
    assert r["result"]["structuredContent"]["outcome"] == "unsupported"
    assert all("method" not in m or m["method"] != "elicitation/create" for m in wire.backlog)


def test_eof_exits_promptly_and_quietly(wire: Wire) -> None:
    """Closing stdin ends the server at once with status 0 and no traceback."""
    wire.initialize()
    start = time.monotonic()
    assert wire.close() == 0
    assert time.monotonic() - start < 2
    assert "Traceback" not in wire.wait_stderr()


def test_eof_during_blocking_call_exits_promptly(wire: Wire) -> None:
    """A tool call still waiting when stdin closes does not hold the process."""
    wire.initialize()
    wire.send(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "wait", "arguments": {"forever": True}},
        }
    )
    time.sleep(0.3)
    start = time.monotonic()
    assert wire.close() == 0
    assert time.monotonic() - start < 2
    assert "Traceback" not in wire.wait_stderr()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("busy", [False, True])
def test_signals_exit_quietly_without_closing_stdin(
    wire: Wire, sig: signal.Signals, busy: bool
) -> None:
    """SIGINT (Claude Code) and SIGTERM (Codex) end the server quietly, idle or mid-call."""
    wire.initialize()
    if busy:
        wire.send(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "wait", "arguments": {"forever": True}},
            }
        )
        time.sleep(0.3)
    wire.proc.send_signal(sig)
    assert wire.proc.wait(3) == 0
    err = wire.wait_stderr()
    assert "Traceback" not in err
    assert "KeyboardInterrupt" not in err


def test_offprompt_serve_answers_both_revisions(spawn) -> None:  # type: ignore[no-untyped-def]
    """The real `offprompt serve` answers initialize and server/discover."""
    w = spawn(OFFPROMPT)
    init = w.request("initialize", LEGACY_INIT, rid=0)["result"]
    assert init["serverInfo"]["name"] == "offprompt"
    assert "collect_secret" in init["instructions"]
    disc = w.request("server/discover", {"_meta": meta()})["result"]
    methods.validate_server_result("server/discover", "2026-07-28", disc)
    assert w.close() == 0


def _awaiting_call(w: Wire) -> None:
    """Leave the real server blocked in a tool call: a collect whose link comes back (no
    browser opens), then an await_secret that waits for a page nobody submits."""
    args = {"secrets": [{"name": "API_KEY"}], "reason": "The tests need it."}
    first = w.request("tools/call", {"name": "collect_secret", "arguments": args})["result"]
    request_id = first["structuredContent"]["request_id"]
    assert first["structuredContent"]["status"] == "awaiting"
    w.send(
        {
            "jsonrpc": "2.0",
            "id": "waiting",
            "method": "tools/call",
            "params": {"name": "await_secret", "arguments": {"request_id": request_id}},
        }
    )
    time.sleep(0.3)


SERVE_ENV = {"OFFPROMPT_SANDBOX": "0", "BROWSER": "false"}


@pytest.mark.parametrize("busy", [False, True])
def test_offprompt_serve_exits_promptly_and_quietly_on_eof(
    spawn: Callable[..., Wire], project: Path, busy: bool
) -> None:
    """The real server: closing stdin ends it at once with status 0, after the first replies
    only (before asyncio is running) or mid-call (page server up)."""
    w = spawn(OFFPROMPT, env=SERVE_ENV, cwd=str(project))
    w.initialize()
    w.request("tools/list")
    if busy:
        _awaiting_call(w)
    start = time.monotonic()
    assert w.close() == 0
    assert time.monotonic() - start < 2
    err = w.wait_stderr()
    assert "Traceback" not in err
    assert all(line.startswith("offprompt: ") for line in err.splitlines()), err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("busy", [False, True])
def test_offprompt_serve_exits_quietly_on_signals_without_eof(
    spawn: Callable[..., Wire], project: Path, sig: signal.Signals, busy: bool
) -> None:
    """The real server: SIGINT (Claude Code) and SIGTERM (Codex) end it with status 0 and no
    traceback, idle after the first replies or blocked in await_secret."""
    w = spawn(OFFPROMPT, env=SERVE_ENV, cwd=str(project))
    w.initialize()
    w.request("tools/list")
    if busy:
        _awaiting_call(w)
    w.proc.send_signal(sig)
    assert w.proc.wait(3) == 0
    err = w.wait_stderr()
    assert "Traceback" not in err
    assert "KeyboardInterrupt" not in err
