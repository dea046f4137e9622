"""Short builders the data modules use to write rules, credentials and providers compactly.

Each builder fills in the line the person reads; pass `text=` where a hand-written one is clearer.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry.model import Category, Check, Credential, Offer, Provider, Rule

Ranges = tuple[tuple[int, int], ...]

# Printable ASCII without space, quotes or backtick: no API key holds those, and a pasted key
# that does (from JSON, a shell line, a placeholder's "…") is the mistake worth catching.
TOKEN_RANGES: Final[Ranges] = ((0x21, 0x21), (0x23, 0x26), (0x28, 0x5F), (0x61, 0x7E))
ALNUM_RANGES: Final[Ranges] = ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A))
B64URL_RANGES: Final[Ranges] = ((0x2D, 0x2D), *ALNUM_RANGES, (0x5F, 0x5F))
HEX_RANGES: Final[Ranges] = ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))
# Anything but blanks and control characters: user-made values (URLs with passwords).
NO_BLANK_RANGES: Final[Ranges] = ((0x21, 0x7E), (0x80, 0x10FFFF))

MAX_LEN: Final = 16384
"""The submitter's own limit (16 KiB): "at least N characters" rules stop there."""


def _either_words(words: tuple[str, ...]) -> str:
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def prefix(*prefixes: str, text: str = "", distinctive: bool = True) -> Rule:
    """Starts with one of `prefixes` (case-sensitive)."""
    return Rule(
        "prefix",
        text or "starts with " + _either_words(prefixes),
        prefixes=prefixes,
        distinctive=distinctive,
    )


def scheme(*schemes: str, text: str = "") -> Rule:
    """A URL scheme prefix: true of every URL of its kind, so it never names a credential."""
    return prefix(*schemes, text=text, distinctive=False)


def length(lo: int, hi: int = MAX_LEN, *, text: str = "") -> Rule:
    """Between `lo` and `hi` characters, counted as code points."""
    if not text:
        if lo == hi:
            text = f"exactly {lo} characters"
        elif hi >= MAX_LEN:
            text = f"at least {lo} characters"
        else:
            text = f"{lo} to {hi} characters"
    return Rule("length", text, min=lo, max=hi)


def chars(ranges: Ranges, text: str) -> Rule:
    """Every character in one of `ranges`."""
    return Rule("charset", text, ranges=ranges)


TOKEN: Final = chars(TOKEN_RANGES, "no spaces, quotes or non-ASCII characters")
ALNUM: Final = chars(ALNUM_RANGES, "letters and digits only")
B64URL: Final = chars(B64URL_RANGES, "letters, digits, - and _ only")
HEX: Final = chars(HEX_RANGES, "hex digits only (0-9, a-f)")
NO_BLANK: Final = chars(NO_BLANK_RANGES, "no spaces or line breaks")


def fmt(check: str, text: str) -> Rule:
    """Passes the named format check (checks.py, mirrored in web/rules.js)."""
    return Rule("format", text, check=check)


def either(*options: Rule, text: str) -> Rule:
    """Passes when any of `options` (not themselves `either`) passes."""
    return Rule("either", text, options=options)


def fill(start: str, total: int, filler: str = "EXAMPLE0") -> str:
    """A fake example: `start`, then `filler` repeated up to `total` characters.

    Low-entropy on purpose, so no secret scanner takes the registry for a leak.
    """
    body = filler * (total // max(len(filler), 1) + 1)
    return (start + body)[:total]


def cred(
    key: str,
    label: str,
    names: str,
    url: str,
    placeholder: str,
    example: str,
    *rules: Rule,
    secret: bool = True,
    format: str = "text",
    check: Check | None = None,
) -> Credential:
    """A credential; `names` is space-separated (the conventional env names, unprefixed);
    `check` how its provider is asked whether a value works (`ask`)."""
    return Credential(
        key=key,
        label=label,
        env_names=tuple(names.split()),
        url=url,
        placeholder=placeholder,
        example=example,
        rules=rules,
        secret=secret,
        format=format,
        check=check,
    )


def ask(
    url: str,
    doc: str,
    *,
    auth: str = "bearer",
    account: str = "",
    rejected: tuple[int, ...] = (401, 403),
    accepted: tuple[int, ...] = (),
    ok_field: str = "",
    headers: tuple[tuple[str, str], ...] = (),
    body: str = "",
    user: str = "",
    user_from: str = "",
) -> Check:
    """A provider check (DESIGN §16) of `url` (`https://host/path`), as `doc` documents it."""
    if not url.startswith("https://"):
        raise ValueError(f"a check goes over HTTPS: {url}")
    host, _, path = url.removeprefix("https://").partition("/")
    return Check(
        host=host,
        path="/" + path,
        doc=doc,
        auth=auth,
        account=account,
        rejected=rejected,
        accepted=accepted,
        ok_field=ok_field,
        headers=headers,
        body=body,
        user=user,
        user_from=user_from,
    )


def offer(format: str, url: str, names: str = "", label: str = "") -> Offer:
    """A format the provider hands out; `names` are space-separated env names for it."""
    return Offer(format=format, url=url, env_names=tuple(names.split()), label=label)


def provider(
    id: str,
    name: str,
    category: Category,
    domains: str,
    *credentials: Credential,
    hosts: str,
    offers: tuple[Offer, ...] = (),
) -> Provider:
    """A provider; `domains` is space-separated (links must be on one of them or a subdomain).

    `hosts` (space-separated, exact API hosts its values are sent to) is required, so no provider
    is left without one by omission: `""` says none is fixed, with a comment saying why.
    """
    return Provider(
        id=id,
        name=name,
        category=category,
        domains=tuple(domains.split()),
        credentials=credentials,
        offers=offers,
        hosts=tuple(hosts.split()),
    )
