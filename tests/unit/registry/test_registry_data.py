"""Self-tests of the registry's data: counts, names, links, examples, formats and rule shapes."""

import re
from urllib.parse import urlsplit

import pytest

from offprompt.registry import CATEGORIES, FORMATS, PROVIDERS, check, format_ids, provider_refs
from offprompt.registry.checks import CHECKS
from offprompt.registry.model import Credential, Format, Provider, Rule
from offprompt.registry.resolution import FRAMEWORK_PREFIXES, credential_field, format_field

CREDENTIALS: list[tuple[Provider, Credential]] = [(p, c) for p in PROVIDERS for c in p.credentials]
ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def cred_id(pc: tuple[Provider, Credential]) -> str:
    """`provider/credential`, for test ids."""
    return f"{pc[0].id}/{pc[1].key}"


def all_rules(rules: tuple[Rule, ...]) -> list[Rule]:
    """Rules and the options inside either-of rules."""
    return [o for r in rules for o in (r, *r.options)]


def test_at_least_65_providers() -> None:
    """The registry covers at least 65 providers."""
    assert len(PROVIDERS) >= 65


def test_at_least_110_credentials() -> None:
    """The registry holds at least 110 credentials."""
    assert len(CREDENTIALS) >= 110


def test_every_category_has_providers() -> None:
    """Each of the eight categories has a provider, and no provider is outside them."""
    assert set(CATEGORIES) == {p.category for p in PROVIDERS}


def test_provider_ids_are_unique() -> None:
    """No two providers share an id."""
    ids = [p.id for p in PROVIDERS]
    assert sorted(set(ids)) == sorted(ids)


def test_refs_are_unique() -> None:
    """Credential keys and offered formats never collide within a provider."""
    refs = provider_refs()
    assert len(set(refs)) == len(refs)


def test_refs_are_tuples_of_strings() -> None:
    """format_ids() and provider_refs() return tuples of strings, as the tool schema expects."""
    for got in (format_ids(), provider_refs()):
        assert isinstance(got, tuple)
        assert all(isinstance(x, str) for x in got)
    assert {"stripe", "stripe/secret_key", "stripe/webhook_secret"} <= set(provider_refs())


def test_env_names_are_unique_across_credentials() -> None:
    """A name maps to one credential at most, so a name alone can resolve."""
    names = [n for _, c in CREDENTIALS for n in c.env_names]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert [] == dupes


@pytest.mark.parametrize("pc", CREDENTIALS, ids=cred_id)
def test_env_names_are_valid_and_unprefixed(pc: tuple[Provider, Credential]) -> None:
    """Names are valid secret names with no framework prefix (those are stripped on lookup)."""
    _, c = pc
    assert c.env_names
    for name in c.env_names:
        assert ENV_NAME.fullmatch(name)
        assert not name.startswith(FRAMEWORK_PREFIXES)


@pytest.mark.parametrize("p", PROVIDERS, ids=lambda p: p.id)
def test_links_are_https_on_the_providers_domains(p: Provider) -> None:
    """Every "Get it" link is https on one of the provider's own domains (or a subdomain)."""
    links = [c.url for c in p.credentials] + [o.url for o in p.offers]
    for link in links:
        parts = urlsplit(link)
        host = parts.hostname or ""
        assert "https" == parts.scheme, link
        assert any(host == d or host.endswith("." + d) for d in p.domains), link


@pytest.mark.parametrize("pc", CREDENTIALS, ids=cred_id)
def test_every_example_passes_its_rules(pc: tuple[Provider, Credential]) -> None:
    """A credential's example passes its own field, with no wrong-key hint."""
    verdict = check(credential_field(*pc), pc[1].example)
    assert (True, None) == (verdict.ok, verdict.hint), verdict.lines


@pytest.mark.parametrize("f", FORMATS, ids=lambda f: f.id)
def test_every_format_example_passes_its_rules(f: Format) -> None:
    """A format's example passes the format's rules."""
    assert check(format_field(f), f.example).ok


def test_formats_are_the_twelve_of_the_contract() -> None:
    """The format ids are exactly the ones the tool schema documents."""
    expected = "text integer hex base64 email url hostname uuid jwt pem json postgres_url"
    assert expected.split() == list(format_ids())


def test_offers_and_credentials_name_real_formats() -> None:
    """Offered formats and credential formats are formats the registry has."""
    known = set(format_ids())
    named = {o.format for p in PROVIDERS for o in p.offers}
    named |= {c.format for _, c in CREDENTIALS}
    assert set() == named - known
    assert any(p.offers for p in PROVIDERS)


@pytest.mark.parametrize("pc", CREDENTIALS, ids=cred_id)
def test_rules_are_well_formed(pc: tuple[Provider, Credential]) -> None:
    """Each rule has a line, sane parameters, a known check, and an id unique in its field."""
    rules = pc[1].rules
    assert len({r.id for r in rules}) == len(rules)
    for r in all_rules(rules):
        assert r.text
        assert r.text.strip() == r.text
        if r.kind == "prefix":
            assert all(r.prefixes)
            assert r.prefixes
        if r.kind == "length":
            assert 0 <= r.min <= r.max
        if r.kind == "charset":
            assert all(0 <= lo <= hi <= 0x10FFFF for lo, hi in r.ranges)
        if r.kind == "format":
            assert r.check in CHECKS
    assert all(o.kind != "either" for r in rules for o in r.options)


@pytest.mark.parametrize("pc", CREDENTIALS, ids=cred_id)
def test_every_credential_bounds_its_length(pc: tuple[Provider, Credential]) -> None:
    """Key-like credentials carry a length or format rule, so a stray word is caught."""
    kinds = {r.kind for r in pc[1].rules}
    assert kinds & {"length", "format", "prefix"}, pc[1].rules


@pytest.mark.parametrize("pc", CREDENTIALS, ids=cred_id)
def test_label_and_placeholder_are_set(pc: tuple[Provider, Credential]) -> None:
    """Every credential has a label and a placeholder to show in the field."""
    assert pc[1].label
    assert pc[1].placeholder
