"""secret_status over a real `offprompt serve` pipe (DESIGN §3, §12): four tools in tools/list,
answers that fit their outputSchema, refusals, and no byte of a value on the wire."""

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import mcp_types.methods as methods
import pytest
from helpers import assert_no_part
from sdk import connect
from wire import OFFPROMPT, Wire, meta

REFUSED = "offprompt refused that request: "
TOOLS = ["collect_secret", "await_secret", "cancel_secret", "secret_status"]
ENV = {"OFFPROMPT_SANDBOX": "0", "BROWSER": "false"}


@pytest.fixture
def server(spawn: Callable[..., Wire], project: Path) -> Callable[[], Wire]:
    def start() -> Wire:
        w = spawn(OFFPROMPT, env=ENV, cwd=str(project))
        w.initialize()
        return w

    return start


def closed(schema: dict[str, Any], where: str = "inputSchema") -> None:
    """Every object in `schema` is closed (`additionalProperties: false`)."""
    if schema.get("type") == "object":
        assert schema.get("additionalProperties") is False, where
    for name, sub in schema.get("properties", {}).items():
        closed(sub, f"{where}.{name}")
    if isinstance(schema.get("items"), dict):
        closed(schema["items"], f"{where}[]")


def status_call(w: Wire, arguments: dict[str, Any], modern: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "secret_status", "arguments": arguments}
    if modern:
        params["_meta"] = meta()
    result: dict[str, Any] = w.request("tools/call", params)["result"]
    methods.validate_server_result("tools/call", "2026-07-28" if modern else "2025-11-25", result)
    return result


def tool_list(w: Wire) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = w.request("tools/list")["result"]["tools"]
    return tools


@pytest.mark.parametrize("modern", [False, True])
def test_tools_list_has_exactly_the_four_tools(server: Callable[[], Wire], modern: bool) -> None:
    """tools/list, legacy and modern: the four tools, each with title, annotations, a closed
    inputSchema and an outputSchema."""
    w = server()
    params = {"_meta": meta()} if modern else None
    result = w.request("tools/list", params)["result"]
    methods.validate_server_result("tools/list", "2026-07-28" if modern else "2025-11-25", result)

    assert [t["name"] for t in result["tools"]] == TOOLS
    for tool in result["tools"]:
        assert tool["title"]
        assert tool["annotations"]["title"] == tool["title"]
        closed(tool["inputSchema"])
        assert tool["outputSchema"]["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])


def test_secret_status_is_declared_read_only(server: Callable[[], Wire]) -> None:
    """secret_status changes nothing: read-only, idempotent, not destructive, closed world."""
    (tool,) = [t for t in tool_list(server()) if t["name"] == "secret_status"]

    assert tool["annotations"] == {
        "title": "Which secrets are set",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert set(tool["inputSchema"]["properties"]) == {"names", "path"}
    assert tool["inputSchema"].get("required", []) == []
    assert set(tool["outputSchema"]["required"]) == {
        "file",
        "exists",
        "example",
        "keys",
        "missing",
        "note",
    }


def test_the_model_is_told_to_call_secret_status_first(server: Callable[[], Wire]) -> None:
    """The instructions and collect_secret's description send the model to secret_status
    before collecting and instead of reading the file."""
    w = server()
    init = w.request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x"}},
        rid=5,
    )["result"]
    (collect,) = [t for t in tool_list(w) if t["name"] == "collect_secret"]

    assert "Call secret_status first" in init["instructions"]
    assert "instead of reading the .env file" in init["instructions"]
    assert len(init["instructions"]) < 800
    assert "Call secret_status first" in collect["description"]


def test_the_model_is_told_not_to_call_again_while_a_call_is_open(
    server: Callable[[], Wire],
) -> None:
    """Both revisions' instructions and collect_secret's description say: a call moved to
    the background is still open, do not call again for the same keys, tell the person the page
    is open (Claude Code hands a call running past 120 s back to the model as "moved to the
    background")."""
    w = server()
    init = w.request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x"}},
        rid=5,
    )["result"]
    discover = w.request("server/discover", {"_meta": meta()})["result"]
    (collect,) = [t for t in tool_list(w) if t["name"] == "collect_secret"]

    assert discover["instructions"] == init["instructions"]
    words = init["instructions"]
    assert "While a collect_secret call is open (even one moved to the background)" in words
    assert "do not call it again for the same keys" in words
    assert "tell the person the page is open and wait for its result" in words
    assert "do not call collect_secret again for the same keys" in collect["description"]
    assert "moved to the background" in collect["description"]


