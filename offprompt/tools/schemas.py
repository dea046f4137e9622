"""The tools' input and output schemas (DESIGN §3.1, §3.2, §12): `collect_secret`'s input is
the collect request's schema; the rest are built here, enums from the literals in `spec`."""

from __future__ import annotations

from typing import Any, get_args

from offprompt.collect.schema import request_schema
from offprompt.names import MAX_NAME_LENGTH, NAME_PATTERN
from offprompt.spec import CheckStatus, SendStatus, ShownStatus, SinkKind
from offprompt.status import MAX_NAMES as STATUS_MAX_NAMES
from offprompt.status import KeyCheck, KeyStatus

__all__ = [
    "NAME_PATTERN",
    "REQUEST_ID",
    "await_input",
    "collect_input",
    "request_id_input",
    "result_output",
    "status_input",
    "status_output",
]

REQUEST_ID = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9_-]+$"}
MAX_CONFIRM = 32
"""The longest `confirm` taken: 7 characters, and room for the blanks and hyphens a person types."""


def collect_input() -> dict[str, Any]:
    """`collect_secret`'s inputSchema: the collect request's own schema, which lives with the
    request (`offprompt.collect.schema`) so the terminal door checks the same one."""
    return request_schema()


def _destination_result() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["kind", "target", "status", "detail"],
        "properties": {
            "kind": {"type": "string"},
            "target": {"type": "string"},
            "status": {"type": "string", "enum": list(get_args(SendStatus))},
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


def await_input() -> dict[str, Any]:
    """`await_secret`: the request, and the confirmation code once a result asked for it."""
    schema = request_id_input()
    schema["properties"]["confirm"] = {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_CONFIRM,
        "description": "Only after a result with status confirm: the confirmation code the "
        "person read on their offprompt page and typed to you, as they typed it. Never guess it.",
    }
    return schema


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
            "status": {"type": "string", "enum": list(get_args(ShownStatus))},
            "expires_in": {"type": "integer", "minimum": 0},
            "tries_left": {
                "type": "integer",
                "minimum": 0,
                "description": "With status confirm: codes that may still be typed.",
            },
            "opened_elsewhere": {
                "type": "boolean",
                "description": "The page was opened in a second browser; tell the person.",
            },
            "names": names,
            "kept": names,
            "fingerprint": {"type": "string"},
            "file_keys": names,
            "sink": {
                "type": "object",
                "required": ["kind", "path"],
                "properties": {
                    "kind": {"type": "string", "enum": list(get_args(SinkKind))},
                    "path": {"type": "string"},
                },
            },
            "destinations": {"type": "array", "items": _destination_result()},
            "checked": {
                "type": "object",
                "description": "What each key's provider said of it before the write "
                "(rejected: written anyway by the person).",
                "additionalProperties": {
                    "type": "string",
                    "enum": list(get_args(CheckStatus)),
                },
            },
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
            "status": {"type": "string", "enum": list(get_args(KeyStatus))},
            "check": {"type": "string", "enum": list(get_args(KeyCheck))},
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
