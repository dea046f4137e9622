"""The official MCP Python SDK client (mcp==2.3.0) as a real third-party peer over stdio."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from wire import FIXTURE, ROOT


@dataclass
class Seen:
    """What the client observed: elicitations, notifications and the server's stderr."""

    elicitations: list[Any] = field(default_factory=list)
    notifications: list[Any] = field(default_factory=list)
    stderr: str = ""


def answering(
    action: str | None, seen: Seen, on_url: Callable[[str], Awaitable[None]] | None = None
) -> Any:
    """An elicitation callback that records and answers `action` (None: no callback at all)."""
    if action is None:
        return None

    async def callback(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.elicitations.append(params)
        if on_url is not None and action == "accept":
            await on_url(params.url)  # type: ignore[union-attr]
        return types.ElicitResult(action=action)  # type: ignore[arg-type]

    return callback


@asynccontextmanager
async def connect(
    mode: str,
    *,
    action: str | None = None,
    command: list[str] | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    on_url: Callable[[str], Awaitable[None]] | None = None,
    roots: list[str] | None = None,
    client_name: str = "sdk-tests",
    callback: Any = None,
) -> AsyncIterator[tuple[Client, Seen]]:
    """`callback`: an elicitation callback of the test's own, in place of `action`'s."""
    cmd = command or FIXTURE
    seen = Seen()
    full_env = {
        k: v for k, v in os.environ.items() if k.startswith(("OFFPROMPT_", "XDG_", "PYTHON"))
    }
    full_env.update(env or {})
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=full_env, cwd=cwd or str(ROOT))

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            return
        seen.notifications.append(message)

    roots_cb = None
    if roots is not None:

        async def roots_cb(ctx: Any) -> types.ListRootsResult:
            return types.ListRootsResult(roots=[types.Root(uri=u) for u in roots])  # type: ignore[arg-type]

    with tempfile.TemporaryFile(mode="w+") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog),
            mode=mode,  # type: ignore[arg-type]
            elicitation_callback=callback or answering(action, seen, on_url),
            list_roots_callback=roots_cb,
            message_handler=on_message,
            client_info=types.Implementation(name=client_name, version="0"),
            cache=None,
            read_timeout_seconds=60,
        ) as client:
            try:
                yield client, seen
            finally:
                errlog.seek(0)
                seen.stderr = errlog.read()
        errlog.seek(0)
        seen.stderr = errlog.read()


PY = sys.executable
