"""The .env format: a parser with python-dotenv's semantics, the value serializer, and the upsert.

Pure text in, text out; no I/O. The page's paste parser and `offprompt keys` reuse `parse`/`keys`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from offprompt.errors import RefusedRequest, UnsafeValue

__all__ = [
    "FILE_SINK_HINT",
    "NAME_PATTERN",
    "Entry",
    "Upserted",
    "bad_lines",
    "keys",
    "parse",
    "serialize_value",
    "unsafe_reason",
    "upsert",
    "values",
]

# A name every reader takes as a plain assignment: bash needs a shell identifier, Node and
# python-dotenv take anything up to `=`. (The tools layer narrows this to `^[A-Z][A-Z0-9_]*$`.)
NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

FILE_SINK_HINT = 'use a file sink (sink: {kind: "file"})'

# --- Parsing -------------------------------------------------------------------------------
# A port of python-dotenv 1.x `parser.py` that keeps character offsets, so the upsert can splice
# the text and leave every other byte alone. python-dotenv reads the file in universal-newline
# mode; running these same expressions on the raw text gives the same keys and values, except
# that CR/CRLF inside quoted values must become LF afterwards, which `_newlines_to_lf` does.
_MULTILINE_WHITESPACE = re.compile(r"\s*", re.MULTILINE)
_WHITESPACE = re.compile(r"[^\S\r\n]*")
_EXPORT = re.compile(r"(?:export[^\S\r\n]+)?")
_SINGLE_QUOTED_KEY = re.compile(r"'([^']+)'")
_UNQUOTED_KEY = re.compile(r"([^=\#\s]+)")
_EQUAL_SIGN = re.compile(r"(=[^\S\r\n]*)")
_SINGLE_QUOTED_VALUE = re.compile(r"'((?:\\'|[^'])*)'")
_DOUBLE_QUOTED_VALUE = re.compile(r'"((?:\\"|[^"])*)"')
_UNQUOTED_VALUE = re.compile(r"([^\r\n]*)")
_COMMENT = re.compile(r"(?:[^\S\r\n]*#[^\r\n]*)?")
_END_OF_LINE = re.compile(r"[^\S\r\n]*(?:\r\n|\n|\r|$)")
_REST_OF_LINE = re.compile(r"[^\r\n]*(?:\r|\n|\r\n)?")
_DOUBLE_QUOTE_ESCAPES = re.compile(r"\\[\\'\"abfnrtv]")
_SINGLE_QUOTE_ESCAPES = re.compile(r"\\[\\']")
_UNQUOTED_COMMENT = re.compile(r"\s+#.*")
_EOL = re.compile(r"(?:\r\n|\n|\r)\Z")
_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}
# python-dotenv's `${NAME}` / `${NAME:-default}` interpolation, applied by `dotenv_values()` to
# every value whatever its quoting (variables.py, `_posix_variable`).
_INTERPOLATION = re.compile(r"\$\{[^}:]*(?::-[^}]*)?\}")


class _NoMatch(Exception):
    """A grammar rule failed: python-dotenv skips the rest of the line."""


@dataclass(frozen=True)
class Entry:
    """One `KEY=value` (or bare `KEY`) statement as python-dotenv reads it.

    `value` is None for a bare `KEY` line, else the value before `${}` interpolation. `start`/`end`
    are character offsets of the whole statement: from the start of the key's line (indentation
    included, blank lines before it excluded) to after its line ending. `prefix` is the text
    before the key (indentation, `export `), `comment` a ` # ...` kept after the value (or ''),
    `eol` the statement's line ending ('' at the end of the text).
    """

    key: str
    value: str | None = field(repr=False)
    start: int
    end: int
    first_line: int
    last_line: int
    prefix: str
    comment: str
    eol: str


def _newlines_to_lf(s: str) -> str:
    return s.replace("\r\n", "\n").replace("\r", "\n")


def _decode(pattern: re.Pattern[str], raw: str) -> str:
    return pattern.sub(lambda m: _ESCAPES[m.group(0)[1]], _newlines_to_lf(raw))


def _match(pattern: re.Pattern[str], text: str, pos: int) -> re.Match[str]:
    m = pattern.match(text, pos)
    if m is None:
        raise _NoMatch
    return m


_BREAK = re.compile(r"\r\n|\r|\n")


class _Lines:
    """Line numbers by offset, found once per text: looking each one up by counting from the
    start made parsing quadratic in the file's length."""

    def __init__(self, text: str) -> None:
        # Universal newlines: CRLF, CR and LF each end one line, counted from its first byte on.
        self._breaks = [m.start() + 1 for m in _BREAK.finditer(text)]

    def of(self, pos: int) -> int:
        return bisect.bisect_right(self._breaks, pos) + 1


