"""Providers and formats as plain data: what a key looks like and where it is made.

Starter set: the formats and a handful of providers. Imports nothing else from offprompt.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    id: str
    label: str
    multiline: bool = False


@dataclass(frozen=True)
class Credential:
    key: str
    label: str
    env_names: tuple[str, ...]
    url: str
    placeholder: str = ""
    secret: bool = True


@dataclass(frozen=True)
class Provider:
    id: str
    name: str
    category: str
    credentials: tuple[Credential, ...]


FORMATS: tuple[Format, ...] = (
    Format("text", "Text"),
    Format("integer", "Whole number"),
    Format("hex", "Hexadecimal"),
    Format("base64", "Base64"),
    Format("email", "Email address"),
    Format("url", "URL"),
    Format("hostname", "Host name"),
    Format("uuid", "UUID"),
    Format("jwt", "JSON Web Token"),
    Format("pem", "PEM block", multiline=True),
    Format("json", "JSON", multiline=True),
    Format("postgres_url", "PostgreSQL connection URL"),
)

PROVIDERS: tuple[Provider, ...] = (
    Provider(
        "openai",
        "OpenAI",
        "ai",
        (
            Credential(
                "api_key",
                "API key",
                ("OPENAI_API_KEY",),
                "https://platform.openai.com/api-keys",
                "sk-proj-…",
            ),
        ),
    ),
    Provider(
        "anthropic",
        "Anthropic",
        "ai",
        (
            Credential(
                "api_key",
                "API key",
                ("ANTHROPIC_API_KEY",),
                "https://console.anthropic.com/settings/keys",
                "sk-ant-api03-…",
            ),
        ),
    ),
    Provider(
        "stripe",
        "Stripe",
        "payments",
        (
            Credential(
                "secret_key",
                "Secret key",
                ("STRIPE_SECRET_KEY", "STRIPE_API_KEY"),
                "https://dashboard.stripe.com/apikeys",
                "sk_live_…",
            ),
            Credential(
                "publishable_key",
                "Publishable key",
                ("STRIPE_PUBLISHABLE_KEY",),
                "https://dashboard.stripe.com/apikeys",
                "pk_live_…",
                secret=False,
            ),
            Credential(
                "webhook_secret",
                "Webhook signing secret",
                ("STRIPE_WEBHOOK_SECRET",),
                "https://dashboard.stripe.com/webhooks",
                "whsec_…",
            ),
        ),
    ),
    Provider(
        "resend",
        "Resend",
        "email",
        (
            Credential(
                "api_key",
                "API key",
                ("RESEND_API_KEY",),
                "https://resend.com/api-keys",
                "re_…",
            ),
        ),
    ),
    Provider(
        "github",
        "GitHub",
        "developer",
        (
            Credential(
                "token",
                "Personal access token",
                ("GITHUB_TOKEN", "GH_TOKEN"),
                "https://github.com/settings/personal-access-tokens",
                "github_pat_…",
            ),
        ),
    ),
)


def format_ids() -> tuple[str, ...]:
    """Every format id, for the tool schema's `format` enum."""
    return tuple(f.id for f in FORMATS)


def provider_refs() -> tuple[str, ...]:
    """Every provider ref, `provider` and `provider/credential`, for the tool schema's enum."""
    refs: list[str] = []
    for p in PROVIDERS:
        refs.append(p.id)
        refs += [f"{p.id}/{c.key}" for c in p.credentials]
    return tuple(refs)
