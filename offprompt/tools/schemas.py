"""The tools' input and output schemas (DESIGN §3.1, §3.2, §12), enums drawn from the registry."""

from __future__ import annotations

from typing import Any

from offprompt.collect.request import MAX_NAME_LENGTH, MAX_NAMES, NAME_PATTERN
from offprompt.registry import format_ids, provider_refs
from offprompt.status import MAX_NAMES as STATUS_MAX_NAMES

__all__ = [
    "NAME_PATTERN",
    "REQUEST_ID",
    "collect_input",
    "request_id_input",
    "result_output",
    "status_input",
    "status_output",
]

REQUEST_ID = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9_-]+$"}


def collect_input() -> dict[str, Any]:
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
                        "enum": ["base64url", "base64", "hex"],
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
                        "enum": ["dotenv", "file", "none"],
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


def _destination_result() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["kind", "target", "status", "detail"],
        "properties": {
            "kind": {"type": "string"},
            "target": {"type": "string"},
            "status": {"type": "string", "enum": ["sent", "failed", "skipped"]},
            "detail": {"type": "string"},
        },
    }


def request_id_input() -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["request_id"],
        "properties": {"request_id": dict(REQUEST_ID)},
    }


def result_output() -> dict[str, Any]:
    names = {"type": "array", "items": {"type": "string"}}
    return {
        "type": "object",
        "required": ["request_id", "status", "names", "sink", "note"],
        "properties": {
            "tell_user": {"type": "string"},
            "note": {"type": "string"},
            "url": {"type": "string"},
            "request_id": {"type": "string"},
            "status": {"type": "string", "enum": ["awaiting", "written", "expired", "cancelled"]},
            "expires_in": {"type": "integer", "minimum": 0},
            "names": names,
            "kept": names,
            "fingerprint": {"type": "string"},
            "file_keys": names,
            "sink": {
                "type": "object",
                "required": ["kind", "path"],
                "properties": {
                    "kind": {"type": "string", "enum": ["dotenv", "file", "none"]},
                    "path": {"type": "string"},
                },
            },
            "destinations": {"type": "array", "items": _destination_result()},
        },
    }


def status_input() -> dict[str, Any]:
    """`secret_status` (DESIGN §12): optional names (1-64, unique) and an optional dotenv path."""
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "names": {
                "type": "array",
                "minItems": 1,
                "maxItems": STATUS_MAX_NAMES,
                "uniqueItems": True,
                "items": {"type": "string", "pattern": NAME_PATTERN, "maxLength": MAX_NAME_LENGTH},
                "description": "The keys to look at. Default: every key of the example file "
                "(.env.example, .env.sample, .env.template or .env.dist beside the file), else "
                "every key the file sets.",
            },
            "path": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1024,
                "default": ".env",
                "description": "The dotenv file, relative to the project. Default .env.",
            },
        },
    }


def status_output() -> dict[str, Any]:
    key = {
        "type": "object",
        "required": ["name", "status"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string"},
            "status": {"type": "string", "enum": ["missing", "empty", "placeholder", "set"]},
            "check": {"type": "string", "enum": ["ok", "mismatch"]},
            "hint": {"type": "string"},
        },
    }
    return {
        "type": "object",
        "required": ["file", "exists", "example", "keys", "missing", "note"],
        "additionalProperties": False,
        "properties": {
            "file": {"type": "string"},
            "exists": {"type": "boolean"},
            "example": {"type": ["string", "null"]},
            "keys": {"type": "array", "items": key},
            "missing": {"type": "array", "items": {"type": "string"}},
            "note": {"type": "string"},
        },
    }