def _statements(text: str) -> tuple[list[Entry], list[int]]:
    """Every statement with a key, and the first line of every statement python-dotenv skips."""
    entries: list[Entry] = []
    errors: list[int] = []
    lines = _Lines(text)
    pos = 0
    n = len(text)
    while pos < n:
        mark = pos
        pos = _match(_MULTILINE_WHITESPACE, text, pos).end()
        if pos >= n:
            break
        blank = text[mark:pos]
        cut = max(blank.rfind("\n"), blank.rfind("\r"))
        line_start = mark + cut + 1
        try:
            pos = _match(_EXPORT, text, pos).end()
            key_start = pos
            if text.startswith("#", pos):
                key: str | None = None
            elif text.startswith("'", pos):
                m = _match(_SINGLE_QUOTED_KEY, text, pos)
                key, pos = _newlines_to_lf(m.group(1)), m.end()
            else:
                m = _match(_UNQUOTED_KEY, text, pos)
                key, pos = m.group(1), m.end()
            pos = _match(_WHITESPACE, text, pos).end()
            value: str | None = None
            comment = ""
            if text.startswith("=", pos):
                pos = _match(_EQUAL_SIGN, text, pos).end()
                value, comment, pos = _value(text, pos)
            m = _match(_COMMENT, text, pos)
            if m.group(0) and not comment:
                comment = m.group(0)
            pos = m.end()
            m = _match(_END_OF_LINE, text, pos)
            eol_start, pos = m.start(), m.end()
        except _NoMatch:
            errors.append(lines.of(line_start))
            pos = _match(_REST_OF_LINE, text, pos).end()
            continue
        if key is None:
            continue
        eol_m = _EOL.search(text, eol_start, pos)
        entries.append(
            Entry(
                key=key,
                value=value,
                start=line_start,
                end=pos,
                first_line=lines.of(line_start),
                last_line=lines.of(eol_start),
                prefix=text[line_start:key_start],
                # Only a comment bash also sees as one (blank, then `#`) is worth keeping.
                comment=comment if re.fullmatch(r"[ \t]+#[^\r\n]*", comment) else "",
                eol=eol_m.group(0) if eol_m else "",
            )
        )
    return entries, errors


def _value(text: str, pos: int) -> tuple[str, str, int]:
    """The value at `pos`, an inline comment found inside an unquoted one, and the new offset."""
    if text.startswith("'", pos):
        m = _match(_SINGLE_QUOTED_VALUE, text, pos)
        return _decode(_SINGLE_QUOTE_ESCAPES, m.group(1)), "", m.end()
    if text.startswith('"', pos):
        m = _match(_DOUBLE_QUOTED_VALUE, text, pos)
        return _decode(_DOUBLE_QUOTE_ESCAPES, m.group(1)), "", m.end()
    if pos >= len(text) or text[pos] in "\r\n":
        return "", "", pos
    m = _match(_UNQUOTED_VALUE, text, pos)
    part = m.group(1)
    c = _UNQUOTED_COMMENT.search(part)
    comment = part[c.start() :].rstrip() if c else ""
    return _UNQUOTED_COMMENT.sub("", part).rstrip(), comment, m.end()


def parse(text: str) -> list[Entry]:
    """Every statement with a key, in file order, as python-dotenv reads them (uninterpolated)."""
    return _statements(text)[0]


def bad_lines(text: str) -> tuple[int, ...]:
    """Line numbers of statements python-dotenv cannot read (it skips them with a warning)."""
    return tuple(_statements(text)[1])


