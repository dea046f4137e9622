"""Which Field a secret entry gets: from its provider ref, its format, or its name alone.

Also the registry's errors, raised for refs the registry does not know or cannot decide.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry import catalog
from offprompt.registry.model import Credential, Format, Offer, Provider
from offprompt.registry.results import Field

FRAMEWORK_PREFIXES: Final[tuple[str, ...]] = (
    "NEXT_PUBLIC_",
    "EXPO_PUBLIC_",
    "NUXT_PUBLIC_",
    "NX_PUBLIC_",
    "PLASMO_PUBLIC_",
    "REACT_APP_",
    "VUE_APP_",
    "NG_APP_",
    "REDWOOD_ENV_",
    "SANITY_STUDIO_",
    "STORYBOOK_",
    "GATSBY_",
    "VITE_",
    "NUXT_",
    "PUBLIC_",
)
"""Prefixes frameworks require to expose a variable to the browser or the build, longest first
within each family; stripped (repeatedly) before a name is looked up."""


class RegistryError(ValueError):
    """A provider or format ref the registry cannot turn into a field.

    Outside the error root on purpose: the registry imports nothing of offprompt (DESIGN §2);
    the tools layer turns it into a RefusedRequest, the page into plain text.
    """


class UnknownRef(RegistryError):
    """The ref names no provider, credential or format the registry has."""

    def __init__(self, ref: str) -> None:
        super().__init__(f"unknown provider or format {ref!r}")
        self.ref = ref


class AmbiguousProvider(RegistryError):
    """A bare provider ref with several credentials, and a name that picks none of them."""

    def __init__(self, ref: str, choices: tuple[str, ...]) -> None:
        super().__init__(
            f"provider {ref!r} has several credentials; name one of: {', '.join(choices)}"
        )
        self.ref = ref
        self.choices = choices


def name_candidates(name: str) -> tuple[str, ...]:
    """`name`, then `name` without each framework prefix in turn (NEXT_PUBLIC_X → X)."""
    out = [name]
    current = name
    while True:
        for pre in FRAMEWORK_PREFIXES:
            rest = current[len(pre) :]
            if current.startswith(pre) and rest[:1].isalpha():
                out.append(rest)
                current = rest
                break
        else:
            return tuple(out)


def credential_field(p: Provider, c: Credential) -> Field:
    """The field of one credential."""
    f = catalog.format(c.format)
    return Field(
        ref=f"{p.id}/{c.key}",
        provider_id=p.id,
        provider_name=p.name,
        credential=c.key,
        label=c.label,
        noun=catalog.noun(c.label),
        url=c.url,
        placeholder=c.placeholder,
        secret=c.secret,
        multiline=f.multiline if f is not None else False,
        rules=c.rules,
        format=c.format,
    )


def offer_field(p: Provider, o: Offer) -> Field:
    """The field of a format a provider offers (a Neon Postgres URL)."""
    f = catalog.format(o.format)
    if f is None:  # the data self-tests rule this out
        raise UnknownRef(f"{p.id}/{o.format}")
    label = o.label or f.label
    return Field(
        ref=f"{p.id}/{o.format}",
        provider_id=p.id,
        provider_name=p.name,
        credential=o.format,
        label=label,
        noun=catalog.noun(label),
        url=o.url,
        placeholder=f.placeholder,
        secret=True,
        multiline=f.multiline,
        rules=f.rules,
        format=f.id,
    )


def format_field(f: Format) -> Field:
    """The field of a bare format: its rules, no provider and no link."""
    return Field(
        ref=f.id,
        provider_id=None,
        provider_name=None,
        credential=None,
        label=f.label,
        noun=catalog.noun(f.label),
        url=None,
        placeholder=f.placeholder,
        secret=True,
        multiline=f.multiline,
        rules=f.rules,
        format=f.id,
    )


def resolve(name: str, provider: str | None = None, format: str | None = None) -> Field | None:
    """The Field for a secret entry, or None for plain text with no rules.

    An explicit `provider` ref wins, then `format`, then `name` alone (after framework prefixes
    are stripped) when exactly one credential goes by it. Raises UnknownRef for a ref the
    registry lacks, AmbiguousProvider for a bare provider the name does not narrow to one.
    """
    if provider is not None:
        return _from_provider(name, provider, format)
    if format is not None:
        f = catalog.format(format)
        if f is None:
            raise UnknownRef(format)
        return format_field(f)
    for candidate in name_candidates(name):
        found = catalog.by_env_name(candidate)
        if found is not None:
            return credential_field(*found)
    return None


def _from_provider(name: str, ref: str, format: str | None) -> Field:
    pid, slash, key = ref.partition("/")
    p = catalog.provider(pid)
    if p is None:
        raise UnknownRef(ref)
    if slash:
        for c in p.credentials:
            if c.key == key:
                return credential_field(p, c)
        for o in p.offers:
            if o.format == key:
                return offer_field(p, o)
        raise UnknownRef(ref)
    for o in p.offers:
        if o.format == format:
            return offer_field(p, o)
    picked = _pick(p, name_candidates(name))
    if picked is not None:
        return picked
    choices = (
        *(credential_field(p, c) for c in p.credentials),
        *(offer_field(p, o) for o in p.offers),
    )
    if len(choices) == 1:
        return choices[0]
    raise AmbiguousProvider(ref, tuple(f.ref for f in choices))


def _pick(p: Provider, candidates: tuple[str, ...]) -> Field | None:
    """The one credential or offer of `p` the name points at, from the surest match down."""
    entries: list[tuple[Field, tuple[str, ...], str]] = [
        (credential_field(p, c), c.env_names, c.key) for c in p.credentials
    ]
    entries += [(offer_field(p, o), o.env_names, o.format) for o in p.offers]
    # 1. The name is one the entry goes by.
    for candidate in candidates:
        hits = [f for f, names, _ in entries if candidate in names]
        if len(hits) == 1:
            return hits[0]
    words = [tuple(w for w in candidate.split("_") if w) for candidate in candidates]
    # 2. The name holds one of those names: PROD_STRIPE_SECRET_KEY, STRIPE_SECRET_KEY_LIVE.
    hits = [
        f
        for f, names, _ in entries
        if any(_holds(ws, tuple(n.split("_"))) for ws in words for n in names)
    ]
    if len(hits) == 1:
        return hits[0]
    # 3. The name holds every word of the entry's key: MY_WEBHOOK_SECRET → webhook_secret.
    hits = [
        f for f, _, key in entries if any(set(key.upper().split("_")) <= set(ws) for ws in words)
    ]
    return hits[0] if len(hits) == 1 else None


def _holds(words: tuple[str, ...], part: tuple[str, ...]) -> bool:
    n = len(part)
    return any(words[i : i + n] == part for i in range(len(words) - n + 1))
