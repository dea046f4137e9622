"""The provider check's plan and settings (DESIGN §16): what may be sent, and where to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dotenv import dotenv_values
from provider_fakes import (
    CHECKED,
    OWNED,
    SHAPELESS,
    Recorders,
    carrying,
    field_of,
    fresh,
    issuers,
    own_prefixes,
    prefixes,
    ref,
)

from offprompt import registry
from offprompt.registry import PROVIDERS, Credential, Field, Provider
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestRecord, RequestStore
from offprompt.write import provider
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter


def env(project: Path) -> dict[str, str | None]:
    return dotenv_values(project / ".env")


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


# A value goes only to its own issuer (DESIGN §16): every case below is generated from the
# registry's data (tests/provider_fakes.py), so a provider added later is covered as it comes.

REPORTED_KEYS = {  # what was pasted in the report, each with the credential that issues it
    "Stripe sk_live_": ("sk_live_", "stripe/secret_key"),
    "Gemini AIza": ("AIza", "gemini/api_key"),
    "sk-": ("sk-", "openai/api_key"),
    "whsec_": ("whsec_", "stripe/webhook_secret"),
}
REPORTED_FIELDS = ("vercel/token", "cloudflare/api_token", "mistral/api_key", "mailgun/api_key")
TWILIO_SID = "TWILIO_ACCOUNT_SID"


def _field(ref: str) -> Field:
    found = registry.resolve("THE_KEY", ref)
    assert found is not None
    return found


def _specs(p: Provider, c: Credential, *, named: bool, secret: bool = True) -> list[SecretSpec]:
    """The key as the request asks for it: with its provider named (`THE_KEY`), or by its
    conventional name alone; with the Account SID beside a check that takes it (Twilio)."""
    spec = SecretSpec("THE_KEY", provider=ref(p, c), secret=secret)
    if not named:
        spec = SecretSpec(c.env_names[0], secret=secret)
        assert registry.resolve(spec.name) == field_of(p, c)
    return [spec, SecretSpec(TWILIO_SID)] if c.check and c.check.user_from else [spec]


def _planned(p: Provider, c: Credential, value: str, *, named: bool, secret: bool = True) -> bool:
    """Whether the check of `value` in `c`'s field is planned (it would be sent)."""
    specs = _specs(p, c, named=named, secret=secret)
    values = {specs[0].name: value, TWILIO_SID: "AC" + "0123456789abcdef" * 2}
    return provider.plan(specs, values, [specs[0].name])[specs[0].name] is not None


def _foreign(b: Provider, cred: Credential, body: str) -> list[tuple[str, str, str]]:
    """Every prefix another provider's credential declares, as `(ref, prefix, value)`: the value
    carries it and `body` and passes that credential's rules, and `cred`'s where it can."""
    out = []
    for a in PROVIDERS:
        if a.id == b.id:
            continue
        for c in a.credentials:
            for pre, distinctive in prefixes(c):
                value = carrying(
                    pre, body, field_of(a, c), *(field_of(b, x) for x in b.credentials)
                )
                assert value is not None or not distinctive, f"no value of {ref(a, c)} with {pre}"
                if value is not None:
                    out.append((ref(a, c), pre, value))
    return out


@pytest.mark.parametrize(("b", "cred"), CHECKED, ids=[ref(p, c) for p, c in CHECKED])
def test_a_value_with_another_providers_prefix_is_sent_to_neither(
    b: Provider, cred: Credential
) -> None:
    """For every other provider's prefix in the registry (however many providers share it), a
    value that carries it and passes that provider's rules, in this credential's field, named or
    found by its name: no check is planned, so it reaches neither provider.

    Failed before for the shared prefixes (`sk-`, `sk_live_`, `whsec_`, `AIza`…) in the fields
    with no prefix of their own: "looks like another's" gave up when two providers had one."""
    body = fresh()
    sent = [
        (a, pre, "named" if named else "by name")
        for a, pre, value in _foreign(b, cred, body)
        for named in (True, False)
        if _planned(b, cred, value, named=named)
    ]
    assert [] == sent


@pytest.mark.parametrize("target", [*REPORTED_FIELDS, "twilio/auth_token"])
@pytest.mark.parametrize("key", list(REPORTED_KEYS))
@pytest.mark.parametrize("named", [True, False], ids=["named", "by name"])
def test_the_reported_keys_reach_no_other_providers_field(
    key: str, target: str, named: bool
) -> None:
    """The report's Stripe `sk_live_…`, Gemini `AIza…`, `sk-…` and `whsec_…` keys in a Vercel,
    Cloudflare, Mistral, Mailgun or Twilio field: none is planned (each reached the host before;
    Twilio's letters-and-digits rule already refused all but `AIza…`)."""
    pre, issuer = REPORTED_KEYS[key]
    pid, _, key_name = target.partition("/")
    [(p, c)] = [(p, c) for p, c in CHECKED if (p.id, c.key) == (pid, key_name)]
    value = carrying(pre, fresh(), _field(issuer), _field(target))
    assert value is not None
    assert not _planned(p, c, value, named=named)


