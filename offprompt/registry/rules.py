"""The rules engine: a field's rules against a value, one line per rule, and wrong-key hints.

web/rules.js is the same engine for the page; tests/unit/registry runs both on one table.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry import catalog, checks
from offprompt.registry.model import Rule
from offprompt.registry.results import CheckVerdict, Field, Line

_QUOTES: Final = frozenset("\"'`\u2018\u2019\u201c\u201d")


def check(field: Field | None, value: str) -> CheckVerdict:
    """Every rule of `field` against `value`; None (no provider, no format) accepts anything.

    Lines and hints hold rule texts, counts and registry prefixes only, never part of `value`.
    An empty value is the caller's to refuse ("Required"); here it just fails what it fails.
    """
    if field is None:
        return CheckVerdict(ok=True)
    lines = tuple(_line(rule, value) for rule in field.rules)
    ok = all(line.passed for line in lines)
    return CheckVerdict(ok=ok, lines=lines, hint=_hint(field, value))


def passes(rule: Rule, value: str) -> bool:
    """Whether `value` passes `rule`."""
    if rule.kind == "prefix":
        return any(value.startswith(p) for p in rule.prefixes)
    if rule.kind == "length":
        return rule.min <= len(value) <= rule.max
    if rule.kind == "charset":
        return _bad_char(rule, value) is None
    if rule.kind == "format":
        return checks.passes(rule.check, value)
    return any(passes(option, value) for option in rule.options)


def _line(rule: Rule, value: str) -> Line:
    if passes(rule, value):
        return Line(rule.id, rule.text, True)
    return Line(rule.id, rule.text, False, _detail(rule, value))


def _detail(rule: Rule, value: str) -> str | None:
    if rule.kind == "prefix":
        known = _recognised(value)
        return f"it starts with {known}" if known else None
    if rule.kind == "length":
        n = len(value)
        return f"it has {n} character{'' if n == 1 else 's'}"
    if rule.kind == "charset":
        bad = _bad_char(rule, value)
        return None if bad is None else _describe(bad)
    if rule.kind == "format":
        return checks.detail(rule.check, value)
    return None


def _bad_char(rule: Rule, value: str) -> int | None:
    for c in value:
        cp = ord(c)
        if not any(lo <= cp <= hi for lo, hi in rule.ranges):
            return cp
    return None


def _describe(cp: int) -> str:
    """The kind of a refused character; ASCII punctuation is named, letters and digits never."""
    c = chr(cp)
    if cp == 0x20:
        return "it has a space"
    if c in "\n\r\u2028\u2029":
        return "it has a line break"
    if cp == 0x09:
        return "it has a tab"
    if c in _QUOTES:
        return "it has a quote mark"
    if cp == 0x2026:
        return "it has an ellipsis (…), as in a placeholder"
    if cp < 0x20 or cp == 0x7F:
        return "it has a control character"
    if cp > 0x7F:
        return "it has a non-ASCII character"
    if c.isalnum():
        return "it has a letter or digit outside the allowed set"
    return f'it has "{c}"'


def _recognised(value: str) -> str | None:
    for known in catalog.known_prefixes():
        if value.startswith(known.prefix):
            return known.prefix
    return None


def looks_like(field: Field, value: str) -> catalog.Known | None:
    """The other credential `value` looks like, by its longest known prefix, when that tells
    one apart from `field`'s own: one of the same provider, or the only owner of the prefix."""
    if field.provider_id is None:
        return None
    best = _recognised(value)
    if best is None:
        return None
    owners = [k for k in catalog.known_prefixes() if k.prefix == best]
    if any(k.provider_id == field.provider_id and k.credential == field.credential for k in owners):
        return None
    same = [k for k in owners if k.provider_id == field.provider_id]
    if len(same) == 1:
        return same[0]
    if not same and len(owners) == 1:
        return owners[0]
    return None


def _hint(field: Field, value: str) -> str | None:
    """Names the credential `value` looks like when that is not `field`'s own.

    Set on a failing value, and on a passing one whose longest known prefix belongs to another
    credential (an Anthropic key starts with sk- too): advisory, it never blocks.
    """
    k = looks_like(field, value)
    if k is None:
        return None
    if k.provider_id == field.provider_id:
        if k.url == field.url:
            return (
                f"That's the {k.provider_name} {k.noun}; use the {field.noun} from the same page."
            )
        return f"That's the {k.provider_name} {k.noun}; this field needs the {field.noun}."
    return (
        f"That looks like the {k.provider_name} {k.noun}; "
        f"this field needs the {field.provider_name} {field.noun}."
    )
