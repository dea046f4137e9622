"""Lossless edits of JSON-with-comments text (read by jsonc.py): each edit splices the text, so
comments, trailing commas, key order, indentation and line endings outside the one member changed
stay as they were.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from offprompt.configedit.jsonc import Document, JsoncError, Member, Node, parse

__all__ = ["append", "remove", "remove_item", "set_value"]


# --- Layout ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Style:
    eol: str
    unit: str  # one level of indentation
    compact: bool  # the whole document is on one line
    colon: str  # ": " or ":"
    comma: str  # ", " or ","


def _style(doc: Document) -> _Style:
    text = doc.text
    eol = "\r\n" if "\r\n" in text else "\n"
    widths = []
    unit = ""
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if not stripped or stripped == line or stripped.startswith(("/", "*")):
            continue
        lead = line[: len(line) - len(stripped)]
        if lead.startswith("\t"):
            unit = "\t"
            break
        widths.append(len(lead))
    if not unit:
        unit = " " * min(min(widths, default=2), 8)
    compact = bool(doc.root.members) and "\n" not in text.strip()
    colon, comma = ": ", ", "
    first = _first_member(doc.root)
    if first is not None:
        if text[first.key_end : first.value.start] == ":":
            colon, comma = ":", ","
    return _Style(eol, unit, compact, colon, comma)


def _first_member(node: Node) -> Member | None:
    for m in node.members or ():
        return m
    return None


def _line_start(text: str, pos: int) -> int:
    return max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1


def _indent_of_line(text: str, pos: int) -> str:
    start = _line_start(text, pos)
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _starts_line(text: str, pos: int) -> bool:
    return text[_line_start(text, pos) : pos].strip(" \t") == ""


def _spans_lines(text: str, node: Node) -> bool:
    return "\n" in text[node.start : node.end] or "\r" in text[node.start : node.end]


def _after_line_trivia(text: str, pos: int) -> int:
    """From `pos`, skip blanks and comments that end on this line; where the line's content ends."""
    n = len(text)
    while pos < n:
        if text[pos] in " \t":
            pos += 1
        elif text.startswith("//", pos):
            end = min(i for i in (text.find("\n", pos), text.find("\r", pos), n) if i >= 0)
            return end
        elif text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            if end < 0 or any(c in text[pos:end] for c in "\r\n"):
                return pos
            pos = end + 2
        else:
            return pos
    return pos


def _dump(value: object, style: _Style, indent: str, multiline: bool) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False, separators=(style.comma, style.colon))
    text = json.dumps(value, ensure_ascii=False, indent=style.unit)
    return (style.eol + indent).join(text.split("\n"))


def _member_text(key: str, value: object, style: _Style, indent: str, multiline: bool) -> str:
    name = json.dumps(key, ensure_ascii=False)
    return name + style.colon + _dump(value, style, indent, multiline)


def _splice(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, key=lambda e: e[0], reverse=True):
        text = text[:start] + new + text[end:]
    return text


# --- Edits -------------------------------------------------------------------------------------


def _insert(doc: Document, obj: Node, key: str, value: object) -> str:
    text, style = doc.text, _style(doc)
    members = obj.members or ()
    inline = style.compact or (bool(members) and not _spans_lines(text, obj))
    if members:
        last = members[-1]
        after = last.comma + 1 if last.comma is not None else last.value.end
        if not inline and _starts_line(text, last.key_start):
            indent = _indent_of_line(text, last.key_start)
            # Our member goes on its own line after the last one (and after any comment that
            # ends that line); the comma goes right after the last value, where JSON wants it.
            at = _after_line_trivia(text, after)
            if at < len(text) and text[at] in "\r\n":
                new = style.eol + indent + _member_text(key, value, style, indent, True)
                edits = [(at, at, new + ("," if last.comma is not None else ""))]
                if last.comma is None:
                    edits.append((last.value.end, last.value.end, ","))
                return _splice(text, edits)
        member = _member_text(key, value, style, "", False)
        if last.comma is None:
            return _splice(text, [(after, after, style.comma + member)])
        return _splice(text, [(after, after, " " + member + ",")])
    close = obj.end - 1
    inner = text[obj.start + 1 : close]
    if style.compact:
        return _splice(text, [(close, close, _member_text(key, value, style, "", False))])
    outer = _indent_of_line(text, obj.start)
    indent = outer + style.unit
    member = _member_text(key, value, style, indent, True)
    if ("\n" in inner or "\r" in inner) and _starts_line(text, close):
        # Only comments or blank lines inside: add our line just above the closing brace.
        at = _line_start(text, close)
        return _splice(text, [(at, at, indent + member + style.eol)])
    if inner.strip(" \t") == "":
        new = style.eol + indent + member + style.eol + outer
        return _splice(text, [(obj.start + 1, close, new)])
    return _splice(text, [(obj.start + 1, obj.start + 1, style.eol + indent + member + ",")])


def _replace(doc: Document, obj: Node, member: Member, value: object) -> str:
    text, style = doc.text, _style(doc)
    old = member.value
    scalar_list = isinstance(value, list) and all(not isinstance(v, dict | list) for v in value)
    keep_inline = not _spans_lines(text, old) and (
        scalar_list or not isinstance(value, dict | list)
    )
    multiline = (
        not keep_inline
        and not style.compact
        and _spans_lines(text, obj)
        and _starts_line(text, member.key_start)
    )
    indent = _indent_of_line(text, member.key_start)
    return _splice(text, [(old.start, old.end, _dump(value, style, indent, multiline))])


