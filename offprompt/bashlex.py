"""How bash reads quotes and `$`: the lexing both of offprompt's bash readers share, the .env
analysis (sinks/shell.py) and the guard's command reader (guard/bash.py). What each does with a
form it finds (follow it, stop, read it as a command) is theirs. Imports nothing of offprompt.
"""

from __future__ import annotations

from offprompt import rx

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re


__all__ = [
    "DOUBLE_QUOTED_ESCAPES",
    "NAME",
    "NAME_PATTERN",
    "SPECIAL_PARAMETERS",
    "Unclosed",
    "ansi_c_decode",
    "ansi_c_end",
    "continued",
    "double_quoted_escape",
    "name_end",
    "single_quote_end",
]

# A shell variable's name (bash's own rule: ASCII letters, digits and `_`, not a digit first).
NAME_PATTERN = "[A-Za-z_][A-Za-z0-9_]*"
NAME = rx.compile(NAME_PATTERN)
# What may follow `$` as a one-character parameter: `$@`, `$?`, `$1`…
SPECIAL_PARAMETERS = "@*#?-$!0123456789"
# Inside double quotes a backslash escapes only these (and a newline, which it removes).
DOUBLE_QUOTED_ESCAPES = '$`"\\'


class Unclosed(ValueError):
    """A quote with no end: `offset` of its opening character, `quote` what opened it.

    Outside the error root on purpose: both readers that lex with this module (`sinks.shell`,
    `guard.bash`) catch it at the call and turn it into their own answer."""

    def __init__(self, offset: int, quote: str) -> None:
        super().__init__(f"an open {quote} quote")
        self.offset = offset
        self.quote = quote


def single_quote_end(text: str, i: int) -> int:
    """The index after the quote closing the `'…'` that opens at `i`: nothing inside is special,
    not even a backslash. Unclosed when there is none."""
    close = text.find("'", i + 1)
    if close < 0:
        raise Unclosed(i, "'")
    return close + 1


def ansi_c_end(text: str, quote: int) -> int:
    """The index after the quote closing the `$'…'` whose `'` is at `quote`: a backslash
    escapes the character after it (`$'it\\'s'`). Unclosed when there is none."""
    i, n = quote + 1, len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
        elif text[i] == "'":
            return i + 1
        else:
            i += 1
    raise Unclosed(quote, "$'")


def double_quoted_escape(text: str, i: int) -> str | None:
    """What the backslash at `i`, inside double quotes, stands for: "" for a line continuation
    (both characters go), the character after it when that is one of DOUBLE_QUOTED_ESCAPES, or
    None when the backslash is an ordinary character there."""
    nxt = text[i + 1 : i + 2]
    if nxt == "\n":
        return ""
    if nxt and nxt in DOUBLE_QUOTED_ESCAPES:
        return nxt
    return None


def continued(text: str, i: int) -> int:
    """Past any line continuations (a backslash before a newline) at `i`: bash removes them
    before it reads on, even between `$` and what follows."""
    while text.startswith("\\\n", i):
        i += 2
    return i


def name_end(text: str, i: int) -> int:
    """The end of the variable name starting at `i`, or `i` when none starts there."""
    m = NAME.match(text, i)
    return m.end() if m else i


# A pattern, not compiled here: the guard imports this module on every tool call, and re
# compiles it on first use (and keeps it) only when a `$'…'` comes.
_ANSI_C = (
    r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})"
    r"|U([0-9A-Fa-f]{1,8})|c(.)|)"
)
_ANSI_C_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


def ansi_c_decode(body: str) -> str:
    """The text bash makes of the inside of `$'…'`: `\\x2e`, `\\056`, `\\u002e` and the
    letter escapes decoded (a backslash before anything else stays)."""

    def one(m: re.Match[str]) -> str:
        simple, octal, hex2, u4, u8, control = m.groups()
        if simple is not None:
            return _ANSI_C_SIMPLE[simple]
        if octal is not None:
            return chr(int(octal, 8) & 0xFF)
        for digits in (hex2, u4, u8):
            if digits is not None:
                code = int(digits, 16)
                return chr(code) if code < 0x110000 else ""
        if control is not None:
            return chr(ord(control) & 0x1F)
        return "\\"

    return rx.sub(_ANSI_C, one, body, flags=rx.DOTALL)
