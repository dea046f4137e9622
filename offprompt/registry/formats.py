"""The formats a secret entry may name (`format: "uuid"`), each with its rules and label.

Credentials of a format reuse these rules through `RULES`, so a JWT is checked the same way
whether it is a bare format or a provider's token.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry.kit import NO_BLANK, fill, fmt, length, scheme
from offprompt.registry.model import Format, Rule

_EXAMPLE_JWT: Final = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJleGFtcGxlIn0."
    "EXAMPLE0EXAMPLE0EXAMPLE0EXAMPLE0EXAMPLE0EXA"
)
_EXAMPLE_PEM: Final = "-----BEGIN PRIVATE KEY-----\n" + fill("", 64) + "\n-----END PRIVATE KEY-----"

RULES: Final[dict[str, tuple[Rule, ...]]] = {
    "text": (),
    "integer": (fmt("integer", "a whole number, digits only"),),
    "hex": (fmt("hex", "hex digits only (0-9, a-f), optionally after 0x"),),
    "base64": (fmt("base64", "base64 characters only: letters, digits, + / - _ and = at the end"),),
    "email": (fmt("email", "an address like name@example.com"),),
    "url": (fmt("url", "a URL with a scheme and a host, like https://example.com"),),
    "hostname": (
        fmt("hostname", "a host name like db.example.com, without https:// or a path"),
        length(1, 260, text="at most 260 characters"),
    ),
    "uuid": (fmt("uuid", "a UUID like 123e4567-e89b-12d3-a456-426614174000"),),
    "jwt": (fmt("jwt", "three base64url parts joined by dots (eyJ….eyJ….…)"),),
    "pem": (
        fmt("pem_begin", "starts with a -----BEGIN …----- line"),
        fmt("pem_end", "has the matching -----END …----- line"),
    ),
    "json": (fmt("json", 'valid JSON, such as {"key": "value"}'),),
    "postgres_url": (
        scheme("postgres://", "postgresql://"),
        fmt("url_host", "has a host after the scheme: user:password@host:5432/db"),
        NO_BLANK,
    ),
}

FORMATS: Final[tuple[Format, ...]] = (
    Format("text", "Text", RULES["text"], "", "anything at all"),
    Format("integer", "Whole number", RULES["integer"], "8080", "8080"),
    Format("hex", "Hexadecimal", RULES["hex"], "0123456789abcdef…", "0123456789abcdef"),
    Format("base64", "Base64", RULES["base64"], "SGVsbG8…", "RVhBTVBMRTBFWEFNUExFMA=="),
    Format("email", "Email address", RULES["email"], "name@example.com", "name@example.com"),
    Format("url", "URL", RULES["url"], "https://…", "https://example.com/path?q=1"),
    Format("hostname", "Host name", RULES["hostname"], "db.example.com", "db.example.com"),
    Format(
        "uuid",
        "UUID",
        RULES["uuid"],
        "123e4567-e89b-12d3-a456-426614174000",
        "00000000-0000-4000-8000-000000000000",
    ),
    Format("jwt", "JSON Web Token", RULES["jwt"], "eyJ…", _EXAMPLE_JWT),
    Format(
        "pem",
        "PEM block",
        RULES["pem"],
        "-----BEGIN PRIVATE KEY-----\n…",
        _EXAMPLE_PEM,
        multiline=True,
    ),
    Format(
        "json", "JSON", RULES["json"], '{"type": …}', '{"type": "example", "n": [1, 2.5]}', True
    ),
    Format(
        "postgres_url",
        "PostgreSQL connection URL",
        RULES["postgres_url"],
        "postgresql://user:password@host:5432/db",
        "postgresql://app:EXAMPLE0@db.example.com:5432/app?sslmode=require",
    ),
)
