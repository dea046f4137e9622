"""bash's own expansions, as the guard needs them (DESIGN §14): a word's pattern (bash.Word.pat)
is what it may become once bash has expanded braces, variables and substitutions, and this
module turns one into the names it may stand for, or a glob over what cannot be known.

A pattern is text where a backslash makes the next character literal, UNKNOWN stands for a part
only known when the shell runs (any text, `/` included, or none), unescaped `*?[` are a glob
and unescaped `{`, `,`, `}` are brace expansion. Imports only re, for the hook's speed.
"""

from __future__ import annotations

from offprompt import rx
from offprompt.bashlex import ansi_c_decode

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

__all__ = [
    "MAX_VARIANTS",
    "UNKNOWN",
    "TooMany",
    "as_fnmatch",
    "brace_literal",
    "escape",
    "escape_plain",
    "literal",
    "printf",
    "variants",
]

# A part of a word only known at run time: an unset or outside variable, a substitution's output.
UNKNOWN = "\x01"
# Brace expansion multiplies (`{a,b}{c,d}…`): one word may become at most this many; past it
# the word is not checked name by name, and the guard blocks it (DESIGN §14: bounded time).
MAX_VARIANTS = 1024

# What escape() and escape_plain() put a backslash before (str.translate: the lexer calls them
# for every piece of every word, and a table is several times faster than a regex there).
_ESCAPE = str.maketrans({c: "\\" + c for c in "\\*?[]{},\x01"})
_ESCAPE_PLAIN = str.maketrans({c: "\\" + c for c in "\\\x01"})
# Patterns as text: re compiles each on first use and keeps it; the hook imports this module on
# every tool call, and most calls use none of them.
_BRACE_SPECIAL = r"(?<!\\)((?:\\\\)*)([{},])"
_INT_SEQUENCE = r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?"
_CHAR_SEQUENCE = r"([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?"


class TooMany(ValueError):
    """A word that brace expansion makes more than MAX_VARIANTS words of.

    Outside the error root on purpose: bash.py and commands.py catch it at the call and turn
    it into the guard's block (TooBig, UNCHECKED)."""


def escape(text: str) -> str:
    """Quoted text as a pattern: every character literal."""
    return text.translate(_ESCAPE)


def escape_plain(text: str) -> str:
    """Unquoted text as a pattern: globs and braces keep their meaning."""
    return text.translate(_ESCAPE_PLAIN)


def brace_literal(pattern: str) -> str:
    """`pattern` as a variable's value is used: bash expands braces before variables, so
    braces in a value are text (its globs still glob, when the use is unquoted)."""
    return rx.sub(_BRACE_SPECIAL, lambda m: m.group(1) + "\\" + m.group(2), pattern)


def variants(pattern: str) -> list[str]:
    """The patterns brace expansion makes of `pattern`, in bash's order. TooMany past
    MAX_VARIANTS."""
    out = _expand(pattern, [0])
    return out


def _expand(pattern: str, made: list[int]) -> list[str]:
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            found = _group(pattern, i)
            if found is not None:
                end, parts = found
                alternatives = parts if len(parts) > 1 else _sequence(parts[0])
                if alternatives is not None:
                    head, tails = pattern[:i], _expand(pattern[end + 1 :], made)
                    out: list[str] = []
                    for alternative in alternatives:
                        for middle in _expand(alternative, made):
                            for tail in tails:
                                made[0] += 1
                                if made[0] > MAX_VARIANTS:
                                    raise TooMany("too many words")
                                out.append(head + middle + tail)
                    return out
        i += 1
    return [pattern]


def _group(pattern: str, start: int) -> tuple[int, list[str]] | None:
    """The index of the `}` closing the `{` at `start`, and the group's parts split at its
    top-level commas; None when it does not close."""
    depth, i, n = 1, start + 1, len(pattern)
    parts: list[str] = []
    part_start = i
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                parts.append(pattern[part_start:i])
                return i, parts
        elif c == "," and depth == 1:
            parts.append(pattern[part_start:i])
            part_start = i + 1
        i += 1
    return None


def _sequence(body: str) -> list[str] | None:
    """`1..5`, `a..e`, `10..1..3`: the words of a sequence expression, or None."""
    m = rx.fullmatch(_INT_SEQUENCE, body)
    if m is not None:
        first, last = int(m.group(1)), int(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        if abs(last - first) // step >= MAX_VARIANTS:
            raise TooMany("too many words")
        way = 1 if last >= first else -1
        return [str(k) for k in range(first, last + way, way * step)]
    m = rx.fullmatch(_CHAR_SEQUENCE, body)
    if m is not None:
        first, last = ord(m.group(1)), ord(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        way = 1 if last >= first else -1
        return [escape(chr(k)) for k in range(first, last + way, way * step)]
    return None


def literal(pattern: str) -> tuple[str, bool, bool]:
    """A brace-free pattern as (text, glob, unknown): its text with escapes undone (an
    UNKNOWN part as NUL, as bash.Word writes a substitution's output), whether an unescaped
    `*?[` makes it a glob, whether it has an UNKNOWN part."""
    out: list[str] = []
    glob = unknown = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(pattern[i + 1])
            i += 2
            continue
        if c == UNKNOWN:
            unknown = True
            out.append("\0")
        else:
            glob = glob or c in "*?["
            out.append(c)
        i += 1
    return "".join(out), glob, unknown


def as_fnmatch(pattern: str) -> tuple[str, bool]:
    """A brace-free pattern's last part (after its last literal `/`) as an fnmatch pattern,
    UNKNOWN as `*`, escaped characters bracketed; and whether that part has any literal text
    (a part that is all UNKNOWN and glob says nothing of the name)."""
    out: list[str] = []
    has_text = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            i += 2
            if nxt == "/":
                out, has_text = [], False
                continue
            out.append("[" + nxt + "]" if nxt in "*?[]!" else nxt)
            has_text = True
            continue
        i += 1
        if c == "/":
            out, has_text = [], False
        elif c == UNKNOWN:
            out.append("*")
        else:
            out.append(c)
            has_text = has_text or c not in "*?[]!"
    return "".join(out), has_text


_CONVERSION = r"%[-+ #0-9.]*([a-zA-Z%])"


def printf(texts: list[str]) -> str:
    """What `printf FORMAT ARGS…` prints, as far as names go: each `%s`, `%b`, `%c`, `%q`
    given the next argument, the format used again while arguments remain."""
    if texts[0] == "-v" and len(texts) > 2:
        texts = texts[2:]
    form, rest = ansi_c_decode(texts[0]), texts[1:]
    if rx.search(_CONVERSION, form) is None:
        return form  # printed once, whatever follows
    out: list[str] = []
    for _ in range(len(rest) + 1):

        def one(m: re.Match[str]) -> str:
            if m.group(1) == "%":
                return "%"
            value = rest.pop(0) if rest else ""
            return value[:1] if m.group(1) == "c" else value

        out.append(rx.sub(_CONVERSION, one, form))
        if not rest:
            break
    return "".join(out)
