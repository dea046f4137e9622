"""The page's colours meet WCAG AA in light and dark themes (read from web/page.css itself)."""

import re
from pathlib import Path

import pytest

CSS = (Path(__file__).resolve().parents[2] / "web" / "page.css").read_text()
# (text, background, minimum): body text 4.5:1, field and button edges 3:1 (WCAG 1.4.11).
PAIRS = [
    *(
        (fg, bg, 4.5)
        for fg in ("text", "muted", "accent", "bad", "good", "advice")
        for bg in ("card", "field", "bg")
    ),
    ("bad", "bad-bg", 4.5),
    ("good", "good-bg", 4.5),
    ("warn-text", "warn-bg", 4.5),
    ("accent-text", "accent", 4.5),
    ("edge", "card", 3.0),
    ("edge", "field", 3.0),
]


def palette(block: str) -> dict[str, str]:
    return dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-f]{6});", block))


def themes() -> dict[str, dict[str, str]]:
    light = palette(CSS.split("@media (prefers-color-scheme: dark)")[0])
    dark_block = re.search(r"@media \(prefers-color-scheme: dark\) \{(.*?)\n\}", CSS, re.DOTALL)
    assert dark_block is not None
    return {"light": light, "dark": {**light, **palette(dark_block.group(1))}}


def luminance(colour: str) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def ratio(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_text_and_edges_meet_aa(theme: str) -> None:
    """Every text colour on every background it sits on, and field edges, meet AA."""
    colours = themes()[theme]
    low = [
        (fg, bg, round(ratio(colours[fg], colours[bg]), 2))
        for fg, bg, minimum in PAIRS
        if ratio(colours[fg], colours[bg]) < minimum
    ]
    assert low == []


def test_provider_tiles_keep_white_letters_readable() -> None:
    """Each tile colour holds its white initials at 4.5:1 or more."""
    tiles = re.findall(r"\.t[0-7] \{ background: (#[0-9a-f]{6}); \}", CSS)
    assert len(tiles) == 8
    assert [t for t in tiles if ratio(t, "#ffffff") < 4.5] == []