def test_a_secret_false_field_is_never_checked() -> None:
    """`secret: false` in the request, whatever the registry says of the credential: an OpenAI
    project key of its own shape is not planned, named or found by its name (it was before)."""
    [(p, c)] = [(p, c) for p, c in CHECKED if p.id == "openai"]
    value = carrying("sk-proj-", fresh(), field_of(p, c))
    assert value is not None
    assert _planned(p, c, value, named=True)
    assert (False, False) == (
        _planned(p, c, value, named=True, secret=False),
        _planned(p, c, value, named=False, secret=False),
    )


@pytest.mark.parametrize(("p", "c"), SHAPELESS, ids=[ref(p, c) for p, c in SHAPELESS])
def test_a_credential_with_no_distinctive_shape_is_checked_only_when_its_provider_is_named(
    p: Provider, c: Credential
) -> None:
    """Nothing in such a value says whose it is (Mistral's, Vercel's, a Postmark UUID): it is
    sent when the request named the provider, not when only its key name matched (it was)."""
    value = carrying("", fresh(), field_of(p, c)) or c.example.replace("0", "7")
    assert registry.check(field_of(p, c), value).ok
    assert (True, False) == (_planned(p, c, value, named=True), _planned(p, c, value, named=False))


@pytest.mark.parametrize(("p", "c"), OWNED, ids=[ref(p, c) for p, c in OWNED])
def test_a_key_of_its_own_prefix_in_its_own_field_is_still_checked(
    p: Provider, c: Credential
) -> None:
    """Each prefix only this provider issues, in a value of its credential's rules: planned for
    its own host, named or found by its name. The rule does not just turn checks off."""
    for pre in own_prefixes(p, c):
        value = carrying(pre, fresh(), field_of(p, c))
        assert value is not None, pre
        assert (True, True) == (
            _planned(p, c, value, named=True),
            _planned(p, c, value, named=False),
        )


def test_only_a_credential_whose_every_prefix_is_shared_is_never_checked() -> None:
    """Every credential with a check has a key that may be sent (its own prefix, or none to
    have), but one whose every distinctive prefix another provider issues too (Gemini's `AIza`
    is Firebase's and Google Cloud's as well): for it the page offers no box."""
    never = [(p, c) for p, c in CHECKED if (p, c) not in OWNED and (p, c) not in SHAPELESS]
    assert all(issuers(pre) != {p.id} for p, c in never for pre, d in prefixes(c) if d)
    assert [False] * len(never) == [provider.checkable(field_of(p, c)) for p, c in never]
    assert all(provider.checkable(field_of(p, c)) for p, c in OWNED + SHAPELESS)
    for p, c in never:
        for pre, _ in prefixes(c):
            value = carrying(pre, fresh(), field_of(p, c))
            assert value is not None
            assert (False, False) == (
                _planned(p, c, value, named=True),
                _planned(p, c, value, named=False),
            )


def test_a_shared_prefix_is_nobodys_own_a_longer_one_decides() -> None:
    """Stripe's `sk_live_` (Clerk issues it too) is not sent to Stripe, its `rk_live_` is;
    OpenAI's `sk-proj-` is OpenAI's though DeepSeek's keys start with `sk-`, and `sk-…` alone
    or Anthropic's `sk-ant-…` in OpenAI's field is sent nowhere."""
    stripe = next((p, c) for p, c in CHECKED if p.id == "stripe")
    openai = next((p, c) for p, c in CHECKED if p.id == "openai")
    cases = [
        (stripe, "sk_live_", False),
        (stripe, "rk_live_", True),
        (openai, "sk-proj-", True),
        (openai, "sk-", False),
        (openai, "sk-ant-", False),
        (openai, "sk-or-", False),
    ]
    for (p, c), pre, sent in cases:
        value = carrying(pre, fresh(), field_of(p, c))
        assert value is not None
        assert (pre, sent) == (pre, _planned(p, c, value, named=True))


# Through the real Submitter, every check host of the registry a recorder on loopback.


def _make(
    store: RequestStore, project: Path, specs: list[SecretSpec], file: str = ".env"
) -> RequestRecord:
    return store.create(specs, SinkSpec(path=file), project, "Needed", ttl=300, client="Test")


