"""The four-emoji fingerprint of a write (DESIGN §7) and the 64-entry table shared with the page.

Pure: HMAC-SHA256 over the supplied names and values under a per-submission key; no I/O.
"""

import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass

# Index order is part of the contract: the page receives this table as JSON, and a fingerprint
# shown in an old terminal must mean the same emoji later. Never reorder; never edit an entry.
# Every emoji is one code point that renders as emoji by default (no variation selector, no
# ZWJ, no skin tone), picked to look and sound unlike the others.
EMOJI: tuple[tuple[str, str], ...] = (
    ("\U0001f34b", "lemon"),
    ("\U0001f95d", "kiwi"),
    ("\U0001f32e", "taco"),
    ("\U0001f9c0", "cheese"),
    ("\U0001f34e", "apple"),
    ("\U0001f34c", "banana"),
    ("\U0001f347", "grapes"),
    ("\U0001f349", "watermelon"),
    ("\U0001f353", "strawberry"),
    ("\U0001f34d", "pineapple"),
    ("\U0001f965", "coconut"),
    ("\U0001f955", "carrot"),
    ("\U0001f33d", "corn"),
    ("\U0001f344", "mushroom"),
    ("\U0001f968", "pretzel"),
    ("\U0001f355", "pizza"),
    ("\U0001f354", "burger"),
    ("\U0001f369", "donut"),
    ("\U0001f352", "cherry"),
    ("\U0001f37f", "popcorn"),
    ("\U0001f382", "cake"),
    ("\U0001f419", "octopus"),
    ("\U0001f98a", "fox"),
    ("\U0001f422", "turtle"),
    ("\U0001f41d", "bee"),
    ("\U0001f98b", "butterfly"),
    ("\U0001f40c", "snail"),
    ("\U0001f427", "penguin"),
    ("\U0001f989", "owl"),
    ("\U0001f438", "frog"),
    ("\U0001f433", "whale"),
    ("\U0001f980", "crab"),
    ("\U0001f418", "elephant"),
    ("\U0001f992", "giraffe"),
    ("\U0001f43c", "panda"),
    ("\U0001f981", "lion"),
    ("\U0001f437", "pig"),
    ("\U0001f430", "rabbit"),
    ("\U0001f988", "shark"),
    ("\U0001f40d", "snake"),
    ("\U0001f984", "unicorn"),
    ("\U0001f986", "duck"),
    ("\U0001f41e", "ladybug"),
    ("\U0001f994", "hedgehog"),
    ("\U0001f99c", "parrot"),
    ("\U0001f680", "rocket"),
    ("\U0001f3b8", "guitar"),
    ("\U0001f388", "balloon"),
    ("\U0001f514", "bell"),
    ("\U0001f335", "cactus"),
    ("\U0001f33b", "sunflower"),
    ("\U0001f308", "rainbow"),
    ("\U0001f525", "fire"),
    ("\U0001f682", "train"),
    ("\U0001f340", "clover"),
    ("\U0001f3a9", "hat"),
    ("\U0001f6b2", "bicycle"),
    ("\U0001f48e", "gem"),
    ("\U0001f3b2", "dice"),
    ("\U0001f9f2", "magnet"),
    ("\U0001f52d", "telescope"),
    ("\U0001f381", "gift"),
    ("\U0001f3f0", "castle"),
    ("\U0001f941", "drum"),
)

_PREFIX = b"offprompt/fingerprint/v1\n"


@dataclass(frozen=True)
class Fingerprint:
    """Four indices into `EMOJI`; shown as the four emoji, space-separated."""

    indices: tuple[int, int, int, int]

    def __post_init__(self) -> None:
        if len(self.indices) != 4 or not all(0 <= i < len(EMOJI) for i in self.indices):
            raise ValueError("a fingerprint is four indices in 0..63")

    @property
    def emoji(self) -> tuple[str, ...]:
        return tuple(EMOJI[i][0] for i in self.indices)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(EMOJI[i][1] for i in self.indices)

    def __str__(self) -> str:
        return " ".join(self.emoji)


def message(pairs: Sequence[tuple[str, str]]) -> bytes:
    """The bytes the MAC covers: the v1 prefix and compact JSON of `[[name, value], ...]`."""
    text = json.dumps(
        [[name, value] for name, value in pairs], separators=(",", ":"), ensure_ascii=False
    )
    try:
        return _PREFIX + text.encode("utf-8")
    except UnicodeEncodeError:
        # No form or UTF-8 file yields a lone surrogate; refuse without quoting the value.
        raise ValueError("a value holds a lone surrogate, which has no UTF-8 form") from None


def fingerprint(fp_key: bytes, pairs: Sequence[tuple[str, str]]) -> Fingerprint:
    """The fingerprint of `(name, value)` pairs, in request order, under a 32-byte key."""
    if len(fp_key) != 32:
        raise ValueError("a fingerprint key is exactly 32 bytes")
    mac = hmac.new(fp_key, message(pairs), hashlib.sha256).digest()
    n = int.from_bytes(mac[:3], "big")
    return Fingerprint(((n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63))
