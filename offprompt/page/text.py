"""Escaping and wording shared by the page's renderers: HTML escapes, spelled-out controls, plurals.

Pure string functions; every piece of text from outside offprompt passes through one of them.
"""

import html
import re
import unicodedata
from typing import Final

# Bidi overrides and isolates can make a path or a reason read differently from what it is.
_BIDI: Final = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_WORDS: Final = (
    "no",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)


def esc(text: str) -> str:
    """`text` escaped for HTML text and double- or single-quoted attributes."""
    return html.escape(text, quote=True)


def visible(text: str) -> str:
    """`text` with control and format characters spelled out as `\\uXXXX`, for paths and names."""
    return "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) in {"Cc", "Cf"} else ch for ch in text
    )


def prose(text: str) -> str:
    """Agent-written prose, escaped, with bidi controls and stray controls spelled out."""
    text = _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    text = "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) == "Cc" and ch not in "\n\t" else ch
        for ch in text
    )
    return esc(text)


def plural(n: int, word: str) -> str:
    """`1 value`, `3 values`."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def counted(n: int, word: str) -> str:
    """`one value`, `three values`: the number in words up to twelve."""
    number = _WORDS[n] if 0 <= n < len(_WORDS) else str(n)
    return f"{number} {word}" if n == 1 else f"{number} {word}s"


def minutes(seconds: float) -> str:
    """`less than a minute`, `5 minutes`."""
    if seconds <= 60:
        return "less than a minute"
    return plural(round(seconds / 60), "minute")


def shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
