"""Lossless edits of one table in a TOML file (Codex's config.toml): find `[a.b]`, set its keys or
take it out, and leave every other byte — comments included — where it was.

Python reads TOML (tomllib) but cannot write it, so this edits text; callers read each result
back with tomllib and refuse to write anything that does not parse to what they meant.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Statement", "TomlScanError", "dumps", "remove_table", "scan", "set_keys"]


class TomlScanError(ValueError):
    """The text has a construct this scanner does not follow (tomllib may still read it).

    Outside the error root on purpose: `codex` turns it into a ConfigError naming the file.
    """


@dataclass(frozen=True)
class Statement:
    """A `[table]` header or a `key = value` line, as the offsets `[start, end)` of whole lines.

    `table` is the header that a key/value sits under (() before the first header); for a header
    it is its own key. `value_start`/`value_end` span a key/value's value only.
    """

    kind: Literal["header", "keyvalue"]
    start: int
    end: int
    key: tuple[str, ...]
    table: tuple[str, ...]
    array: bool = False
    value_start: int = 0
    value_end: int = 0


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|x([0-9a-fA-F]{2})|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "e": "\x1b"}
_SIMPLE_ESCAPES |= {'"': '"', "\\": "\\"}


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)

    def fail(self, what: str, pos: int) -> TomlScanError:
        return TomlScanError(f"{what} at line {self.text.count(chr(10), 0, pos) + 1}")

    def blanks(self, pos: int) -> int:
        while pos < self.n and self.text[pos] in " \t":
            pos += 1
        return pos

    def line_end(self, pos: int) -> int:
        while pos < self.n and self.text[pos] not in "\r\n":
            pos += 1
        return pos

    def after_eol(self, pos: int) -> int:
        if self.text.startswith("\r\n", pos):
            return pos + 2
        return pos + 1 if pos < self.n and self.text[pos] in "\r\n" else pos

    def end_of_statement(self, pos: int) -> int:
        pos = self.blanks(pos)
        if pos < self.n and self.text[pos] == "#":
            pos = self.line_end(pos)
        if pos < self.n and self.text[pos] not in "\r\n":
            raise self.fail("unexpected text after a statement", pos)
        return self.after_eol(pos)

    def basic_string(self, pos: int) -> int:
        """From an opening `"`, the offset after the closing one."""
        i = pos + 1
        while i < self.n:
            c = self.text[i]
            if c == "\\":
                i += 2
            elif c == '"':
                return i + 1
            elif c in "\r\n":
                break
            else:
                i += 1
        raise self.fail("an unclosed string", pos)

    def literal_string(self, pos: int) -> int:
        end = self.text.find("'", pos + 1)
        if end < 0 or any(c in self.text[pos:end] for c in "\r\n"):
            raise self.fail("an unclosed string", pos)
        return end + 1

    def multiline_string(self, pos: int, quote: str) -> int:
        delim = quote * 3
        i = pos + 3
        while i < self.n:
            if quote == '"' and self.text[i] == "\\":
                i += 2
            elif self.text.startswith(delim, i):
                end = i + 3
                # Up to two more quotes belong to the content: `"""a"""""` holds a"".
                while end < self.n and self.text[end] == quote and end - i < 5:
                    end += 1
                return end
            else:
                i += 1
        raise self.fail("an unclosed multi-line string", pos)

    def key(self, pos: int) -> tuple[tuple[str, ...], int]:
        parts: list[str] = []
        while True:
            pos = self.blanks(pos)
            c = self.text[pos] if pos < self.n else ""
            if c == '"':
                end = self.basic_string(pos)
                parts.append(_unescape(self.text[pos + 1 : end - 1]))
            elif c == "'":
                end = self.literal_string(pos)
                parts.append(self.text[pos + 1 : end - 1])
            else:
                m = _BARE_KEY.match(self.text, pos)
                if m is None:
                    raise self.fail("expected a key", pos)
                end = m.end()
                parts.append(m.group())
            pos = self.blanks(end)
            if not self.text.startswith(".", pos):
                return tuple(parts), end
            pos += 1

    def value(self, pos: int) -> int:
        """From a value's first character, the offset after its last one."""
        depth = 0
        last = pos
        i = pos
        while i < self.n:
            c = self.text[i]
            if self.text.startswith(('"""', "'''"), i):
                i = last = self.multiline_string(i, c)
            elif c == '"':
                i = last = self.basic_string(i)
            elif c == "'":
                i = last = self.literal_string(i)
            elif c in "[{":
                depth += 1
                i = last = i + 1
            elif c in "]}":
                depth -= 1
                if depth < 0:
                    raise self.fail(f"an unmatched {c}", i)
                i = last = i + 1
            elif c == "#":
                if depth == 0:
                    break
                i = self.line_end(i)
            elif c in "\r\n":
                if depth == 0:
                    break
                i += 1
            elif c in " \t":
                i += 1
            else:
                i = last = i + 1
        if depth:
            raise self.fail("an unclosed array or table", pos)
        if last == pos:
            raise self.fail("a missing value", pos)
        return last

    def statements(self) -> list[Statement]:
        out: list[Statement] = []
        table: tuple[str, ...] = ()
        pos = 0
        while pos < self.n:
            start = pos
            pos = self.blanks(pos)
            if pos >= self.n:
                break
            c = self.text[pos]
            if c in "\r\n":
                pos = self.after_eol(pos)
            elif c == "#":
                pos = self.after_eol(self.line_end(pos))
            elif c == "[":
                array = self.text.startswith("[[", pos)
                key, pos = self.key(pos + (2 if array else 1))
                pos = self.blanks(pos)
                closing = "]]" if array else "]"
                if not self.text.startswith(closing, pos):
                    raise self.fail(f"expected {closing}", pos)
                pos = self.end_of_statement(pos + len(closing))
                table = key
                out.append(Statement("header", start, pos, key, key, array))
            else:
                key, pos = self.key(pos)
                pos = self.blanks(pos)
                if not self.text.startswith("=", pos):
                    raise self.fail("expected =", pos)
                value_start = self.blanks(pos + 1)
                value_end = self.value(value_start)
                pos = self.end_of_statement(value_end)
                out.append(
                    Statement("keyvalue", start, pos, key, table, False, value_start, value_end)
                )
        return out


