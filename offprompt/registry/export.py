"""What the page's script needs from the registry, as JSON-ready dicts and lists.

The page server injects `page_data(...)` as JSON; web/rules.js reads exactly these keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from offprompt.registry import catalog, checks
from offprompt.registry.model import Rule
from offprompt.registry.results import Field


def rule_json(rule: Rule) -> dict[str, Any]:
    """One rule: `id`, `kind`, `text`, and the parameters its kind uses."""
    out: dict[str, Any] = {"id": rule.id, "kind": rule.kind, "text": rule.text}
    if rule.kind == "prefix":
        out["prefixes"] = list(rule.prefixes)
    elif rule.kind == "length":
        out["min"] = rule.min
        out["max"] = rule.max
    elif rule.kind == "charset":
        out["ranges"] = [[lo, hi] for lo, hi in rule.ranges]
    elif rule.kind == "format":
        out["check"] = rule.check
        if rule.check in checks.PATTERNS:
            out["pattern"] = checks.PATTERNS[rule.check]
    else:
        out["options"] = [rule_json(option) for option in rule.options]
    return out


def field_json(field: Field) -> dict[str, Any]:
    """One field: what the page shows (label, provider, link, placeholder) and its rules."""
    return {
        "ref": field.ref,
        "provider": field.provider_id,
        "provider_name": field.provider_name,
        "credential": field.credential,
        "label": field.label,
        "noun": field.noun,
        "url": field.url,
        "placeholder": field.placeholder,
        "secret": field.secret,
        "multiline": field.multiline,
        "format": field.format,
        "rules": [rule_json(rule) for rule in field.rules],
    }


def hint_table() -> list[list[str]]:
    """Known prefixes, longest first: `[prefix, provider, credential, provider_name, noun, url]`."""
    return [
        [k.prefix, k.provider_id, k.credential, k.provider_name, k.noun, k.url]
        for k in catalog.known_prefixes()
    ]


def page_data(fields: Mapping[str, Field | None]) -> dict[str, Any]:
    """Everything the page's checks need: `{"fields": {NAME: field or null}, "hints": [...]}`."""
    return {
        "fields": {name: None if f is None else field_json(f) for name, f in fields.items()},
        "hints": hint_table(),
    }
