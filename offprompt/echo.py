"""One rule for every text shown beside a value: does it echo any part of one?

A text echoes a value when it holds any 4 characters running as they do in the value, in any
common encoding of it: as is, reversed, base64 (standard and url-safe, at each of the 3 byte
offsets, so any alignment of the value inside a longer encoded text), base32 (at each of its
5) and hex — after
whitespace, separators (``-_.:,;/|``) and zero-width characters are taken out of the text, and
case-insensitively (base64 alone is compared as it is: its case carries the bits).

Four characters of a random value are ~24 bits of it, and a program an agent can make fail again
and again would hand it the value in pieces of any length that gets through; three turn up in
ordinary words too often to mean anything. A text that shares four by chance is only withheld,
which costs a detail, never a value. A leaf: no import of the rest of offprompt.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable
from typing import Final

__all__ = ["WINDOW", "echoes"]

WINDOW: Final = 4
_DROP: Final = re.compile("[\\s\\-_.:,;/|\u200b\u200c\u200d\u2060\ufeff]+")


def _clean(text: str) -> str:
    return _DROP.sub("", text)


def _grams(text: str) -> set[str]:
    return {text[i : i + WINDOW] for i in range(len(text) - WINDOW + 1)}


def _inner(data: bytes, encode: Callable[[bytes], bytes], group: int, bits: int) -> Iterable[str]:
    """`data` encoded at each byte offset of the encoding's group (3 for base64, 5 for
    base32), less the characters that hold bytes around it (those of the first and last
    partial groups), so the stretches match wherever the value sits in a longer encoded text."""
    for offset in range(group):
        padded = b"\x00" * offset + data
        text = encode(padded).decode("ascii").rstrip("=")
        start = (offset * 8 + bits - 1) // bits
        stop = (len(padded) * 8) // bits
        yield text[start:stop]


def _encodings(value: str) -> tuple[set[str], set[str]]:
    """(case-insensitive forms casefolded, case-sensitive forms) of `value`, each cleaned."""
    data = value.encode("utf-8")
    folded = {
        _clean(value).casefold(),
        _clean(value)[::-1].casefold(),
        binascii.hexlify(data).decode("ascii"),
        *(part.casefold() for part in _inner(data, base64.b32encode, 5, 5)),
    }
    exact = {
        part
        for encode in (base64.b64encode, base64.urlsafe_b64encode)
        for part in _inner(data, encode, 3, 6)
    }
    return folded, exact


def echoes(text: str, values: Iterable[str]) -> bool:
    """Whether `text` holds any 4-character stretch of any of `values` in any encoding above."""
    line = _clean(text)
    if len(line) < WINDOW:
        return False
    folded_line, exact_line = _grams(line.casefold()), _grams(line)
    for value in values:
        if not value:
            continue
        folded, exact = _encodings(value)
        if any(folded_line & _grams(form) for form in folded):
            return True
        if any(exact_line & _grams(form) for form in exact):
            return True
    return False
