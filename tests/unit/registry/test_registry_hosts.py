"""Each provider's API hosts (§15's `injectHosts`): exact hostnames, and never on the page."""

import json
import re
from typing import Any

import pytest
import registry_cases as table

from offprompt.registry import PROVIDERS, Provider, format_ids, hosts_for, kit, page_data, provider

# Lower-case labels of letters, digits and inner hyphens, at least two of them: no scheme, port,
# path, wildcard, trailing dot or upper case.
HOSTNAME = re.compile(r"(?=.{4,253}\Z)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")

# Hosts taken from each provider's own API reference: a change here is a change of what the
# mask swaps real keys in for, so it is made on purpose.
WELL_KNOWN: dict[str, tuple[str, ...]] = {
    "openai": ("api.openai.com",),
    "anthropic": ("api.anthropic.com",),
    "stripe": ("api.stripe.com", "files.stripe.com", "connect.stripe.com"),
    "github": ("api.github.com", "uploads.github.com", "github.com"),
    "twilio": (
        "api.twilio.com",
        "verify.twilio.com",
        "lookups.twilio.com",
        "messaging.twilio.com",
        "conversations.twilio.com",
        "video.twilio.com",
    ),
    "sendgrid": ("api.sendgrid.com",),
    "slack": ("slack.com", "hooks.slack.com"),
    "gemini": ("generativelanguage.googleapis.com",),
    "groq": ("api.groq.com",),
    "mistral": ("api.mistral.ai",),
    "resend": ("api.resend.com",),
    "telegram": ("api.telegram.org",),
    "cloudflare": ("api.cloudflare.com",),
    "vercel": ("api.vercel.com", "blob.vercel-storage.com"),
    "fly": ("api.fly.io", "api.machines.dev"),
    "railway": ("backboard.railway.com", "backboard.railway.app"),
    "npm": ("registry.npmjs.org",),
    "convex": ("api.convex.dev",),
}

# Providers whose every API lives on a per-account host: none is fixed, so none is named.
NO_FIXED_HOST = {
    "auth0",
    "aws",
    "azure_openai",
    "betterstack",
    "gcp",
    "kinde",
    "mailchimp",
    "mongodb",
    "okta",
    "onepassword",
    "pusher",
    "qdrant",
    "redis",
    "shopify",
    "supabase",
    "turso",
    "vault",
    "weaviate",
}


def test_hostname_pattern_refuses_what_is_not_a_bare_host() -> None:
    """The pattern itself: schemes, ports, paths, wildcards, capitals and single labels fail."""
    for bad in (
        "https://api.openai.com",
        "api.openai.com:443",
        "api.openai.com/v1",
        "*.openai.com",
        "Api.OpenAI.com",
        "localhost",
        "api.openai.com.",
        "-api.openai.com",
        "api..openai.com",
        "api openai.com",
    ):
        assert HOSTNAME.fullmatch(bad) is None, bad
    assert HOSTNAME.fullmatch("api-m.sandbox.paypal.com")


@pytest.mark.parametrize("p", PROVIDERS, ids=lambda p: p.id)
def test_hosts_are_a_tuple_of_exact_hostnames(p: Provider) -> None:
    """Every provider's `hosts` is a tuple of bare, lower-case hostnames, each named once."""
    assert isinstance(p.hosts, tuple)
    assert [h for h in p.hosts if not isinstance(h, str) or not HOSTNAME.fullmatch(h)] == []
    assert len(set(p.hosts)) == len(p.hosts)


def test_only_providers_with_no_fixed_host_have_none() -> None:
    """An empty `hosts` is a decision (per-account hosts only), never an omission."""
    assert {p.id for p in PROVIDERS if not p.hosts} == NO_FIXED_HOST


@pytest.mark.parametrize("provider_id", sorted(WELL_KNOWN))
def test_well_known_providers_have_exactly_their_hosts(provider_id: str) -> None:
    """The hosts of well-known providers, as their API references give them."""
    found = provider(provider_id)
    assert found is not None
    assert WELL_KNOWN[provider_id] == found.hosts


def test_a_declaration_cannot_leave_hosts_out() -> None:
    """`kit.provider` requires `hosts`, so a new provider states its hosts or why it has none."""
    with pytest.raises(TypeError, match="hosts"):
        kit.provider("x", "X", "ai", "x.example")  # type: ignore[call-arg]
    assert ("api.x.example", "x.example") == kit.provider(
        "x", "X", "ai", "x.example", hosts="api.x.example x.example"
    ).hosts


def test_hosts_for_joins_providers_in_order_and_skips_unknown_ids() -> None:
    """`hosts_for` gives each host once, in the order given; an unknown id adds nothing."""
    assert (
        "api.openai.com",
        "api.github.com",
        "uploads.github.com",
        "github.com",
    ) == hosts_for(["openai", "no-such-provider", "github", "openai", "aws"])
    assert () == hosts_for([])


FIELD_KEYS = {
    "ref",
    "provider",
    "provider_name",
    "credential",
    "label",
    "noun",
    "url",
    "placeholder",
    "secret",
    "multiline",
    "format",
    "rules",
}


def every_field() -> dict[str, Any]:
    """A field for every credential and format ref the registry has."""
    return {ref: table.field_for(ref) for ref in [*table.credential_refs(), *format_ids()]}


def test_page_export_keeps_its_shape() -> None:
    """The page gets exactly `fields` and `hints`, each field exactly its twelve keys."""
    data = page_data(every_field())
    assert {"fields", "hints"} == set(data)
    assert {frozenset(FIELD_KEYS)} == {frozenset(f) for f in data["fields"].values() if f}
    assert {6} == {len(row) for row in data["hints"]}


def test_page_export_names_no_hosts() -> None:
    """No `hosts` key anywhere in what the page gets, and no host list either."""
    data = page_data(every_field())

    def keys(node: object) -> set[str]:
        if isinstance(node, dict):
            return set(node) | {k for v in node.values() for k in keys(v)}
        if isinstance(node, list):
            return {k for v in node for k in keys(v)}
        return set()

    assert "hosts" not in keys(data)
    text = json.dumps(data, ensure_ascii=False)
    shown = json.dumps([p.credentials for p in PROVIDERS], ensure_ascii=False)
    hosts = {h for p in PROVIDERS for h in p.hosts}
    # A host in the export is one a link, placeholder or example the page shows already names
    # (Slack's webhook placeholder names hooks.slack.com); an exported host list would add the rest.
    assert {h for h in hosts if h in text} <= {h for h in hosts if h in shown}
    assert len({h for h in hosts if h not in shown}) > 100
