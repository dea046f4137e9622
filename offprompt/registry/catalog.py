"""Every provider and format in one tuple each, and the lookups derived from them.

Lookups (by id, by env name, known prefixes) are built on first use, never at import.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Final, NamedTuple

from offprompt.registry import (
    data_ai,
    data_auth,
    data_cloud,
    data_messaging,
    data_observability,
    data_payments,
    data_secrets,
    data_storage,
)
from offprompt.registry.formats import FORMATS
from offprompt.registry.model import Credential, Format, Provider

PROVIDERS: Final[tuple[Provider, ...]] = (
    *data_ai.PROVIDERS,
    *data_payments.PROVIDERS,
    *data_messaging.PROVIDERS,
    *data_storage.PROVIDERS,
    *data_auth.PROVIDERS,
    *data_cloud.PROVIDERS,
    *data_observability.PROVIDERS,
    *data_secrets.PROVIDERS,
)

MIN_HINT_PREFIX: Final = 3
"""Shorter prefixes (Vault's `s.`) are too common to name a credential by."""


class Known(NamedTuple):
    """A distinctive prefix and the credential it belongs to, for wrong-key hints."""

    prefix: str
    provider_id: str
    credential: str
    provider_name: str
    noun: str
    url: str


# Product names that open a label and keep their capital mid-sentence.
_PROPER: Final = frozenset(
    {"Connect", "Content", "R2", "Redis", "Services", "Spaces", "Storefront"}
)


def noun(label: str) -> str:
    """`label` as it reads mid-sentence: "Secret key" → "secret key", "API key" unchanged."""
    first = label.split(" ", 1)[0]
    if first not in _PROPER and first[1:] == first[1:].lower():
        return label[:1].lower() + label[1:]
    return label


def format_ids() -> tuple[str, ...]:
    """Every format id, for the tool schema's `format` enum."""
    return tuple(f.id for f in FORMATS)


def provider_refs() -> tuple[str, ...]:
    """Every provider ref, `provider` and `provider/credential`, for the tool schema's enum.

    A provider's offered formats are refs too: `neon/postgres_url`.
    """
    refs: list[str] = []
    for p in PROVIDERS:
        refs.append(p.id)
        refs += [f"{p.id}/{c.key}" for c in p.credentials]
        refs += [f"{p.id}/{o.format}" for o in p.offers]
    return tuple(refs)


@cache
def _providers() -> dict[str, Provider]:
    return {p.id: p for p in PROVIDERS}


@cache
def _formats() -> dict[str, Format]:
    return {f.id: f for f in FORMATS}


@cache
def _names() -> dict[str, tuple[Provider, Credential]]:
    table: dict[str, tuple[Provider, Credential]] = {}
    for p in PROVIDERS:
        for c in p.credentials:
            for env in c.env_names:
                table.setdefault(env, (p, c))
    return table


def provider(provider_id: str) -> Provider | None:
    """The provider with this id."""
    return _providers().get(provider_id)


def hosts_for(provider_ids: Iterable[str]) -> tuple[str, ...]:
    """The API hosts of these providers, each once, in order; an unknown id adds none."""
    hosts: dict[str, None] = {}
    for provider_id in provider_ids:
        found = _providers().get(provider_id)
        hosts.update(dict.fromkeys(found.hosts if found else ()))
    return tuple(hosts)


def format(format_id: str) -> Format | None:
    """The format with this id."""
    return _formats().get(format_id)


def by_env_name(name: str) -> tuple[Provider, Credential] | None:
    """The one credential conventionally stored under `name` (names are unique, tested)."""
    return _names().get(name)


@cache
def known_prefixes() -> tuple[Known, ...]:
    """Every distinctive credential prefix, longest first, for wrong-key hints."""
    known: dict[tuple[str, str, str], Known] = {}
    for p in PROVIDERS:
        for c in p.credentials:
            rules = [o for r in c.rules for o in (r.options if r.kind == "either" else (r,))]
            for r in rules:
                if r.kind != "prefix" or not r.distinctive:
                    continue
                for pre in r.prefixes:
                    if len(pre) >= MIN_HINT_PREFIX:
                        known[(pre, p.id, c.key)] = Known(
                            pre, p.id, c.key, p.name, noun(c.label), c.url
                        )
    return tuple(sorted(known.values(), key=lambda k: (-len(k.prefix), k.prefix)))