def _delete(doc: Document, obj: Node, index: int) -> str:
    text = doc.text
    members = obj.members if obj.members is not None else obj.items or ()
    m = members[index]
    end = m.comma + 1 if m.comma is not None else m.value.end
    edits: list[tuple[int, int, str]] = []
    if _spans_lines(text, obj) and _starts_line(text, m.key_start):
        start = _line_start(text, m.key_start)
        if start > obj.start + 1:
            start -= 1  # the line break before this member's line
            if text[start] == "\n" and text[start - 1] == "\r":
                start -= 1
        rest = end
        while rest < len(text) and text[rest] in " \t":
            rest += 1
        if rest >= len(text) or text[rest] in "\r\n":
            end = rest
    else:
        start = m.key_start
        if m.comma is not None:
            while end < len(text) and text[end] in " \t":
                end += 1
    if m.comma is None and index > 0:
        # The member before ours now ends the object: its comma goes (a member always has one
        # when another follows it).
        comma = members[index - 1].comma
        if comma is not None and text[comma + 1 : start].strip(" \t\r\n") == "":
            start = min(start, comma)
        elif comma is not None:
            edits.append((comma, comma + 1, ""))
    edits.append((start, end, ""))
    if len(members) == 1:
        inner_start, inner_end = obj.start + 1, obj.end - 1
        rest_of_inner = text[inner_start:start] + text[end:inner_end]
        if rest_of_inner.strip(" \t\r\n") == "":
            return _splice(text, [(inner_start, inner_end, "")])
    return _splice(text, edits)


def _walk(doc: Document, path: Sequence[str]) -> Node | None:
    node = doc.root
    for key in path:
        if node.members is None:
            return None
        member = node.member(key)
        if member is None:
            return None
        node = member.value
    return node


def _object_at(doc: Document, path: Sequence[str]) -> Node:
    node = doc.root
    for i, key in enumerate(path):
        if node.members is None:
            where = ".".join(path[:i]) or "the top level"
            raise JsoncError(f"{where} is not an object")
        member = node.member(key)
        if member is None:
            raise JsoncError(f"{'.'.join(path[: i + 1])} is missing")
        node = member.value
    if node.members is None:
        raise JsoncError(f"{'.'.join(path) or 'the top level'} is not an object")
    return node


def set_value(text: str, path: Sequence[str], value: object) -> str:
    """Make `path` hold `value`: replace it, or add it (and the objects above it) at the end."""
    doc = parse(text)
    node = doc.root
    for i, key in enumerate(path):
        if node.members is None:
            raise JsoncError(f"{'.'.join(path[:i]) or 'the top level'} is not an object")
        member = node.member(key)
        if member is None:
            nested = value
            for inner in reversed(path[i + 1 :]):
                nested = {inner: nested}
            return _insert(doc, node, key, nested)
        if i == len(path) - 1:
            return _replace(doc, node, member, value)
        node = member.value
    raise ValueError("an empty path")


def remove(text: str, path: Sequence[str], *, prune: bool = True) -> str:
    """Take out every `path` member; then, with `prune`, objects above it that this left empty
    (and free of comments) go too, so removing what `set_value` added gives back the original
    text."""
    doc = parse(text)
    if _walk(doc, path) is None:
        return text
    parent_path = path[:-1]
    while True:
        doc = parse(text)
        parent = _object_at(doc, parent_path)
        indexes = [i for i, m in enumerate(parent.members or ()) if m.key == path[-1]]
        if not indexes:
            break
        text = _delete(doc, parent, indexes[-1])
    for depth in range(len(parent_path), 0, -1) if prune else ():
        doc = parse(text)
        node = _walk(doc, parent_path[:depth])
        if node is None or node.members != () or text[node.start + 1 : node.end - 1].strip():
            break
        above = _object_at(doc, parent_path[: depth - 1])
        indexes = [i for i, m in enumerate(above.members or ()) if m.key == parent_path[depth - 1]]
        text = _delete(doc, above, indexes[-1])
    return text


def _array_at(doc: Document, path: Sequence[str]) -> Node:
    node = _walk(doc, path)
    if node is None or node.items is None:
        raise JsoncError(f"{'.'.join(path)} is not an array")
    return node


def append(text: str, path: Sequence[str], value: object) -> str:
    """Add `value` at the end of the array at `path`, laid out like the items before it."""
    doc = parse(text)
    arr = _array_at(doc, path)
    style = _style(doc)
    items = arr.items or ()
    if not items:
        outer = _indent_of_line(text, arr.start)
        multiline = not style.compact and isinstance(value, dict | list)
        inner = _dump([value], style, outer, multiline)
        return _splice(text, [(arr.start, arr.end, inner)])
    last = items[-1]
    after = last.comma + 1 if last.comma is not None else last.value.end
    if not style.compact and _spans_lines(text, arr) and _starts_line(text, last.key_start):
        indent = _indent_of_line(text, last.key_start)
        at = _after_line_trivia(text, after)
        if at < len(text) and text[at] in "\r\n":
            new = style.eol + indent + _dump(value, style, indent, True)
            edits = [(at, at, new + ("," if last.comma is not None else ""))]
            if last.comma is None:
                edits.append((last.value.end, last.value.end, ","))
            return _splice(text, edits)
    item = _dump(value, style, "", False)
    if last.comma is None:
        return _splice(text, [(after, after, style.comma + item)])
    return _splice(text, [(after, after, " " + item + ",")])


def remove_item(text: str, path: Sequence[str], index: int) -> str:
    """Take item `index` out of the array at `path`, undoing what `append` added."""
    doc = parse(text)
    arr = _array_at(doc, path)
    if not 0 <= index < len(arr.items or ()):
        raise JsoncError(f"{'.'.join(path)} has no item {index}")
    return _delete(doc, arr, index)
