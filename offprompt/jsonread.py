"""`json.loads` without importing `json` (issue 45: its decoder loads `re`, and the two cost the
hook milliseconds on every tool call): the same C scanner `json.loads` uses, `_json`'s, with
json's defaults, and the same checks around it. A document it cannot read makes `_json` load
`json.decoder` for its error, a `json.JSONDecodeError` as `json.loads` raises.
"""

from __future__ import annotations

import _json

__all__ = ["loads"]

# The whitespace json's decoder skips before and after the document.
_SPACE = " \t\n\r"
# json reads these words as numbers (not JSON, but what `json.loads` gives).
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Context:
    """What `_json.make_scanner` reads off a `json.JSONDecoder()`: its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


# typeshed knows only a JSONDecoder as the scanner's context; it reads these six names off it.
_scan = _json.make_scanner(_Context())  # type: ignore[arg-type]


def _encoding(b: bytes | bytearray) -> str:
    """json.detect_encoding: the encoding of a JSON document in bytes (RFC 4627 §3)."""
    if b.startswith((b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00")):
        return "utf-32"
    if b.startswith((b"\xfe\xff", b"\xff\xfe")):
        return "utf-16"
    if b.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if len(b) >= 4:
        if not b[0]:
            return "utf-16-be" if b[1] else "utf-32-be"
        if not b[1]:
            return "utf-16-le" if b[2] or b[3] else "utf-32-le"
    elif len(b) == 2:
        if not b[0]:
            return "utf-16-be"
        if not b[1]:
            return "utf-16-le"
    return "utf-8"


def _error(why: str, s: str, at: int) -> Exception:
    from json import JSONDecodeError

    return JSONDecodeError(why, s, at)


def loads(s: str | bytes | bytearray) -> object:
    """`json.loads(s)`: the same value, or the same error."""
    if isinstance(s, str):
        if s.startswith("\ufeff"):
            raise _error("Unexpected UTF-8 BOM (decode using utf-8-sig)", s, 0)
    elif isinstance(s, bytes | bytearray):
        s = s.decode(_encoding(s), "surrogatepass")
    else:
        raise TypeError(
            f"the JSON object must be str, bytes or bytearray, not {s.__class__.__name__}"
        )
    start = len(s) - len(s.lstrip(_SPACE))
    try:
        value, end = _scan(s, start)
    except StopIteration as err:
        raise _error("Expecting value", s, err.value) from None
    if end != len(s) and s[end:].strip(_SPACE):
        raise _error("Extra data", s, end + len(s[end:]) - len(s[end:].lstrip(_SPACE)))
    return value
