"""What a tool declares for `tools/list`, and the handler that runs it when it is called.

On the path to the first reply (DESIGN §2), so it loads neither `typing` nor `dataclasses`; what
a handler gets and returns (`ToolContext`, `ToolResult`) is in `tool`, loaded at the first call.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the first reply does without it (see jsonrpc)
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import Any, TypeAlias

    from offprompt.mcp.jsonrpc import JSON
    from offprompt.mcp.tool import InputRequired, ToolContext, ToolResult

    Handler: TypeAlias = Callable[
        [dict[str, Any], ToolContext], Awaitable[ToolResult | InputRequired]
    ]


class Tool:
    """A tool as declared in `tools/list`, plus the handler that runs it."""

    __slots__ = (
        "annotations",
        "description",
        "handler",
        "input_schema",
        "name",
        "output_schema",
        "title",
    )

    def __init__(
        self,
        *,
        name: str,
        title: str,
        description: str,
        input_schema: JSON,
        output_schema: JSON | None,
        annotations: JSON,
        handler: Handler,
    ) -> None:
        self.name = name
        self.title = title
        self.description = description
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.annotations = annotations
        self.handler = handler

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"

    def describe(self) -> JSON:
        out: JSON = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": self.annotations,
        }
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        return out
