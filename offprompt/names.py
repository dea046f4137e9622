"""The key-name rule of DESIGN §3.1, said once: capitals, digits and `_`, starting with a
capital, at most 128 characters. The tools' schemas, the collect request, `secret_status`,
`offprompt keys` and the names the dotenv reader shows all take it from here.

A leaf (only `re`). A dotenv file may hold wider names (any shell identifier, `bashlex`); this
rule is for the names offprompt is asked for and shows.
"""

import re
from typing import Final

__all__ = ["BOUNDED_NAME", "MAX_NAME_LENGTH", "NAME", "NAME_PATTERN", "is_name"]

NAME_PATTERN: Final = "^[A-Z][A-Z0-9_]*$"
"""A key name (DESIGN §3.1), matched against the whole name (`re.fullmatch`); as JSON Schema
has it, so the tools' schemas carry it as it is."""
MAX_NAME_LENGTH: Final = 128
NAME: Final = re.compile(NAME_PATTERN)
"""The pattern alone, any length (`offprompt keys` telling a NAME from a FILE)."""
BOUNDED_NAME: Final = re.compile(r"[A-Z][A-Z0-9_]{0,127}")
"""The whole rule in one match (`fullmatch`): NAME_PATTERN within MAX_NAME_LENGTH, for readers
that test every key of a large file (tests/unit/test_names.py holds the two to one another)."""


def is_name(text: str) -> bool:
    """Whether `text` is a key name: `NAME_PATTERN`, and at most MAX_NAME_LENGTH characters."""
    return BOUNDED_NAME.fullmatch(text) is not None