async def test_through_the_submitter_no_host_receives_another_providers_key(
    aiohttp_server: Any, project: Path, tmp_path: Path
) -> None:
    """Each credential with a check, given every other provider's prefix the registry knows (as
    a key of that provider's rules, passing this field's where one can): the submit with
    `check` writes them all, and no check host receives a single request."""
    hosts = await Recorders.start(aiohttp_server)
    store = RequestStore()
    submitter = Submitter(
        store, Journal(tmp_path / "journal.jsonl"), env={"OFFPROMPT_CHECK_BASE": hosts.env}
    )
    for i, (b, cred) in enumerate(CHECKED):
        by_name = [v for _, _, v in _foreign(b, cred, fresh())]
        # A named field refuses a value that fails its rules: only those that pass go there.
        named = [v for v in by_name if registry.check(field_of(b, cred), v).ok]
        specs = [SecretSpec(f"NAMED_{n}", provider=ref(b, cred)) for n in range(len(named))]
        specs += [SecretSpec(f"{cred.env_names[0]}_{n}") for n in range(len(by_name))]
        specs += [SecretSpec(TWILIO_SID)]
        values = dict(zip([s.name for s in specs], [*named, *by_name], strict=False))
        values[TWILIO_SID] = "AC" + "0123456789abcdef" * 2
        req = _make(store, project, specs, file=f".env.{i}")
        outcome = await submitter.submit(req, values, check=True)
        assert {"skipped"} == {status for _, status in outcome.checked}
        assert values == dotenv_values(project / f".env.{i}")
    assert {host: [] for host in hosts.seen} == hosts.seen


async def test_through_the_submitter_each_own_key_reaches_its_own_host_only(
    aiohttp_server: Any, project: Path, tmp_path: Path
) -> None:
    """Every credential's own key (its own prefix, or a shapeless key with its provider named),
    each a canary of its own, in one submit: each reaches its own check host, once, and no
    other; the credential whose every prefix is shared (Gemini) sends nothing."""
    hosts = await Recorders.start(aiohttp_server)
    store = RequestStore()
    submitter = Submitter(
        store, Journal(tmp_path / "journal.jsonl"), env={"OFFPROMPT_CHECK_BASE": hosts.env}
    )
    specs, values, host_of = [SecretSpec(TWILIO_SID)], {TWILIO_SID: "AC" + "01234567" * 4}, {}
    for i, (p, c) in enumerate(OWNED + SHAPELESS):
        own = own_prefixes(p, c)
        value = carrying(own[0] if own else "", fresh(), field_of(p, c))
        value = value or c.example.replace("0", "7")  # a UUID: no letters of a canary fit it
        name = f"KEY_{i}"
        specs.append(SecretSpec(name, provider=ref(p, c)))
        values[name] = value
        host_of[value] = c.check.host if c.check else ""
    outcome = await submitter.submit(_make(store, project, specs), values, check=True)
    checked = dict(outcome.checked)
    assert all(checked[n] != "skipped" for n in values if n != TWILIO_SID)
    assert {v: {h} for v, h in host_of.items()} == {v: hosts.hosts_seeing(v) for v in host_of}
    assert len(host_of) == len(hosts.all_seen())
    shared = {c.check.host for p, c in CHECKED if not provider.checkable(field_of(p, c)) if c.check}
    assert shared
    assert all(hosts.seen[h] == [] for h in shared)


async def test_through_the_submitter_a_secret_false_field_sends_nothing(
    aiohttp_server: Any, project: Path, tmp_path: Path, canary: str
) -> None:
    """An OpenAI key of its own shape, `secret: false` with its provider named: written, not
    checked, and the recorder of api.openai.com receives nothing."""
    hosts = await Recorders.start(aiohttp_server)
    store = RequestStore()
    submitter = Submitter(
        store, Journal(tmp_path / "journal.jsonl"), env={"OFFPROMPT_CHECK_BASE": hosts.env}
    )
    value = "sk-proj-" + canary + "Q" * 20
    spec = SecretSpec("OPENAI_API_KEY", provider="openai/api_key", secret=False)
    outcome = await submitter.submit(_make(store, project, [spec]), {spec.name: value}, check=True)
    assert (("OPENAI_API_KEY", "skipped"),) == outcome.checked
    assert ([], {"OPENAI_API_KEY": value}) == (hosts.all_seen(), env(project))


@pytest.mark.parametrize(
    ("spec", "value", "why"),
    [
        (SecretSpec("APP_SECRET"), "x", "offprompt knows no provider for this key"),
        (
            SecretSpec("OPENAI_API_KEY", secret=False),
            "sk-proj-" + "A" * 40,
            "it is not a secret, so it is never sent to a provider",
        ),
        (SecretSpec("MISTRAL_API_KEY"), "A" * 32, "Mistral AI was not named for it"),
        (SecretSpec("STRIPE_SECRET_KEY"), "sk_live_" + "A" * 30, "shows it is Stripe's own"),
        (SecretSpec("OPENAI_API_KEY"), "ghp_" + "A" * 36, "shows it is OpenAI's own"),
    ],
    ids=["no provider", "not secret", "shapeless, unnamed", "shared prefix", "foreign prefix"],
)
def test_a_skipped_check_says_which_rule_kept_the_key_home(
    spec: SecretSpec, value: str, why: str
) -> None:
    """Each §16 rule that sends nothing has its own reason, in words, with no part of the value."""
    said = provider.why_skipped(spec, value)
    assert why in said
    assert value not in said
