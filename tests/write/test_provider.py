"""The provider check's plan and settings (DESIGN §16): what may be sent, and where to."""

from __future__ import annotations

import pytest

from offprompt.spec import SecretSpec
from offprompt.write import provider


def test_check_base_maps_hosts_to_their_base_urls() -> None:
    """`host=URL,…`: scheme and host:port of each URL; its path is not kept (the check's is)."""
    env = {"OFFPROMPT_CHECK_BASE": "api.openai.com=http://127.0.0.1:8123/x, slack.com=https://m"}
    assert {"api.openai.com": "http://127.0.0.1:8123", "slack.com": "https://m"} == (
        provider.bases(env)
    )


@pytest.mark.parametrize("entry", ["api.openai.com", "=http://x", "a=ftp://x", "a=http://"])
def test_a_check_base_entry_that_is_not_host_url_is_ignored(entry: str) -> None:
    """A mistyped entry sends nothing elsewhere: that host's checks go where documented."""
    assert {} == provider.bases({"OFFPROMPT_CHECK_BASE": entry})


@pytest.mark.parametrize(
    ("value", "on"), [("off", False), (" OFF ", False), ("", True), ("1", True)]
)
def test_offprompt_check_off_turns_checks_off(value: str, on: bool) -> None:
    """Only `off` (any case, any blanks around it) turns the checks off."""
    assert on is provider.enabled({"OFFPROMPT_CHECK": value})


def test_only_secrets_of_a_credential_with_a_check_that_fit_it_are_planned() -> None:
    """An OpenAI key fits and is planned for api.openai.com; the organization id (not secret),
    a name the registry does not know, and a key with a space in it are not."""
    key = "sk-proj-" + "A" * 48
    specs = (
        SecretSpec("OPENAI_API_KEY"),
        SecretSpec("OPENAI_ORG_ID"),
        SecretSpec("MY_THING"),
        SecretSpec("OTHER", provider="openai/api_key"),
    )
    values = {
        "OPENAI_API_KEY": key,
        "OPENAI_ORG_ID": "org-" + "a" * 24,
        "MY_THING": key,
        "OTHER": "sk-proj- " + "A" * 48,
    }
    plan = provider.plan(specs, values, list(values))
    probe = plan["OPENAI_API_KEY"]
    assert probe is not None
    assert ("OpenAI", "api.openai.com", "/v1/models") == (
        probe.provider,
        probe.check.host,
        probe.check.path,
    )
    assert {"OPENAI_ORG_ID": None, "MY_THING": None, "OTHER": None} == {
        k: v for k, v in plan.items() if k != "OPENAI_API_KEY"
    }


def test_a_verdict_never_shows_its_text_in_repr() -> None:
    """The text may name an account: it stays out of reprs (and so out of logs of objects)."""
    assert "acme" not in repr(provider.Verdict("ok", "Works — account acme"))
