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
                "maxItems": 4,
                "items": _destination(),
                "description": "More places the same values go, each one the project is "
                "already linked to (its git remote on GitHub, .vercel/project.json, the "
                "wrangler config's worker, fly.toml's app); the target always comes from those "
                "files. The person sees each on the page and may untick it.",
            },
            "sandbox": {
                "type": "boolean",
                "description": "true when the person's browser is on another machine; only "
                "counts where offprompt cannot tell by itself.",
            },
        },
    }


def _destination() -> dict[str, Any]:
    from offprompt.sinks.destinations import KINDS
    from offprompt.sinks.destinations.cloudflare import ENV_PATTERN as WRANGLER_ENV
    from offprompt.sinks.destinations.github import ENV_PATTERN as GITHUB_ENV
    from offprompt.sinks.destinations.vercel import ENVIRONMENTS

    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["kind"],
        "properties": {
            "kind": {"type": "string", "enum": list(KINDS)},
            "environment": {
                "type": "string",
                "pattern": GITHUB_ENV,
                "description": "github: a deployment environment of the repository.",
            },
            "environments": {
                "type": "array",
                "minItems": 1,
                "maxItems": len(ENVIRONMENTS),
                "uniqueItems": True,
                "items": {"type": "string", "enum": list(ENVIRONMENTS)},
                "description": "vercel (required): the environments to set it in.",
            },
            "env": {
                "type": "string",
                "pattern": WRANGLER_ENV,
                "description": "cloudflare: a wrangler environment the config defines.",
            },
        },
    }
