"""The named format checks behind `format` rules, mirrored line for line in web/rules.js.

Regex checks keep to what Python `re` and JS `RegExp` read alike (ASCII classes, no `.`, `\\d`,
`\\s` or flags) and are compiled on first use; the rest are small hand-written scanners.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

# Matched whole: `fullmatch` here, `^(?:…)$` without flags in JS. No nested ambiguous
# quantifiers, so a 16 KiB value cannot make either engine backtrack for long.
PATTERNS: Final[dict[str, str]] = {
    "integer": r"[-+]?[0-9]+",
    "hex": r"(0[xX])?[0-9A-Fa-f]+",
    "base64": r"[A-Za-z0-9+/_\r\n-]+={0,2}",
    "email": r"[^@\x00-\x20\x7f]+@[^@.\x00-\x20\x7f]+(\.[^@.\x00-\x20\x7f]+)+",
    "url": r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#\x00-\x20\x7f]+([/?#][^\x00-\x20\x7f]*)?",
    "hostname": (
        r"([A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?|\[?[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*\]?)(:[0-9]+)?"
    ),
    "uuid": r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}",
    "jwt": r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
}

_compiled: dict[str, re.Pattern[str]] = {}

MAX_DEPTH: Final = 512
"""JSON nesting deeper than this is refused, by both runtimes at the same character."""


def _regex(check: str) -> re.Pattern[str]:
    pattern = _compiled.get(check)
    if pattern is None:
        pattern = _compiled[check] = re.compile(PATTERNS[check])
    return pattern


def _ws(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t\n\r":
        i += 1
    return i


def _string_end(s: str, i: int) -> int:
    """Index after the JSON string opening at `i`, or `~pos` of the first fault."""
    n = len(s)
    k = i + 1
    while k < n:
        c = s[k]
        if c == '"':
            return k + 1
        if c == "\\":
            if k + 1 >= n:
                return ~(k + 1)
            e = s[k + 1]
            if e == "u":
                for j in range(k + 2, k + 6):
                    if j >= n or s[j] not in "0123456789abcdefABCDEF":
                        return ~j
                k += 6
            elif e in '"\\/bfnrt':
                k += 2
            else:
                return ~(k + 1)
        elif ord(c) < 0x20:
            return ~k
        else:
            k += 1
    return ~k


def _digits(s: str, i: int) -> int:
    while i < len(s) and "0" <= s[i] <= "9":
        i += 1
    return i


def _number_end(s: str, i: int) -> int:
    n = len(s)
    k = i + 1 if i < n and s[i] == "-" else i
    if k < n and s[k] == "0":
        k += 1
    elif k < n and "1" <= s[k] <= "9":
        k = _digits(s, k)
    else:
        return ~k
    if k < n and s[k] == ".":
        j = _digits(s, k + 1)
        if j == k + 1:
            return ~j
        k = j
    if k < n and s[k] in "eE":
        k += 1
        if k < n and s[k] in "+-":
            k += 1
        j = _digits(s, k)
        if j == k:
            return ~j
        k = j
    return k


def _scalar_end(s: str, i: int) -> int:
    if i >= len(s):
        return ~i
    c = s[i]
    if c == '"':
        return _string_end(s, i)
    for word in ("true", "false", "null"):
        if c == word[0]:
            return i + len(word) if s.startswith(word, i) else ~i
    if c == "-" or "0" <= c <= "9":
        return _number_end(s, i)
    return ~i


def _key_end(s: str, i: int) -> int:
    """After `"key" :` and blanks, or `~pos` of the fault."""
    if i >= len(s) or s[i] != '"':
        return ~i
    j = _string_end(s, i)
    if j < 0:
        return j
    j = _ws(s, j)
    if j >= len(s) or s[j] != ":":
        return ~j
    return _ws(s, j + 1)


def json_error(s: str) -> int | None:
    """Index of the first character that breaks RFC 8259 JSON, or None when `s` is JSON.

    Strict grammar only (no NaN, Infinity, comments or BOM), duplicate keys and any number
    size allowed: what `json.loads` and `JSON.parse` both accept, decided identically here
    and in web/rules.js instead of trusting either parser.
    """
    n = len(s)
    stack: list[str] = []
    i = _ws(s, 0)
    while True:
        if i < n and s[i] in "{[":
            if len(stack) >= MAX_DEPTH:
                return i
            opener = s[i]
            stack.append(opener)
            i = _ws(s, i + 1)
            if i < n and s[i] == ("}" if opener == "{" else "]"):
                stack.pop()
                i += 1
            else:
                if opener == "{":
                    i = _key_end(s, i)
                    if i < 0:
                        return ~i
                continue
        else:
            i = _scalar_end(s, i)
            if i < 0:
                return ~i
        # After a value: close containers, or take a comma and go on to the next value.
        while True:
            i = _ws(s, i)
            if not stack:
                return None if i == n else i
            top = stack[-1]
            if i < n and s[i] == ",":
                i = _ws(s, i + 1)
                if top == "{":
                    i = _key_end(s, i)
                    if i < 0:
                        return ~i
                break
            if i < n and s[i] == ("}" if top == "{" else "]"):
                stack.pop()
                i += 1
                continue
            return i


def _pem_label_end(s: str) -> int:
    """Index just past the BEGIN line's label, or -1 when `s` does not open a PEM block."""
    if not s.startswith("-----BEGIN "):
        return -1
    j = s.find("-----", 11)
    if j <= 11:
        return -1
    for c in s[11:j]:
        if not ("A" <= c <= "Z" or "0" <= c <= "9" or c == " "):
            return -1
    return j


def _pem_end(s: str) -> bool:
    j = _pem_label_end(s)
    # Anywhere after the BEGIN line: a key pasted with literal "\n" escapes stays one line.
    return j >= 0 and s.find("-----END " + s[11:j] + "-----", j + 5) >= 0


def _url_host(s: str) -> bool:
    i = s.find("://")
    if i < 0:
        return False
    rest = s[i + 3 :]
    end = len(rest)
    for c in "/?#":
        k = rest.find(c)
        if 0 <= k < end:
            end = k
    hostport = rest[rest.rfind("@", 0, end) + 1 : end]
    if hostport.startswith("["):
        close = hostport.find("]")
        host = hostport[1:close] if close > 0 else ""
    else:
        colon = hostport.find(":")
        host = hostport if colon < 0 else hostport[:colon]
    # libpq takes an empty host with ?host=/run/postgresql (a Unix socket).
    return host != "" or rest.find("host=", end) >= 0


_CODE: Final[dict[str, Callable[[str], bool]]] = {
    "json": lambda s: json_error(s) is None,
    "pem_begin": lambda s: _pem_label_end(s) >= 0,
    "pem_end": _pem_end,
    "url_host": _url_host,
}

CHECKS: Final[tuple[str, ...]] = (*PATTERNS, *_CODE)
"""Every check id a format rule may name."""


def passes(check: str, value: str) -> bool:
    """Whether `value` passes the named check."""
    code = _CODE.get(check)
    if code is not None:
        return code(value)
    return _regex(check).fullmatch(value) is not None


def detail(check: str, value: str) -> str | None:
    """What a failing check may add: a count or a position, never a piece of the value."""
    if check == "json":
        pos = json_error(value)
        return None if pos is None else f"it breaks at character {pos + 1}"
    if check == "jwt":
        parts = value.count(".") + 1
        if parts != 3:
            return f"it has {parts} part{'' if parts == 1 else 's'}"
    return None
