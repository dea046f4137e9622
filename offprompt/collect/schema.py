"""The collect request's JSON Schema (DESIGN §3.1): what both doors check arguments against
before `request.validate`; the MCP tool `collect_secret` declares it as its inputSchema."""

from __future__ import annotations

from typing import Any, get_args

from offprompt.collect.request import MAX_NAMES
from offprompt.names import MAX_NAME_LENGTH, NAME_PATTERN
from offprompt.registry import format_ids, provider_refs
from offprompt.spec import Encoding, SinkKind

__all__ = ["request_schema"]


def request_schema() -> dict[str, Any]:
    """The JSON Schema of a collect request (DESIGN §3.1), closed objects throughout; enums from
    the registry, the destinations and the literals in `spec`."""
    from offprompt.sinks import destinations

    secret = {
        "type": "object",
        "additionalProperties": False,
        "required": ["name"],
        "properties": {
            "name": {
                "type": "string",
                "pattern": NAME_PATTERN,
                "maxLength": MAX_NAME_LENGTH,
                "description": "The environment variable name, e.g. STRIPE_SECRET_KEY.",
            },
            "generate": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "bytes": {"type": "integer", "minimum": 16, "maximum": 64, "default": 32},
                    "encoding": {
                        "type": "string",
                        "enum": list(get_args(Encoding)),
                        "default": "base64url",
                    },
                },
                "description": "Make a random value instead of asking (session secrets, "
                "signing keys). A key the file already holds is kept.",
            },
            "provider": {
                "type": "string",
                "enum": list(provider_refs()),
                "description": "Where the key comes from, e.g. stripe or stripe/webhook_secret; "
                "the page links to where it is made and checks its shape.",
            },
            "format": {
                "type": "string",
                "enum": list(format_ids()),
                "description": "The value's format when no provider fits.",
            },
            "secret": {
                "type": "boolean",
                "description": "false shows the value in clear on the page (e.g. a public id).",
            },
            "caption": {
                "type": "string",
                "minLength": 1,
                "maxLength": 90,
                "description": "A short hint shown under the field.",
            },
        },
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["secrets", "reason"],
        "properties": {
            "secrets": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_NAMES,
                "items": secret,
                "description": "Every key you need, all in one call.",
            },
            "reason": {
                "type": "string",
                "minLength": 1,
                "maxLength": 2000,
                "description": "Why these values are needed (Markdown), shown to the person.",
            },
            "sink": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "kind": {
                        "type": "string",
                        "enum": list(get_args(SinkKind)),
                        "default": "dotenv",
                    },
                    "path": {"type": "string", "minLength": 1, "maxLength": 1024},
                },
                "description": 'Where to write. Default {"kind": "dotenv", "path": ".env"}; '
                '{"kind": "file", "path": ...} writes exactly one value as a whole file; '
                '{"kind": "none"} writes no file (only with also).',
            },
            "also": {
                "type": "array",
                "minItems": 1,
                "maxItems": destinations.MAX_ALSO,
                "items": destinations.entry_schema(),
                "description": "More places the same values go, each one the project is "
                f"already linked to ({destinations.linked_by()}); the target always comes from "
                "those files. The person sees each on the page and may untick it.",
            },
            "sandbox": {
                "type": "boolean",
                "description": "true when the person's browser is on another machine; only "
                "counts where offprompt cannot tell by itself.",
            },
        },
    }
