"""The tools the model calls: `collect_secret`, `await_secret`, `cancel_secret`, `secret_status`.

Declarations only: `schemas`, `arguments` (→ a collect request) and `results`; `service` is the
MCP door into `offprompt.collect` (imported when the first call arrives, so that an idle server
that was only asked `initialize` and `tools/list` stays small and starts fast).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from offprompt.mcp.tool import InputRequired, Tool, ToolContext, ToolResult
from offprompt.tools import schemas

if TYPE_CHECKING:
    from offprompt.tools.service import Service

COLLECT_DESCRIPTION = """\
Ask the person for secrets (API keys, tokens, passwords, database URLs) and write them into the \
project's .env (or one file) without the values passing through you. Call secret_status first \
and ask only for the keys it lists as missing. List every key the task needs in ONE call, with a \
short reason. A page opens for the person on their machine; you get \
back only key names and a four-emoji fingerprint. When the result has tell_user, say it to the \
person right away so they can match it with their page. Never ask for a secret in the chat, and \
never open, print or read the .env file, before or after: secret_status says which keys it \
holds. If the result has a url, show it to the person on its own line and call await_secret. \
Use generate for values you may invent (session secrets, signing keys)."""

AWAIT_DESCRIPTION = """\
Wait (up to a minute per call) for the person to submit a page that collect_secret opened, and \
get the same result shape: awaiting, written (with the fingerprint to tell the person), expired \
or cancelled."""

STATUS_DESCRIPTION = """\
Which of the project's keys are set, empty, missing or still a placeholder in its .env (or \
another dotenv file), without any value reaching you. Call it instead of opening, printing or \
grepping the file, and before collect_secret, so you ask only for what is missing. Names \
default to the keys of the example file beside it (.env.example, .env.sample, .env.template, \
.env.dist), else the file's own keys. A set key offprompt knows by name also gets check ok or \
mismatch, with a hint naming the credential it looks like."""

CANCEL_DESCRIPTION = """\
Close a collect_secret request the person no longer needs to answer; anything typed on its page \
is discarded and nothing is written."""


def build(get_service: Any) -> list[Tool]:
    """The four tools; `get_service()` returns the process's `Service` on first call."""

    async def collect(args: dict[str, Any], ctx: ToolContext) -> ToolResult | InputRequired:
        service: Service = get_service()
        return await service.collect(args, ctx)

    async def await_(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        service: Service = get_service()
        return await service.await_secret(args, ctx)

    async def cancel(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        service: Service = get_service()
        return await service.cancel_secret(args, ctx)

    async def status(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        service: Service = get_service()
        return await service.secret_status(args, ctx)

    output = schemas.result_output()
    return [
        Tool(
            name="collect_secret",
            title="Collect secrets from the person",
            description=COLLECT_DESCRIPTION,
            input_schema=schemas.collect_input(),
            output_schema=output,
            annotations={
                "title": "Collect secrets from the person",
                "readOnlyHint": False,
                "destructiveHint": False,
                "idempotentHint": False,
                "openWorldHint": False,
            },
            handler=collect,
        ),
        Tool(
            name="await_secret",
            title="Wait for a secret page",
            description=AWAIT_DESCRIPTION,
            input_schema=schemas.request_id_input(),
            output_schema=output,
            annotations={
                "title": "Wait for a secret page",
                "readOnlyHint": True,
                "openWorldHint": False,
            },
            handler=await_,
        ),
        Tool(
            name="cancel_secret",
            title="Cancel a secret request",
            description=CANCEL_DESCRIPTION,
            input_schema=schemas.request_id_input(),
            output_schema=output,
            annotations={
                "title": "Cancel a secret request",
                "readOnlyHint": False,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
            handler=cancel,
        ),
        Tool(
            name="secret_status",
            title="Which secrets are set",
            description=STATUS_DESCRIPTION,
            input_schema=schemas.status_input(),
            output_schema=schemas.status_output(),
            annotations={
                "title": "Which secrets are set",
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
            handler=status,
        ),
    ]
