"""Where bash stands at each line of a sourced .env: a conservative tracker of quotes and words.

Tells which line starts bash reaches as a fresh command, so a statement written there is seen.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Scan", "scan"]

# Only soundness matters: a line start is reported clean only when bash (`set -a; . ./.env`)
# certainly begins a new command there, outside any quote. Anything this tracker does not model
# ends the scan, and no later line counts as clean: command substitution, here-documents,
# subshells and arrays (`(`), `${...}` holding quotes, and reserved words, since `if`, `case`,
# `for` or `{` make bash read on past the line. A backslash before a newline joins the lines.
_RESERVED = frozenset(
    "! case coproc do done elif else esac fi for function if in select then time until while"
    " { } [[ ]]".split()
)
_BLANKS = " \t"
_SEPARATORS = ";&|<>"


@dataclass(frozen=True)
class Scan:
    """`clean`: offsets of line starts where bash begins a fresh command. `stop`: where the
    tracker gave up (offset, what it met), or None when it read the whole text."""

    clean: frozenset[int]
    stop: tuple[int, str] | None


def scan(text: str) -> Scan:
    """Follow bash's quoting through `text`."""
    clean = {0}
    i, n = 0, len(text)
    word_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            i += 1
            word_start = True
            clean.add(i)
            continue
        if c in _BLANKS or c in _SEPARATORS:
            if text.startswith("<<", i):
                return Scan(frozenset(clean), (i, "a here-document"))
            i += 1
            word_start = True
            continue
        if c == "#" and word_start:
            newline = text.find("\n", i)
            i = n if newline == -1 else newline
            continue
        if word_start:
            end = i
            while end < n and text[end] not in " \t\n;&|<>()'\"`$\\":
                end += 1
            if text[i:end] in _RESERVED:
                return Scan(frozenset(clean), (i, "a shell keyword such as if, for or {"))
        word_start = False
        if c == "\\":
            i += 2  # an escaped newline is a line continuation: no fresh command after it
        elif c == "'":
            close = text.find("'", i + 1)
            if close == -1:
                return Scan(frozenset(clean), (i, "an unclosed quote"))
            i = close + 1
        elif c == '"':
            after = _double_quoted(text, i + 1)
            if after is None:
                return Scan(
                    frozenset(clean),
                    (i, "a double-quoted value that is unclosed or holds a command"),
                )
            i = after
        elif c == "$":
            after = _dollar(text, i)
            if after is None:
                return Scan(
                    frozenset(clean),
                    (i, "an unclosed $'...', a $(...) command, or a ${...} holding quotes"),
                )
            i = after
        elif c in "`()":
            return Scan(frozenset(clean), (i, "a backtick or parenthesis"))
        else:
            i += 1
    return Scan(frozenset(clean), None)


def _double_quoted(text: str, i: int) -> int | None:
    """The offset after the closing `"` of a value opened before `i`, or None if unsure."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        elif c == "`":
            return None
        elif c == "$":
            if text.startswith("$(", i):
                return None
            if text.startswith("${", i):
                after = _braced(text, i)
                if after is None:
                    return None
                i = after
            else:
                i += 1
        else:
            i += 1
    return None


def _dollar(text: str, i: int) -> int | None:
    """The offset after a `$` construct starting at `i` (unquoted), or None if unsure."""
    nxt = text[i + 1 : i + 2]
    if nxt == "'":  # ANSI-C quoting: backslash escapes, ends at the next unescaped quote
        j, n = i + 2, len(text)
        while j < n:
            if text[j] == "\\":
                j += 2
            elif text[j] == "'":
                return j + 1
            else:
                j += 1
        return None
    if nxt == "(":
        return None
    if nxt == "{":
        return _braced(text, i)
    return i + 1


def _braced(text: str, i: int) -> int | None:
    # `${...}` with no quote, backtick, `$`, backslash, brace or newline inside is plain.
    close = text.find("}", i + 2)
    if close == -1 or any(c in text[i + 2 : close] for c in "'\"`$\\{\n"):
        return None
    return close + 1
