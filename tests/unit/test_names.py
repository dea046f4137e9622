"""The key-name rule (DESIGN §3.1) is said once, in offprompt.names, and means what it says."""

from pathlib import Path

import pytest

from offprompt import names

PACKAGE = Path(__file__).resolve().parents[2] / "offprompt"


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("STRIPE_SECRET_KEY", True),
        ("A", True),
        ("K2_", True),
        ("A" * 128, True),
        ("A" * 129, False),
        ("stripe_key", False),
        ("_KEY", False),
        ("2KEY", False),
        ("KEY-NAME", False),
        ("KEY\n", False),
        ("", False),
        ("KÉY", False),
    ],
)
def test_a_key_name_is_capitals_digits_and_underscores_up_to_128(text: str, ok: bool) -> None:
    """The one-match form and the pattern with its length say the same of every name."""
    assert ok is names.is_name(text)
    by_parts = len(text) <= names.MAX_NAME_LENGTH and names.NAME.fullmatch(text) is not None
    assert ok is by_parts


def test_the_rule_is_written_in_one_module_only() -> None:
    """No other module of the package spells the pattern out (the generated tool listing holds
    it as data): a second copy could drift from the first."""
    spelled = [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "[A-Z][A-Z0-9_]" in path.read_text(encoding="utf-8")
    ]
    assert ["names.py"] == spelled
