"""How a value is written after `NAME=` in a .env so that python-dotenv, Node and bash each read
it back exactly, and why a value no form carries is refused. Pure text; no I/O.
"""

from __future__ import annotations

import re

from offprompt.errors import UnsafeValue

__all__ = ["FILE_SINK_HINT", "serialize_value", "unsafe_reason"]

FILE_SINK_HINT = (
    'use a file sink (sink: {kind: "file"}; from a terminal,'
    " offprompt collect NAME --file PATH --whole)"
)

# python-dotenv's `${NAME}` / `${NAME:-default}` interpolation, applied by `dotenv_values()` to
# every value whatever its quoting (variables.py, `_posix_variable`).
_INTERPOLATION = re.compile(r"\$\{[^}:]*(?::-[^}]*)?\}")

# Each value is written in the one form that python-dotenv (`dotenv_values`, interpolation on),
# `node --env-file` (Node 22 and 24) and bash (`set -a; . ./.env`) all read back exactly. Every
# rule below was checked against the real readers (tests/unit/sinks/test_sinks_readers.py):
#
# * Bare, only for `[A-Za-z0-9_@%+=:,./-]+`: nothing there is special to any reader (no blanks,
#   quotes, `#`, `$`, `~`, globs or braces).
# * Single quotes otherwise: bash takes everything literally up to the next `'`, newlines
#   included, and Node takes everything up to the next `'`. python-dotenv, though, turns `\\` into
#   `\` and `\'` into `'`, so the value may not hold `'` or `\\`, nor end in `\` (which would
#   escape the closing quote for python-dotenv).
# * Double quotes for the rest (values with `'`): bash expands `$` and `` ` `` there and treats `\`
#   as an escape; python-dotenv decodes `\` escapes; Node turns `\n` into a newline. So the value
#   may hold none of `"`, `$`, `` ` ``, `\`. (`!` is safe: bash does no history expansion in
#   a sourced file, even in an interactive shell.)
# * Refused whatever the form: `${...}` (python-dotenv interpolates it even inside single
#   quotes), CR (python-dotenv reads it as LF, Node drops it), NUL (no environment variable can
#   hold it), and text that is not valid Unicode. Tab, other control characters, emoji and
#   Unicode line separators read back exactly inside quotes.
_BARE = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")


def unsafe_reason(value: str) -> str | None:
    """Why no .env form carries `value` exactly for all three readers, or None when one does.

    The reason names the kind of character at fault, never any part of the value.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "It is not valid Unicode text (a broken surrogate); type or paste it again."
    if "\0" in value:
        return (
            "It contains a NUL character, which no environment variable can hold;"
            f" {FILE_SINK_HINT}."
        )
    if "\r" in value:
        return (
            "It contains a carriage return (a browser without script sends each line break"
            " in the box as one), which python-dotenv reads as a newline and Node drops; remove"
            f" the line breaks, or {FILE_SINK_HINT}."
        )
    if _INTERPOLATION.search(value):
        return (
            "It contains ${...}, which python-dotenv replaces with another variable's value"
            f" whatever the quoting; {FILE_SINK_HINT}."
        )
    if _form(value) is None:
        return (
            "No .env quoting keeps this value exactly for python-dotenv, Node and bash (it has"
            f" ' together with \", $, ` or \\); {FILE_SINK_HINT}."
        )
    return None


def _form(value: str) -> str | None:
    if value == "":
        return "''"
    if _BARE.fullmatch(value):
        return value
    if "'" not in value and "\\\\" not in value and not value.endswith("\\"):
        return f"'{value}'"
    if not any(c in value for c in '"$`\\'):
        return f'"{value}"'
    return None


def serialize_value(value: str) -> str:
    """The text to put after `NAME=` so every reader gets `value` back; UnsafeValue if none."""
    reason = unsafe_reason(value)
    form = None if reason else _form(value)
    if form is None:
        raise UnsafeValue(reason or "No .env form carries this value exactly.")
    return form
