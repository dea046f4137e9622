"""Providers and formats as plain data, and the one rules engine the server and the page share.

Imports nothing else from offprompt. Importing it loads the data only (what the tool schema
needs at start-up); the engine (resolve, check, page_data) loads on first use of one of them.

Public API
----------
`format_ids() -> tuple[str, ...]`
    Every format id (`text`, `uuid`, `postgres_url`, …): the tool schema's `format` enum.
`provider_refs() -> tuple[str, ...]`
    Every ref: `stripe`, `stripe/secret_key`, …, and offered formats (`neon/postgres_url`):
    the tool schema's `provider` enum.
`provider(id) -> Provider | None`
    The provider with this id (a Field's `provider_id`); `Provider.hosts` are the exact API hosts
    its values are sent to (§15's `injectHosts`), never sent to the page.
`hosts_for(provider_ids) -> tuple[str, ...]`
    The hosts of several providers, each once, in order; an unknown id adds none.
`resolve(name, provider=None, format=None) -> Field | None`
    The Field a secret entry gets: from its provider ref, else its format, else its name alone
    (after stripping `NEXT_PUBLIC_`, `VITE_`, … when exactly one credential goes by it). None
    means plain text with no rules. Raises `UnknownRef` for a ref the registry lacks and
    `AmbiguousProvider(ref, choices)` for a bare provider ref the name does not narrow to one
    credential (`MY_KEY` + `stripe`); both are `RegistryError`, a ValueError whose message
    lists what to choose from and holds no value.
`check(field, value) -> CheckVerdict`
    `CheckVerdict.ok`, `.lines` (one `Line(rule_id, text, passed, detail)` per rule, `detail` a
    count or a known prefix, never part of the value), `.hint` (a wrong-key hint, also set on
    a passing value that looks like another credential's: advisory) and `.reasons` (failing
    lines as strings for an error list). `check(None, v)` is ok with no lines. Pass the value
    exactly as it will be written (nothing is trimmed); refusing an empty one is the caller's job,
    and so is skipping entries with `generate` (resolve them to None: their values are ours).
`whose(field, value) -> "own" | "claimed" | "unclaimed"`
    Whether `value` is positively `field`'s credential's by the longest registry prefix it
    starts with (`own`: one that credential declares as distinctive and no other provider
    declares), carries a prefix the registry knows for anything else (`claimed`), or none
    (`unclaimed`): what decides where a value may be sent to be checked (DESIGN §16).
`distinctive(field) -> bool`, `can_be_own(field) -> bool`
    Whether `field`'s credential has a distinctive prefix at all; whether any value can be
    `own` for it (not when every distinctive prefix it has is shared with another provider).
`page_data(fields: Mapping[str, Field | None]) -> dict`
    JSON-ready `{"fields": {NAME: field}, "hints": [...]}` for the page; web/rules.js's
    `offpromptCheck(data.fields[NAME], value, data.hints)` returns the same verdict as
    `check` as `{ok, lines: [{rule_id, text, passed, detail}], hint}`.
`field_json(field)`, `hint_table()`
    The two halves of `page_data`, for callers that inject them separately.

Data: `PROVIDERS`, `FORMATS`, `CATEGORIES`; types `Provider`, `Credential`, `Offer`, `Format`,
`Rule`, `Field`, `Line`, `CheckVerdict`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

from offprompt.registry.catalog import PROVIDERS, format_ids, hosts_for, provider, provider_refs
from offprompt.registry.formats import FORMATS
from offprompt.registry.model import CATEGORIES, Credential, Format, Offer, Provider, Rule

if TYPE_CHECKING:
    from offprompt.registry.export import field_json, hint_table, page_data
    from offprompt.registry.issuers import can_be_own, distinctive, whose
    from offprompt.registry.resolution import AmbiguousProvider, RegistryError, UnknownRef, resolve
    from offprompt.registry.results import CheckVerdict, Field, Line
    from offprompt.registry.rules import check

# Loaded on first access: `offprompt serve` answers `initialize` before anything resolves.
_LAZY: Final[dict[str, str]] = {
    "AmbiguousProvider": "resolution",
    "RegistryError": "resolution",
    "UnknownRef": "resolution",
    "resolve": "resolution",
    "Field": "results",
    "Line": "results",
    "CheckVerdict": "results",
    "check": "rules",
    "can_be_own": "issuers",
    "distinctive": "issuers",
    "whose": "issuers",
    "field_json": "export",
    "hint_table": "export",
    "page_data": "export",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CATEGORIES",
    "FORMATS",
    "PROVIDERS",
    "AmbiguousProvider",
    "CheckVerdict",
    "Credential",
    "Field",
    "Format",
    "Line",
    "Offer",
    "Provider",
    "RegistryError",
    "Rule",
    "UnknownRef",
    "can_be_own",
    "check",
    "distinctive",
    "field_json",
    "format_ids",
    "hint_table",
    "hosts_for",
    "page_data",
    "provider",
    "provider_refs",
    "resolve",
    "whose",
]