def values(text: str) -> dict[str, str]:
    """The value each assigned key ends with (the last assignment wins), before interpolation."""
    return {e.key: e.value for e in parse(text) if e.value is not None}


def keys(text: str) -> tuple[str, ...]:
    """Every key the text assigns (with `=`), once each, in the order they first appear."""
    return tuple(dict.fromkeys(e.key for e in parse(text) if e.value is not None))


# --- Serializing ---------------------------------------------------------------------------
# Each value is written in the one form that python-dotenv (`dotenv_values`, interpolation on),
# `node --env-file` (Node 20) and bash (`set -a; . ./.env`) all read back exactly. Every rule below
# was checked against the three real readers (tests/unit/sinks/test_sinks_readers.py):
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


# --- Upsert --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Upserted:
    """The new text and what happened to each requested name (names in request order)."""

    text: str = field(repr=False)
    added: tuple[str, ...]
    replaced: tuple[str, ...]
    kept: tuple[str, ...]

    def __iter__(self) -> Iterator[Any]:
        """Unpacks as `new_text, added, replaced, kept`."""
        return iter((self.text, self.added, self.replaced, self.kept))


def dominant_eol(text: str) -> str:
    """CRLF when the text ends more lines with CRLF than with a bare LF, else LF."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def _statement(prefix: str, name: str, value: str, comment: str, eol: str) -> str:
    # bash does not strip the CR of a CRLF line: `KEY='v'\r` gives "v\r". A trailing ` #` turns
    # that CR into a comment for bash, and python-dotenv and Node skip the comment.
    tail = comment or (" #" if eol == "\r\n" else "")
    return f"{prefix}{name}={serialize_value(value)}{tail}{eol}"


def _clean_prefix(prefix: str) -> str:
    # Node trims only spaces around a key and strips exactly "export ", so a tab or a quoted
    # key would hide the assignment from it: keep space indentation and a normalized `export `.
    indent = prefix[: len(prefix) - len(prefix.lstrip())]
    rest = prefix[len(indent) :]
    return (indent if set(indent) <= {" "} else "") + ("export " if rest.strip() else "")


def upsert(
    text: str,
    new_values: Mapping[str, str],
    keep_if_present: Collection[str] = frozenset(),
) -> Upserted:
    """Set each name in `new_values`, changing no other line; UnsafeValue if one cannot be set.

    The first statement of a name is rewritten in place (indentation and `export ` kept), later
    ones removed; new names go at the end, in the file's line ending. A name in
    `keep_if_present` whose last assignment in the file is non-empty is left as it is.
    """
    for name, value in new_values.items():
        if not NAME_PATTERN.fullmatch(name):
            raise RefusedRequest(f"{name!r} is not a variable name bash can read.")
        serialize_value(value)  # raise before building anything
    entries = parse(text)
    held = {e.key: e.value for e in entries if e.value is not None}
    eol = dominant_eol(text)
    edits: list[tuple[int, int, str]] = []
    added: list[str] = []
    replaced: list[str] = []
    kept: list[str] = []
    appended: list[str] = []
    present = {e.key for e in entries}
    appending = any(
        n not in present and not (n in keep_if_present and held.get(n)) for n in new_values
    )
    for name, value in new_values.items():
        if name in keep_if_present and held.get(name):
            kept.append(name)
            continue
        mine = [e for e in entries if e.key == name]
        if not mine:
            added.append(name)
            appended.append(_statement("", name, value, "", eol))
            continue
        (replaced if name in held else added).append(name)
        first = mine[0]
        # A last line without a line ending gets one when lines follow it, and it must be
        # written knowing that ending (a CRLF needs the ` #` that keeps bash exact).
        line_end = first.eol or (eol if appending else "")
        line = _statement(_clean_prefix(first.prefix), name, value, first.comment, line_end)
        edits.append((first.start, first.end, line))
        edits.extend((e.start, e.end, "") for e in mine[1:])
    out: list[str] = []
    pos = 0
    for start, end, replacement in sorted(edits):
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    new_text = "".join(out)
    if appended:
        if new_text and not new_text.endswith(("\n", "\r")):
            new_text += eol
        new_text += "".join(appended)
    return Upserted(new_text, tuple(added), tuple(replaced), tuple(kept))
