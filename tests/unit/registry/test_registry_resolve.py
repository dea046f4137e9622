"""Resolution: which field a secret entry gets from its provider ref, its format or its name."""

import dataclasses

import pytest

from offprompt.registry import (
    AmbiguousProvider,
    RegistryError,
    UnknownRef,
    provider_refs,
    resolve,
)


def ref_of(name: str, provider: str | None = None, format: str | None = None) -> str | None:
    """The ref of the resolved field, or None."""
    field = resolve(name, provider, format)
    return None if field is None else field.ref


def test_explicit_credential_ref() -> None:
    """`stripe/webhook_secret` is that credential, with its label and link."""
    field = resolve("WHATEVER", "stripe/webhook_secret", None)
    assert field is not None
    expected = ("stripe", "Stripe", "webhook_secret", "https://dashboard.stripe.com/webhooks")
    assert expected == (field.provider_id, field.provider_name, field.credential, field.url)


def test_bare_provider_with_the_credentials_name() -> None:
    """STRIPE_SECRET_KEY with provider `stripe` is the secret key."""
    assert "stripe/secret_key" == ref_of("STRIPE_SECRET_KEY", "stripe")


def test_bare_provider_with_an_unrelated_name_is_refused_with_choices() -> None:
    """MY_KEY with provider `stripe` is ambiguous; the error lists the refs to choose from."""
    with pytest.raises(AmbiguousProvider) as caught:
        resolve("MY_KEY", "stripe", None)
    choices = ("stripe/secret_key", "stripe/publishable_key", "stripe/webhook_secret")
    assert choices == caught.value.choices
    assert all(c in str(caught.value) for c in choices)


def test_ambiguous_provider_is_a_registry_error() -> None:
    """Callers can catch every registry refusal as RegistryError (a ValueError)."""
    assert issubclass(AmbiguousProvider, RegistryError)
    assert issubclass(UnknownRef, RegistryError)
    assert issubclass(RegistryError, ValueError)


def test_bare_provider_with_one_credential_needs_no_name() -> None:
    """A provider with a single credential resolves whatever the name."""
    assert "resend/api_key" == ref_of("EMAIL_KEY", "resend")


def test_bare_provider_with_a_decorated_name() -> None:
    """A name holding the credential's name (PROD_…, …_LIVE) picks it."""
    assert "stripe/secret_key" == ref_of("PROD_STRIPE_SECRET_KEY", "stripe")
    assert "stripe/secret_key" == ref_of("STRIPE_SECRET_KEY_LIVE", "stripe")


def test_bare_provider_with_the_credentials_words() -> None:
    """A name holding every word of a credential's key picks it (MY_WEBHOOK_SECRET)."""
    assert "stripe/webhook_secret" == ref_of("MY_WEBHOOK_SECRET", "stripe")


def test_bare_provider_with_an_offered_format() -> None:
    """DATABASE_URL with provider `neon` is Neon's Postgres URL, linked to Neon's console."""
    field = resolve("DATABASE_URL", "neon", None)
    assert field is not None
    assert ("neon/postgres_url", "postgres_url") == (field.ref, field.format)
    assert str(field.url).startswith("https://console.neon.tech/")


def test_name_alone() -> None:
    """A name one credential goes by resolves to it without a provider."""
    assert "resend/api_key" == ref_of("RESEND_API_KEY")


@pytest.mark.parametrize(
    "prefix", ["NEXT_PUBLIC_", "VITE_", "REACT_APP_", "EXPO_PUBLIC_", "NUXT_PUBLIC_", "PUBLIC_"]
)
def test_framework_prefixes_are_stripped(prefix: str) -> None:
    """NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY and its kin resolve like the bare name."""
    assert "stripe/publishable_key" == ref_of(prefix + "STRIPE_PUBLISHABLE_KEY")


def test_framework_prefixes_are_stripped_with_a_provider() -> None:
    """With a bare provider, the stripped name picks the credential."""
    assert "supabase/publishable_key" == ref_of("NEXT_PUBLIC_SUPABASE_ANON_KEY", "supabase")


def test_unknown_name_alone_is_plain_text() -> None:
    """A name nobody uses resolves to None: plain text with no rules."""
    assert resolve("MY_APP_SETTING", None, None) is None


def test_unknown_provider_ref() -> None:
    """A provider the registry lacks is refused."""
    with pytest.raises(UnknownRef):
        resolve("X", "nope", None)


def test_unknown_credential_ref() -> None:
    """A credential the provider lacks is refused."""
    with pytest.raises(UnknownRef):
        resolve("X", "stripe/nope", None)


def test_unknown_format() -> None:
    """A format the registry lacks is refused."""
    with pytest.raises(UnknownRef):
        resolve("X", None, "yaml")


def test_format_field_has_no_provider_and_no_link() -> None:
    """`format: uuid` gives the format's rules, label and placeholder, with no provider."""
    field = resolve("X", None, "uuid")
    assert field is not None
    assert (None, None, "UUID", "uuid") == (field.provider_id, field.url, field.label, field.format)
    assert ["format:uuid"] == [r.id for r in field.rules]


def test_provider_wins_over_the_name() -> None:
    """An explicit provider decides, whatever credential the name suggests."""
    assert "anthropic/api_key" == ref_of("OPENAI_API_KEY", "anthropic")


def test_format_wins_over_the_name() -> None:
    """An explicit format decides, whatever credential the name suggests."""
    assert "text" == ref_of("STRIPE_SECRET_KEY", None, "text")


def test_multiline_follows_the_format() -> None:
    """PEM and JSON fields are multi-line; keys are not."""
    pem, key = resolve("X", "apple/private_key"), resolve("OPENAI_API_KEY")
    assert (True, False) == (getattr(pem, "multiline", None), getattr(key, "multiline", None))


def test_not_secret_credentials_say_so() -> None:
    """A publishable key is marked not secret; a secret key is."""
    pk, sk = resolve("STRIPE_PUBLISHABLE_KEY"), resolve("STRIPE_SECRET_KEY")
    assert (False, True) == (getattr(pk, "secret", None), getattr(sk, "secret", None))


@pytest.mark.parametrize("ref", [r for r in provider_refs() if "/" in r])
def test_every_credential_ref_resolves_to_itself(ref: str) -> None:
    """Each `provider/credential` ref in the schema enum resolves to that field."""
    assert ref == ref_of("X", ref)


@pytest.mark.parametrize("ref", [r for r in provider_refs() if "/" not in r])
def test_every_bare_ref_resolves_or_lists_its_own_choices(ref: str) -> None:
    """A bare provider ref is its only credential, or is refused with all of its refs."""
    own = tuple(r for r in provider_refs() if r.startswith(ref + "/"))
    if len(own) == 1:
        assert own[0] == ref_of("X", ref)
        return
    with pytest.raises(AmbiguousProvider) as caught:
        resolve("X", ref, None)
    assert own == caught.value.choices


def test_field_is_frozen() -> None:
    """A resolved field cannot be changed by a caller."""
    field = resolve("STRIPE_SECRET_KEY")
    assert field is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        field.label = "x"  # type: ignore[misc]
