"""A server on our protocol core with test-only tools that prove the seam (not the product).

Run as `python tests/protocol/fixture_server.py`; speaks MCP on stdio like `offprompt serve`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any

from offprompt.mcp.declaration import Tool
from offprompt.mcp.server import ServerInfo
from offprompt.mcp.stdio import App, run
from offprompt.mcp.tool import InputRequired, ToolContext, ToolResult
from offprompt.spec import DialogAnswer

OBJ: dict[str, Any] = {"type": "object", "additionalProperties": False}
ELICIT_WAIT = float(os.environ.get("FIXTURE_ELICIT_WAIT", "2"))
STATE_TTL = float(os.environ.get("FIXTURE_STATE_TTL", "600"))


async def echo(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult.of(
        {"echo": args["text"], "revision": ctx.revision, "client": ctx.client_name},
        headline="echoed",
    )


async def wait(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    for i in range(int(args.get("steps", 3))):
        ctx.progress(f"step {i}")
        await asyncio.sleep(float(args.get("pause", 0.05)))
    if args.get("forever"):
        await asyncio.sleep(3600)
    return ToolResult.of({"done": True})


async def elicit(args: dict[str, Any], ctx: ToolContext) -> ToolResult | InputRequired:
    round_no = (ctx.state or {}).get("round", 0) + 1
    url = "http://127.0.0.1:9/r/" + "0" * 32
    message = "offprompt is collecting TEST_KEY. Open the page to type them."
    outcome: DialogAnswer | None
    if ctx.modern and ctx.supports_url_elicitation():
        outcome = ctx.elicitation_answer("page")
        if outcome is None:  # the first round, or a retry without our key: ask (again)
            return ctx.ask_url(
                key="page", url=url, message=message, data={"round": round_no}, state_ttl=STATE_TTL
            )
    else:
        outcome = await ctx.elicit_url(
            url=url, message=message, elicitation_id="req-1", wait=ELICIT_WAIT
        )
    if outcome == "accept":
        ctx.elicitation_complete("req-1")
    return ToolResult.of({"outcome": outcome, "state": ctx.state})


async def roots(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult.of({"roots": await ctx.roots(timeout=2.0)})


async def noisy(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    print("stray print that must not reach the protocol stream")
    subprocess.run(["echo", "child output"], check=True)  # noqa: ASYNC221 - on purpose
    os.write(1, b"raw write to fd 1\n")
    return ToolResult.of({"ok": True})


async def boom(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raise RuntimeError("internal detail that must not leak")


async def refuse(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult.refused("the fixture always refuses; call echo instead.")


def tool(name: str, handler: Any, props: dict[str, Any] | None = None, **extra: Any) -> Tool:
    schema = dict(OBJ, properties=props or {}, **extra)
    return Tool(
        name=name,
        title=name.title(),
        description=f"test tool {name}",
        input_schema=schema,
        output_schema={"type": "object"},
        annotations={"readOnlyHint": True, "openWorldHint": False},
        handler=handler,
    )


TOOLS = [
    tool("echo", echo, {"text": {"type": "string", "maxLength": 50}}, required=["text"]),
    tool(
        "wait",
        wait,
        {
            "steps": {"type": "integer", "minimum": 0, "maximum": 100},
            "pause": {"type": "number"},
            "forever": {"type": "boolean"},
        },
    ),
    tool("elicit", elicit, {"tag": {"type": "string"}}),
    tool("roots", roots),
    tool("noisy", noisy),
    tool("boom", boom),
    tool("refuse", refuse),
]


def make_app() -> App:
    return App(TOOLS, ServerInfo("fixture", "0.0.1", instructions="fixture server"))


if __name__ == "__main__":
    sys.exit(run(make_app))