@pytest.mark.parametrize("modern", [False, True])
def test_secret_status_answers_without_any_value(
    server: Callable[[], Wire], project: Path, canary: str, modern: bool
) -> None:
    """A real answer over the pipe fits the declared outputSchema, carries the same JSON as its
    text block, and no byte of any value crosses the wire or reaches stderr."""
    (project / ".env.example").write_text(
        f"STRIPE_SECRET_KEY=\nAPI_TOKEN=your-token-here\nDATABASE_HOST={canary}\nMISSING_ONE=\n"
    )
    (project / ".env").write_text(
        f"STRIPE_SECRET_KEY=pk_test_{canary}\nAPI_TOKEN=CHANGEME\nDATABASE_HOST={canary}\n"
        f"EXTRA={canary}\n"
    )
    w = server()
    (tool,) = [t for t in tool_list(w) if t["name"] == "secret_status"]

    result = status_call(w, {}, modern=modern)

    out = result["structuredContent"]
    jsonschema.validate(out, tool["outputSchema"])
    assert [json.loads(b["text"]) for b in result["content"]] == [out]
    assert [(k["name"], k["status"], k.get("check")) for k in out["keys"]] == [
        ("STRIPE_SECRET_KEY", "set", "mismatch"),
        ("API_TOKEN", "placeholder", None),
        # Equal to the example's value, but the example is not committed: set (DESIGN §12).
        ("DATABASE_HOST", "set", None),
        ("MISSING_ONE", "missing", None),
    ]
    assert out["keys"][0]["hint"].startswith("looks like the Stripe publishable key")
    assert out["missing"] == ["API_TOKEN", "MISSING_ONE"]
    assert (out["file"], out["exists"], out["example"]) == (".env", True, ".env.example")
    w.close()
    wire_text = b"".join(w.lines).decode()
    assert_no_part(canary, wire_text, w.wait_stderr())


def test_names_and_path_are_honoured(
    server: Callable[[], Wire], project: Path, canary: str
) -> None:
    """names and a path in a subfolder: exactly those names, the file shown relative."""
    (project / "cfg").mkdir()
    (project / "cfg" / "app.env").write_text(f"B_KEY={canary}\n")

    out = status_call(server(), {"names": ["A_KEY", "B_KEY"], "path": "cfg/app.env"})[
        "structuredContent"
    ]

    assert out["file"] == "cfg/app.env"
    assert out["keys"] == [
        {"name": "A_KEY", "status": "missing"},
        {"name": "B_KEY", "status": "set"},
    ]
    assert_no_part(canary, json.dumps(out))


def test_a_missing_file_is_an_answer(server: Callable[[], Wire]) -> None:
    """No .env: exists false, every name missing; not an error."""
    result = status_call(server(), {"names": ["API_KEY"]})

    assert "isError" not in result
    assert result["structuredContent"]["exists"] is False
    assert result["structuredContent"]["missing"] == ["API_KEY"]


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_an_unreadable_file_is_a_refusal(
    server: Callable[[], Wire], project: Path, kind: str
) -> None:
    """A folder or a FIFO at the path: an isError refusal with one text block, no crash."""
    if kind == "folder":
        (project / ".env").mkdir()
    else:
        os.mkfifo(project / ".env")
    w = server()

    result = status_call(w, {})

    assert result["isError"] is True
    assert "structuredContent" not in result
    (block,) = result["content"]
    assert block["text"].startswith(REFUSED)
    assert "cannot tell which keys" in block["text"]
    assert w.request("ping")["result"] == {}


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"names": ["lower"]}, "names[0] must match"),
        ({"names": []}, "names must have at least 1"),
        ({"names": ["A_KEY", "A_KEY"]}, "named twice"),
        ({"path": "../outside.env"}, "outside the project"),
        ({"path": ".env", "value": "x"}, "value is not an allowed field"),
    ],
)
def test_bad_arguments_are_refusals(
    server: Callable[[], Wire], arguments: dict[str, Any], says: str
) -> None:
    """Arguments outside the contract are refusals naming the problem."""
    result = status_call(server(), arguments)

    assert result["isError"] is True
    assert result["content"][0]["text"].startswith(REFUSED)
    assert says in result["content"][0]["text"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_official_sdk_client_reads_the_answer(
    project: Path, canary: str, mode: str
) -> None:
    """The SDK client (which checks structured content against the outputSchema) gets the
    answer; nothing of the value reaches it or stderr."""
    (project / ".env").write_text(f"STRIPE_SECRET_KEY=sk_test_{canary}\nEMPTY_ONE=\n")
    async with connect(mode, command=OFFPROMPT, env=ENV, cwd=str(project)) as (client, seen):
        tools = await client.list_tools()
        result = await client.call_tool("secret_status", {})

    assert [t.name for t in tools.tools] == TOOLS
    assert result.is_error is False
    assert result.structured_content == {
        "file": ".env",
        "exists": True,
        "example": None,
        "keys": [
            {"name": "STRIPE_SECRET_KEY", "status": "set", "check": "ok"},
            {"name": "EMPTY_ONE", "status": "empty"},
        ],
        "missing": ["EMPTY_ONE"],
        "note": result.structured_content["note"],  # type: ignore[index]
    }
    assert_no_part(canary, result.model_dump_json(), seen.stderr)