def _unescape(raw: str) -> str:
    def one(m: re.Match[str]) -> str:
        hex_ = m.group(1) or m.group(2) or m.group(3)
        if hex_:
            return chr(int(hex_, 16))
        return _SIMPLE_ESCAPES.get(m.group(4), m.group(0))

    return _ESCAPE.sub(one, raw)


def scan(text: str) -> list[Statement]:
    """Every header and key/value of `text`, in order. TomlScanError where it cannot follow."""
    return _Scanner(text).statements()


def _eol(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _string(value: str) -> str:
    out = []
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch < " " or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def dumps(value: object, eol: str = "\n") -> str:
    """A TOML value for str, int, float, bool, or a list of those (one item a line if long)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("only finite numbers")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        items = [dumps(v, eol) for v in value]
        one_line = "[" + ", ".join(items) + "]"
        if len(one_line) <= 72:
            return one_line
        return "[" + eol + "".join(f"  {item},{eol}" for item in items) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _header(table: Sequence[str]) -> str:
    return ".".join(k if _BARE_KEY.fullmatch(k) else _string(k) for k in table)


def _body(stmts: list[Statement], index: int) -> list[Statement]:
    """The key/values under the header at `index`, up to the next header."""
    body: list[Statement] = []
    for s in stmts[index + 1 :]:
        if s.kind == "header":
            break
        body.append(s)
    return body


def set_keys(
    text: str,
    table: Sequence[str],
    values: Sequence[tuple[str, object]],
    comments: Sequence[str] = (),
) -> str:
    """Give `[table]` these (bare) keys: change values in place, add missing keys after its last
    one, or append the whole table at the end of the file (with `comments` under its header).
    Other keys of the table, and everything outside it, stay byte for byte."""
    stmts = scan(text)
    eol = _eol(text)
    table = tuple(table)
    index = next(
        (i for i, s in enumerate(stmts) if s.kind == "header" and s.key == table and not s.array),
        None,
    )
    if index is None:
        lines = [f"[{_header(table)}]", *(f"# {c}" for c in comments)]
        lines += [f"{k} = {dumps(v, eol)}" for k, v in values]
        block = eol.join(lines) + eol
        if text and not text.endswith(("\n", "\r")):
            text += eol
        if text.strip() and not text.endswith(eol * 2):
            text += eol
        return text + block
    body = _body(stmts, index)
    present = {s.key: s for s in body}
    edits: list[tuple[int, int, str]] = []
    missing: list[str] = []
    for k, v in values:
        s = present.get((k,))
        if s is None:
            missing.append(f"{k} = {dumps(v, eol)}")
        else:
            edits.append((s.value_start, s.value_end, dumps(v, eol)))
    if missing:
        at = body[-1].end if body else stmts[index].end
        if at > 0 and text[at - 1] not in "\r\n":
            edits.append((at, at, eol + eol.join(missing)))
        else:
            edits.append((at, at, eol.join(missing) + eol))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def remove_table(text: str, table: Sequence[str]) -> str:
    """Take out `[table]` and its sub-tables (`[table.env]`…) with their keys and the comments
    among them; blank lines and comments after a table's last key stay for what follows."""
    stmts = scan(text)
    table = tuple(table)
    eol = _eol(text)
    regions: list[tuple[int, int]] = []
    for i, s in enumerate(stmts):
        if s.kind == "header" and s.key[: len(table)] == table:
            body = _body(stmts, i)
            regions.append((s.start, body[-1].end if body else s.end))
    for start, end in reversed(regions):
        before, after = text[:start], text[end:]
        if not after.strip():
            # The table closed the file: drop the blank line `set_keys` put above it.
            after = ""
            if before.endswith(eol * 2):
                before = before[: -len(eol)]
        elif (not before or before.endswith(eol * 2)) and after.startswith(eol):
            after = after[len(eol) :]
        text = before + after
    return text
