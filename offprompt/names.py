"""The key-name rule of DESIGN §3.1, said once: capitals, digits and `_`, starting with a
capital, at most 128 characters. The tools' schemas, the collect request, `secret_status`,
`offprompt keys` and the names the dotenv reader shows all take it from here.

A leaf (`re`, and the error root for `check_names`' refusal). A dotenv file may hold wider names
(any shell identifier, `bashlex`); this rule is for the names offprompt is asked for and shows.
"""

import re
from collections.abc import Sequence
from typing import Final

from offprompt.errors import RefusedRequest

__all__ = [
    "BOUNDED_NAME",
    "MAX_NAMES",
    "MAX_NAME_LENGTH",
    "NAME",
    "NAME_PATTERN",
    "check_names",
    "is_name",
]

NAME_PATTERN: Final = "^[A-Z][A-Z0-9_]*$"
"""A key name (DESIGN §3.1), matched against the whole name (`re.fullmatch`); as JSON Schema
has it, so the tools' schemas carry it as it is."""
MAX_NAME_LENGTH: Final = 128
MAX_NAMES: Final = 12
"""The most keys one collect asks for (`secret_status` takes more: it passes its own `most`)."""
NAME: Final = re.compile(NAME_PATTERN)
"""The pattern alone, any length (`offprompt keys` telling a NAME from a FILE)."""
BOUNDED_NAME: Final = re.compile(r"[A-Z][A-Z0-9_]{0,127}")
"""The whole rule in one match (`fullmatch`): NAME_PATTERN within MAX_NAME_LENGTH, for readers
that test every key of a large file (tests/unit/test_names.py holds the two to one another)."""


def is_name(text: str) -> bool:
    """Whether `text` is a key name: `NAME_PATTERN`, and at most MAX_NAME_LENGTH characters."""
    return BOUNDED_NAME.fullmatch(text) is not None


def check_names(names: Sequence[str], *, most: int = MAX_NAMES) -> None:
    """1-`most` key names, each `NAME_PATTERN` and at most 128 characters, none twice (a
    collect asks for at most 12; `secret_status` takes up to 64)."""
    if not names:
        raise RefusedRequest("name at least one key, e.g. STRIPE_SECRET_KEY")
    if len(names) > most:
        raise RefusedRequest(f"{len(names)} keys were named; name at most {most} at once")
    seen: set[str] = set()
    for name in names:
        if not is_name(name):
            raise RefusedRequest(
                f"{name!r} is not a key name: capitals, digits and _, starting with a capital, "
                f"at most {MAX_NAME_LENGTH} characters (e.g. STRIPE_SECRET_KEY)"
            )
        if name in seen:
            raise RefusedRequest(f"{name} is named twice; name each key once.")
        seen.add(name)
