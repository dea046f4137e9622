"""One 4-character rule for every text shown beside a value (offprompt.echo), and a program's
output line withheld by it (DESIGN §13)."""

from __future__ import annotations

import base64
import binascii

import pytest

from offprompt.echo import echoes
from offprompt.sinks.destinations.runner import last_line

WITHHELD = "(its last line quoted part of a value, so it is not shown)"


def _encodings(canary: str) -> dict[str, str]:
    """Each common encoding of a stretch of the canary, as a program could print it."""
    part = canary[-9:]
    data = part.encode()
    out = {
        "reversed": part[::-1],
        "lower": part.lower(),
        "base32": base64.b32encode(data).decode(),
        "hex": binascii.hexlify(data).decode(),
        "HEX": binascii.hexlify(data).decode().upper(),
        "spaced": " ".join(part),
        "separated": "-".join(part[:3]) + "_" + ".".join(part[3:6]) + ":,;/|" + part[6:],
        "zero-width": "\u200b".join(part[:3])
        + "\u200c\u200d"
        + "\u2060".join(part[3:6])
        + "\ufeff"
        + part[6:],
    }
    for prefix in ("", "x", "xy"):
        whole = (prefix + part).encode()
        out[f"base64 at {len(prefix)}"] = base64.b64encode(whole).decode()
        out[f"urlsafe base64 at {len(prefix)}"] = base64.urlsafe_b64encode(whole).decode()
    return out


@pytest.mark.parametrize(
    "form",
    ["reversed", "lower", "base32", "hex", "HEX", "spaced", "separated", "zero-width",
     "base64 at 0", "base64 at 1", "base64 at 2",
     "urlsafe base64 at 0", "urlsafe base64 at 1", "urlsafe base64 at 2"],
)  # fmt: skip
def test_every_encoding_of_a_value_is_withheld(canary: str, form: str) -> None:
    shown = _encodings(canary)[form]
    line = f"Error: the token {shown} was refused".encode()
    assert echoes(line.decode(), [canary])
    assert last_line(line, [canary]) == WITHHELD


def test_base64_inside_a_longer_text_is_found_at_any_alignment(canary: str) -> None:
    for before in ("", "a", "ab", "abc"):
        encoded = base64.b64encode((before + canary + "tail").encode()).decode()
        assert echoes(encoded[len(before) * 2 :], [canary]), before


def test_a_line_sharing_only_three_characters_passes(canary: str) -> None:
    part = canary[-3:]
    line = f"Error = {part} = {part[::-1]} = {' '.join(part)}"
    assert not echoes(line, [canary])
    assert last_line(line.encode(), [canary]) == line


def test_an_ordinary_line_passes(canary: str) -> None:
    line = "✓ Added Environment Variable STRIPE_KEY to Project web [120ms]"
    assert not echoes(line, [canary])
    assert last_line(line.encode(), [canary]) == line


def test_a_short_text_or_value_is_no_echo() -> None:
    assert not echoes("abc", ["abcdef"])
    assert not echoes("anything at all", [""])
