"""Provider checks as registry data (DESIGN §16): who is asked, where, and how."""

from __future__ import annotations

import re

import pytest

from offprompt.registry import PROVIDERS
from offprompt.registry.model import Check, Credential, Provider

# The providers DESIGN §16 names, each to be asked with its own API reference's request.
NAMED = (
    "openai anthropic stripe github resend sendgrid twilio slack huggingface mistral groq "
    "cloudflare vercel postmark mailgun openrouter gemini replicate linear notion"
).split()

CHECKS = [(p, c, c.check) for p in PROVIDERS for c in p.credentials if c.check is not None]
IDS = [f"{p.id}/{c.key}" for p, c, _ in CHECKS]


def test_every_provider_design_names_has_a_check() -> None:
    """At least the 20 providers §16 names carry a check on a credential of theirs."""
    assert set(NAMED) <= {p.id for p, _, _ in CHECKS}
    assert len({p.id for p, _, _ in CHECKS}) >= 20


@pytest.mark.parametrize(("provider", "credential", "check"), CHECKS, ids=IDS)
def test_a_check_goes_only_to_its_providers_own_api(
    provider: Provider, credential: Credential, check: Check
) -> None:
    """The host is one of the provider's `hosts` (the only hosts its values go to, §15), the
    path a plain path, the source an https page of the provider's reference."""
    assert check.host in provider.hosts
    assert re.fullmatch(r"/[A-Za-z0-9._~/-]*", check.path), check.path
    assert check.doc.startswith("https://")
    assert credential.secret


@pytest.mark.parametrize(("provider", "credential", "check"), CHECKS, ids=IDS)
def test_a_check_says_where_the_key_goes_and_what_a_refusal_is(
    provider: Provider, credential: Credential, check: Check
) -> None:
    """`auth` is bearer, basic or one named header; rejected and accepted statuses are 4xx and
    apart; the account is a JSON path or a response header; a basic user name taken from a
    sibling names a credential of the same provider."""
    assert check.auth in ("bearer", "basic") or re.fullmatch(r"header:[A-Za-z0-9-]+", check.auth)
    assert check.rejected or check.ok_field
    assert all(400 <= s < 500 for s in (*check.rejected, *check.accepted))
    assert not set(check.rejected) & set(check.accepted)
    assert check.account == "" or re.fullmatch(
        r"(json:[A-Za-z0-9_.]+|header:[A-Za-z0-9-]+)", check.account
    )
    if check.user_from:
        assert check.auth == "basic"
        assert check.user_from in {c.key for c in provider.credentials if c is not credential}
    if check.body:
        assert check.body.startswith("{")
