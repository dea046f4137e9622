"""Every refusal, through the real server: an isError result with the prefix, and no effect."""

from pathlib import Path
from typing import Any

import pytest
from wire import Wire

from .flow import Flow, refusal_text

REASON = "The billing module needs it."


def ask(*entries: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"secrets": list(entries), "reason": REASON, **extra}


KEY = {"name": "API_KEY"}
OUTSIDE = "/tmp/offprompt-flows-outside/.env"

COLLECT_REFUSALS: dict[str, tuple[dict[str, Any], str]] = {
    "duplicate names": (ask(KEY, KEY), "API_KEY is named twice"),
    "generate and provider": (
        ask({"name": "API_KEY", "generate": {}, "provider": "openai"}),
        "sets generate and provider",
    ),
    "provider and format": (
        ask({"name": "API_KEY", "provider": "openai", "format": "hex"}),
        "sets provider and format",
    ),
    "file sink with two secrets": (
        ask(KEY, {"name": "OTHER_KEY"}, sink={"kind": "file", "path": "key.pem"}),
        "a file sink holds exactly one value",
    ),
    "file sink without path": (ask(KEY, sink={"kind": "file"}), "a file sink needs a path"),
    "path escaping the project": (
        ask(KEY, sink={"kind": "dotenv", "path": "../x"}),
        "leads outside the project",
    ),
    "absolute path outside": (
        ask(KEY, sink={"kind": "dotenv", "path": OUTSIDE}),
        "leads outside the project",
    ),
    "symlink leading outside": (
        ask(KEY, sink={"kind": "dotenv", "path": "link/.env"}),
        "leads outside the project",
    ),
    "path inside .git": (
        ask(KEY, sink={"kind": "dotenv", "path": ".git/config"}),
        "inside .git",
    ),
    "path to a folder": (ask(KEY, sink={"kind": "dotenv", "path": "sub"}), "is a folder"),
    "bad name pattern": (ask({"name": "api-key"}), "secrets[0].name must match"),
    "name too long": (ask({"name": "K" * 129}), "secrets[0].name must be at most 128"),
    "13 secrets": (
        ask(*({"name": f"KEY_{i}"} for i in range(13))),
        "secrets must have at most 12 entries",
    ),
    "no secrets": (ask(), "secrets must have at least 1 entries"),
    "missing reason": ({"secrets": [KEY]}, "reason is required"),
    "empty reason": (ask(KEY) | {"reason": ""}, "reason must be at least 1 characters"),
    "reason too long": (ask(KEY) | {"reason": "r" * 2001}, "reason must be at most 2000"),
    "extra field": (ask(KEY, colour="blue"), "colour is not an allowed field"),
    "extra field in a secret": (
        ask({"name": "API_KEY", "value": "hunter2"}),
        "secrets[0].value is not an allowed field",
    ),
    "generate bytes out of range": (
        ask({"name": "API_KEY", "generate": {"bytes": 8}}),
        "secrets[0].generate.bytes must be at least 16",
    ),
    "unknown provider": (
        ask({"name": "API_KEY", "provider": "nope"}),
        "secrets[0].provider must be one of",
    ),
    "caption too long": (
        ask({"name": "API_KEY", "caption": "c" * 91}),
        "secrets[0].caption must be at most 90",
    ),
    "unknown sink kind": (ask(KEY, sink={"kind": "vault"}), "sink.kind must be one of"),
}


@pytest.fixture
def project_with_folder(flow: Flow) -> Flow:
    """A project with a folder, a .git folder, and a symlink to a folder outside it."""
    (flow.project / "sub").mkdir()
    (flow.project / ".git").mkdir()
    outside = flow.project.parent / "outside"
    outside.mkdir()
    (flow.project / "link").symlink_to(outside)
    return flow


def files_in(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def place(value: Any, outside: Path) -> Any:
    """`value` with the OUTSIDE placeholder replaced by a real path outside the project."""
    if isinstance(value, dict):
        return {k: place(v, outside) for k, v in value.items()}
    if isinstance(value, list):
        return [place(v, outside) for v in value]
    return str(outside / ".env") if value == OUTSIDE else value


@pytest.mark.parametrize("case", sorted(COLLECT_REFUSALS))
async def test_collect_refusal(project_with_folder: Flow, case: str) -> None:
    """Each bad collect_secret is refused with its reason; no page, no browser, nothing written."""
    flow = project_with_folder
    outside = flow.project.parent / "outside"
    arguments, reason = COLLECT_REFUSALS[case]
    arguments = place(arguments, outside)
    before = files_in(flow.project), files_in(outside)
    env = flow.person("record")
    async with flow.connect("legacy", action="accept", env=env) as (client, seen):
        result = await client.call_tool("collect_secret", arguments)
    assert reason in refusal_text(result)
    assert "hunter2" not in refusal_text(result)
    assert (files_in(flow.project), files_in(outside)) == before
    assert seen.elicitations == []
    assert not flow.browser_opened()
    assert flow.journal() == []
    ((_, answer),) = flow.tool_calls()
    assert answer["result"]["isError"] is True
    assert "structuredContent" not in answer["result"]


@pytest.mark.parametrize("case", ["duplicate names", "path escaping the project", "13 secrets"])
async def test_modern_collect_refusal(flow: Flow, case: str) -> None:
    """A 2026-07-28 call is refused the same way, with no input_required first."""
    (flow.project / "sub").mkdir()
    arguments, reason = COLLECT_REFUSALS[case]
    async with flow.connect("2026-07-28", action="accept") as (client, seen):
        result = await client.call_tool("collect_secret", arguments)
    assert reason in refusal_text(result)
    assert seen.elicitations == []
    assert not (flow.project / ".env").exists()
    ((_, answer),) = flow.tool_calls()
    assert answer["result"]["resultType"] == "complete"


@pytest.mark.parametrize("tool", ["await_secret", "cancel_secret"])
async def test_unknown_request_id_is_refused(flow: Flow, tool: str) -> None:
    """await_secret / cancel_secret with an id this server never issued is refused."""
    async with flow.connect("legacy") as (client, _):
        result = await client.call_tool(tool, {"request_id": "nosuchrequest"})
    assert "no request nosuchrequest is known" in refusal_text(result)


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ({}, "request_id is required"),
        ({"request_id": "../etc"}, "request_id must match"),
        ({"request_id": "a" * 65}, "request_id must be at most 64"),
        ({"request_id": "abc", "wait": 5}, "wait is not an allowed field"),
    ],
)
async def test_bad_request_id_arguments_are_refused(
    flow: Flow, arguments: dict[str, Any], reason: str
) -> None:
    """await_secret with arguments outside its schema is refused, naming the rule."""
    async with flow.connect("legacy") as (client, _):
        result = await client.call_tool("await_secret", arguments)
    assert reason in refusal_text(result)


def test_unknown_tool_and_non_object_arguments_are_invalid_params(flow: Flow) -> None:
    """On the real server, an unknown tool or non-object arguments is JSON-RPC -32602."""
    wire = Wire(flow.command(), env=flow.env, cwd=str(flow.project))
    try:
        wire.initialize()
        unknown = wire.request("tools/call", {"name": "read_secret", "arguments": {}})
        listed = wire.request("tools/call", {"name": "collect_secret", "arguments": [1]})
        wire.close()
    finally:
        wire.kill()
    assert unknown["error"]["code"] == -32602
    assert listed["error"]["code"] == -32602
    assert not (flow.project / ".env").exists()
