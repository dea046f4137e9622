"""JSON and JSON-with-comments files (VS Code, Zed and Gemini allow comments), read with every
value's offsets kept, so jsonc_edit.py can splice the text instead of writing it anew.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["Document", "JsoncError", "Member", "Node", "is_empty", "parse", "same"]


class JsoncError(ValueError):
    """The text is not JSON (comments and trailing commas allowed), or not of the needed shape.

    Outside the error root on purpose: `json_agent` turns it into a ConfigError naming the file.
    """


@dataclass(frozen=True)
class Member:
    """`"key": value` inside an object, with the offset of the comma after it, if any."""

    key: str
    key_start: int
    key_end: int
    value: Node
    comma: int | None


@dataclass(frozen=True)
class Node:
    """A value and its span `[start, end)`; objects also keep their members in file order."""

    start: int
    end: int
    value: object
    members: tuple[Member, ...] | None = None  # objects only
    # Arrays only: each item as a Member with an empty key that starts where its value does.
    items: tuple[Member, ...] | None = None

    def member(self, key: str) -> Member | None:
        """The member JSON readers use for `key`: the last one when a key repeats."""
        found = [m for m in self.members or () if m.key == key]
        return found[-1] if found else None


@dataclass(frozen=True)
class Document:
    text: str
    root: Node
    has_comments: bool


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_LITERALS = {"true": True, "false": False, "null": None}
_WS = " \t\r\n\ufeff"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.has_comments = False

    def fail(self, what: str, pos: int | None = None) -> JsoncError:
        at = self.pos if pos is None else pos
        line = self.text.count("\n", 0, at) + 1
        return JsoncError(f"{what} at line {line}")

    def skip(self) -> None:
        """Skip whitespace and comments (a leading byte-order mark counts as whitespace)."""
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c in _WS:
                self.pos += 1
            elif text.startswith("//", self.pos):
                self.has_comments = True
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif text.startswith("/*", self.pos):
                self.has_comments = True
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("an unclosed /* comment")
                self.pos = end + 2
            else:
                return

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of file")
        c = self.text[self.pos]
        if c == "{":
            return self.object()
        if c == "[":
            return self.array()
        if c == '"':
            start = self.pos
            return Node(start, self.pos_after_string(), self.string_at(start))
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                start = self.pos
                self.pos += len(word)
                return Node(start, self.pos, literal)
        m = _NUMBER.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            number: object = json.loads(m.group())
            return Node(m.start(), m.end(), number)
        raise self.fail(f"unexpected {c!r}")

    def pos_after_string(self) -> int:
        m = _STRING.match(self.text, self.pos)
        if m is None:
            raise self.fail("an unclosed string")
        self.pos = m.end()
        return self.pos

    def string_at(self, start: int) -> str:
        try:
            decoded = json.loads(self.text[start : self.pos], strict=False)
        except ValueError:
            raise self.fail("a malformed string", start) from None
        if not isinstance(decoded, str):
            raise self.fail("a malformed string", start)
        return decoded

    def object(self) -> Node:
        start = self.pos
        self.pos += 1
        members: list[Member] = []
        value: dict[str, object] = {}
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                self.pos += 1
                return Node(start, self.pos, value, tuple(members))
            if not self.text.startswith('"', self.pos):
                raise self.fail('expected a "key" or }')
            key_start = self.pos
            self.pos_after_string()
            key = self.string_at(key_start)
            key_end = self.pos
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected :")
            self.pos += 1
            node = self.value()
            self.skip()
            comma: int | None = None
            if self.text.startswith(",", self.pos):
                comma = self.pos
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise self.fail("expected , or }")
            members.append(Member(key, key_start, key_end, node, comma))
            value[key] = node.value

    def array(self) -> Node:
        start = self.pos
        self.pos += 1
        items: list[object] = []
        spans: list[Member] = []
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                self.pos += 1
                return Node(start, self.pos, items, items=tuple(spans))
            node = self.value()
            items.append(node.value)
            self.skip()
            comma = None
            if self.text.startswith(",", self.pos):
                comma = self.pos
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise self.fail("expected , or ]")
            spans.append(Member("", node.start, node.start, node, comma))


def parse(text: str) -> Document:
    """Parse JSON with comments and trailing commas; JsoncError says what and on which line."""
    parser = _Parser(text)
    try:
        root = parser.value()
        parser.skip()
    except RecursionError:
        raise JsoncError("values nested too deeply") from None
    if parser.pos != len(text):
        raise parser.fail("more text after the end")
    return Document(text, root, parser.has_comments)


def same(a: object, b: object) -> bool:
    """Equal as JSON: unlike ==, `true` is not `1` and `1` is not `1.0`."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def is_empty(text: str) -> bool:
    """True for `{}` with nothing else in the file but whitespace: a file offprompt can delete."""
    try:
        doc = parse(text)
    except JsoncError:
        return False
    return not doc.has_comments and doc.root.members == ()
