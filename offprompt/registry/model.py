"""The registry's data types: rules, formats, credentials, offers, providers and categories.

NamedTuples, not dataclasses: `offprompt serve` defines them at start-up for the tool schema,
and a NamedTuple class costs a tenth of a frozen dataclass to define.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

RuleKind = Literal["prefix", "length", "charset", "format", "either"]
Category = Literal[
    "ai", "payments", "messaging", "data", "auth", "cloud", "observability", "secrets"
]

CATEGORIES: Final[dict[Category, str]] = {
    "ai": "AI",
    "payments": "Payments",
    "messaging": "Email and messaging",
    "data": "Data and storage",
    "auth": "Auth",
    "cloud": "Cloud and developer tools",
    "observability": "Observability and product",
    "secrets": "Secret stores",
}


class Rule(NamedTuple):
    """One loose check with the line the person reads next to the field.

    `prefix`: starts with one of `prefixes`. `length`: `min`..`max` characters (code points).
    `charset`: every character falls in one of `ranges` (inclusive code point pairs).
    `format`: the named `check` (see checks.py). `either`: at least one of `options` passes.
    `distinctive` says whether the prefixes identify the credential (used by wrong-key hints);
    generic ones such as `https://` do not.
    """

    kind: RuleKind
    text: str
    prefixes: tuple[str, ...] = ()
    min: int = 0
    max: int = 0
    ranges: tuple[tuple[int, int], ...] = ()
    check: str = ""
    options: tuple[Rule, ...] = ()
    distinctive: bool = True

    @property
    def id(self) -> str:
        """Stable within a field: the kind, or `format:<check>` for format rules."""
        return f"format:{self.check}" if self.kind == "format" else self.kind


class Format(NamedTuple):
    """A kind of value with no provider behind it (a UUID, a PEM block, a Postgres URL)."""

    id: str
    label: str
    rules: tuple[Rule, ...] = ()
    placeholder: str = ""
    example: str = ""
    multiline: bool = False


class Check(NamedTuple):
    """How offprompt asks the provider whether a value works (DESIGN §16), from its API reference.

    One request to `https://{host}{path}` (`host` one of the provider's `hosts`): a GET, or a POST
    of the fixed JSON `body` (a read-only GraphQL query), with `headers` and the value placed by
    `auth`: `bearer` (`Authorization: Bearer <value>`), `basic` (HTTP basic auth: `user` as the
    user name and the value as the password; with `user_from`, the user name is the value of
    that credential of the same provider submitted beside it, else the check is skipped; with
    neither, the value is the user name and the password is empty) or `header:<Name>` (the
    value alone in that header).

    A 2xx answer is `ok` unless its JSON `ok_field` is false; a status in `rejected` is
    `rejected`, one in `accepted` proves the key as 2xx would (a send-only key refused a
    listing); anything else is `unreachable`. `account` names the field that says whose key it
    is: `json:a.b.0.c` (a path into the JSON answer) or `header:<name>`. `doc` is the page of the
    provider's API reference all of this comes from.
    """

    host: str
    path: str
    doc: str
    auth: str = "bearer"
    account: str = ""
    rejected: tuple[int, ...] = (401, 403)
    accepted: tuple[int, ...] = ()
    ok_field: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""
    user: str = ""
    user_from: str = ""


class Credential(NamedTuple):
    """One value a provider issues, as projects name it and where the person makes it.

    `check`: how the provider is asked whether a value works (DESIGN §16), or None."""

    key: str
    label: str
    env_names: tuple[str, ...]
    url: str
    placeholder: str
    example: str = ""
    rules: tuple[Rule, ...] = ()
    secret: bool = True
    format: str = "text"
    check: Check | None = None


class Offer(NamedTuple):
    """A format a provider hands out (a Postgres database), with the page that shows it.

    `env_names` only disambiguate within the provider: many providers offer `DATABASE_URL`.
    """

    format: str
    url: str
    env_names: tuple[str, ...] = ()
    label: str = ""


class Provider(NamedTuple):
    """A service, the domains its links may point to, and the credentials it issues.

    `hosts` are the exact API hosts its values are sent to (the mask's `injectHosts`, §15): fixed
    hosts only, so a provider whose every API lives on a per-account host has none. Server-side
    only: the page never gets them.
    """

    id: str
    name: str
    category: Category
    domains: tuple[str, ...]
    credentials: tuple[Credential, ...]
    offers: tuple[Offer, ...] = ()
    hosts: tuple[str, ...] = ()
