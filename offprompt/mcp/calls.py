"""Running one `tools/call`: its context, the schema check, the progress heartbeat, and the
2026-07-28 requestState opened on the way in and signed on the way out.

Loaded when the first call arrives, never on the path to the first reply (DESIGN §2). The server
hands itself in as a `Caller` (what a call needs of it), so this module never imports server.py:
the arrow runs one way, server → calls.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from offprompt import schema
from offprompt.errors import RpcError
from offprompt.mcp import jsonrpc as rpc
from offprompt.mcp.tool import InputRequired, ToolContext, ToolResult

if TYPE_CHECKING:
    from offprompt.mcp.declaration import Tool
    from offprompt.mcp.jsonrpc import JSON
    from offprompt.mcp.revisions import Era
    from offprompt.mcp.state import StateSigner


class Caller(Protocol):
    """What a call needs of the server that runs it (server.Server is one)."""

    progress_interval: float

    @property
    def signer(self) -> StateSigner: ...

    @property
    def legacy_ready(self) -> bool: ...

    async def request_client(self, method: str, params: JSON, timeout: float) -> Any: ...

    def notify(self, method: str, params: JSON) -> None: ...


def context(
    server: Caller, name: str, era: Era, meta: JSON, token: str | int | None
) -> ToolContext:
    """The tool's view of its call: who asked, in which revision, and how to talk back."""
    return ToolContext(
        tool=name,
        revision=era.version,
        client_info=era.client_info,
        client_capabilities=era.capabilities,
        meta=meta,
        peer=_Peer(server),
        progress_token=token,
    )


def open_state(signer: StateSigner, params: JSON, ctx: ToolContext, arguments: JSON) -> None:
    """A retry's `inputResponses` and `requestState` into `ctx`; -32602 when either is wrong."""
    has_state = "requestState" in params
    if "inputResponses" in params:
        responses = params["inputResponses"]
        if not isinstance(responses, dict):
            raise RpcError(rpc.INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        if not has_state:
            raise RpcError(
                rpc.INVALID_PARAMS, "Invalid params: inputResponses without requestState"
            )
        ctx.input_responses = responses
    if has_state:
        ctx.state = signer.verify(
            params["requestState"], tool=ctx.tool, arguments=arguments, client=ctx.client_name
        )
        if ctx.input_responses is None:
            ctx.input_responses = {}


async def run(server: Caller, tool: Tool, arguments: JSON, ctx: ToolContext) -> JSON:
    """The call's result as JSON: a refusal for arguments outside the schema, else the tool's."""
    problems = list(schema.errors(tool.input_schema, arguments))
    if problems:
        return ToolResult.refused("; ".join(problems[:5]) + ".").to_json()
    heartbeat = None
    if ctx.progress_token is not None:
        heartbeat = asyncio.ensure_future(_heartbeat(ctx, server.progress_interval))
    try:
        result = await tool.handler(arguments, ctx)
    finally:
        if heartbeat is not None:
            heartbeat.cancel()
    if isinstance(result, InputRequired):
        if not ctx.modern:
            raise TypeError(f"{tool.name} asked for input outside 2026-07-28")
        state = server.signer.sign(
            tool=tool.name,
            arguments=arguments,
            client=ctx.client_name,
            data=result.data,
            ttl=result.ttl,
        )
        return {
            "resultType": "input_required",
            "inputRequests": result.input_requests,
            "requestState": state,
        }
    return result.to_json()


async def _heartbeat(ctx: ToolContext, interval: float) -> None:
    """Keep a waiting client patient: progress at least every `interval` seconds."""
    while True:
        await asyncio.sleep(interval)
        ctx.progress()


class _Peer:
    """The `Peer` a tool context talks through."""

    def __init__(self, server: Caller) -> None:
        self._server = server

    @property
    def can_send_requests(self) -> bool:
        return self._server.legacy_ready

    async def send_request(self, method: str, params: JSON, timeout: float) -> Any:
        return await self._server.request_client(method, params, timeout)

    def notify(self, method: str, params: JSON) -> None:
        self._server.notify(method, params)
