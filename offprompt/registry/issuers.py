"""Whose a value is, read from the prefixes the registry declares: what decides which values may
be sent to a provider to be checked (DESIGN §16, "only when the value is positively this
credential's").

The rule. Every prefix any credential's rules declare counts (inside `either` too, distinctive or
not, of any length: Vault's `s.`, a URL scheme), and a value is judged by the longest of them it
starts with:

- `own`: that prefix is one this credential declares as distinctive, and no credential of any
  other provider declares it. `sk-proj-…` is OpenAI's own, though DeepSeek's keys start with
  `sk-` too; `sk-ant-…` is Anthropic's, never OpenAI's; `sk_live_…` is nobody's own, since
  Stripe and Clerk both issue it, and `AIza…` neither, since Gemini, Firebase and Google Cloud do.
- `claimed`: it starts with a prefix the registry knows, and that prefix is not this
  credential's own (another provider's, one shared with another provider, another credential's
  of the same provider, or one that names nothing, such as `https://`).
- `unclaimed`: it starts with no prefix the registry knows.

A value may be sent only when it is `own`, or `unclaimed` for a credential with no distinctive
prefix at all (`distinctive` false: Mistral, Vercel, Cloudflare, a UUID) whose provider the
request named; that last part is the caller's to know (write/provider.py).
"""

from __future__ import annotations

from functools import cache
from typing import Literal, NamedTuple

from offprompt.registry import catalog
from offprompt.registry.model import Credential, Rule
from offprompt.registry.results import Field

Whose = Literal["own", "claimed", "unclaimed"]


class Declared(NamedTuple):
    """One credential that declares a prefix, and whether its rule calls it distinctive."""

    provider_id: str
    credential: str
    distinctive: bool


def _prefix_rules(credential: Credential) -> tuple[Rule, ...]:
    options = (o for r in credential.rules for o in (r.options if r.kind == "either" else (r,)))
    return tuple(r for r in options if r.kind == "prefix")


@cache
def _table() -> dict[str, tuple[Declared, ...]]:
    """Every declared prefix, and who declares it (formats declare none: they name no issuer)."""
    table: dict[str, dict[Declared, None]] = {}
    for p in catalog.PROVIDERS:
        for c in p.credentials:
            for rule in _prefix_rules(c):
                for pre in rule.prefixes:
                    table.setdefault(pre, {})[Declared(p.id, c.key, rule.distinctive)] = None
    return {pre: tuple(who) for pre, who in table.items()}


@cache
def _longest_first() -> tuple[str, ...]:
    return tuple(sorted(_table(), key=lambda pre: (-len(pre), pre)))


def longest_prefix(value: str) -> str | None:
    """The longest prefix the registry declares that `value` starts with, or None."""
    for pre in _longest_first():
        if value.startswith(pre):
            return pre
    return None


def declared(prefix: str) -> tuple[Declared, ...]:
    """Who declares `prefix` (none for a prefix the registry does not know)."""
    return _table().get(prefix, ())


def distinctive(field: Field) -> bool:
    """Whether `field`'s credential has a distinctive shape: a prefix its rules call distinctive.
    A bare format, an offered format (a Postgres URL) or a credential of length and characters
    only has none."""
    credential = _credential(field)
    return credential is not None and any(r.distinctive for r in _prefix_rules(credential))


def can_be_own(field: Field) -> bool:
    """Whether any value can be `own` for `field`: it has no distinctive prefix (then a value is
    judged by whether its provider was named), or one no other provider declares."""
    credential = _credential(field)
    if credential is None or not distinctive(field):
        return True
    return any(
        all(d.provider_id == field.provider_id for d in declared(pre))
        for rule in _prefix_rules(credential)
        if rule.distinctive
        for pre in rule.prefixes
    )


def whose(field: Field, value: str) -> Whose:
    """Whether `value` is positively `field`'s credential's by its prefix (`own`), carries a
    prefix the registry knows for anything else (`claimed`), or none it knows (`unclaimed`)."""
    pre = longest_prefix(value)
    if pre is None:
        return "unclaimed"
    owners = declared(pre)
    mine = Declared(field.provider_id or "", field.credential or "", True)
    if mine in owners and all(d.provider_id == field.provider_id for d in owners):
        return "own"
    return "claimed"


def _credential(field: Field) -> Credential | None:
    """The registry credential behind `field`; None for a bare or offered format."""
    p = catalog.provider(field.provider_id) if field.provider_id else None
    for c in p.credentials if p is not None else ():
        if c.key == field.credential:
            return c
    return None
