"""Secret store providers: the tokens a project uses to read its other secrets at run time.

These unlock everything else, so none is marked not secret, even the ids that pair with them.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry.formats import RULES
from offprompt.registry.kit import TOKEN, cred, fill, fmt, length, prefix, provider
from offprompt.registry.model import Provider

_URL: Final = fmt("url", "a URL with a scheme and a host, like https://example.com")

# A table, laid out by hand: one credential per block, related arguments on one line.
# fmt: off
PROVIDERS: Final[tuple[Provider, ...]] = (
    provider(
        "doppler", "Doppler", "secrets", "doppler.com",
        cred(
            "token", "Service token", "DOPPLER_TOKEN DOPPLER_SERVICE_TOKEN",
            "https://dashboard.doppler.com/", "dp.st.…",
            fill("dp.st.dev.", 54),
            prefix("dp.", text="starts with dp. (dp.st. for a service token)"),
            length(20, 300), TOKEN,
        ),
        hosts="api.doppler.com",
    ),
    provider(
        "onepassword", "1Password", "secrets", "1password.com",
        cred(
            "service_account_token", "Service account token", "OP_SERVICE_ACCOUNT_TOKEN",
            "https://my.1password.com/developer-tools/directory", "ops_…",
            fill("ops_eyJzaWduSW5BZGRyZXNzIjoi", 600), prefix("ops_"), length(50, 4000), TOKEN,
        ),
        cred(
            "connect_token", "Connect server token", "OP_CONNECT_TOKEN",
            "https://my.1password.com/developer-tools/directory", "eyJ…",
            "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJleGFtcGxlIn0.EXAMPLE0EXAMPLE0", *RULES["jwt"],
            format="jwt",
        ),
        cred(
            "connect_host", "Connect server URL", "OP_CONNECT_HOST",
            "https://my.1password.com/developer-tools/directory", "http://localhost:8080",
            "http://localhost:8080", _URL, format="url",
        ),
        # the service account token signs in to the account's own host, and Connect is self-hosted:
        # none is fixed
        hosts="",
    ),
    provider(
        "vault", "HashiCorp Vault", "secrets", "hashicorp.com",
        cred(
            "token", "Token", "VAULT_TOKEN",
            "https://portal.cloud.hashicorp.com/", "hvs.…",
            fill("hvs.", 95),
            # hvs./hvb./hvr. since Vault 1.10; s./b./r. before it.
            prefix("hvs.", "hvb.", "hvr.", "s.", "b.", "r.",
                   text="starts with hvs. (or s. from Vault before 1.10)"),
            length(20, 1000), TOKEN,
        ),
        cred(
            "addr", "Server address", "VAULT_ADDR",
            "https://portal.cloud.hashicorp.com/", "https://vault.example.com:8200",
            "https://vault.example.com:8200", _URL, format="url",
        ),
        # self-hosted or a per-cluster HCP host: none is fixed
        hosts="",
    ),
    provider(
        "infisical", "Infisical", "secrets", "infisical.com",
        cred(
            "client_id", "Machine identity client ID",
            "INFISICAL_CLIENT_ID INFISICAL_UNIVERSAL_AUTH_CLIENT_ID",
            "https://app.infisical.com/", "a UUID", "00000000-0000-4000-8000-000000000000",
            *RULES["uuid"], format="uuid",
        ),
        cred(
            "client_secret", "Machine identity client secret",
            "INFISICAL_CLIENT_SECRET INFISICAL_UNIVERSAL_AUTH_CLIENT_SECRET",
            "https://app.infisical.com/", "64 hex digits",
            fill("", 64, "0123abcd"), length(20, 300), TOKEN,
        ),
        cred(
            "token", "Service token", "INFISICAL_TOKEN INFISICAL_SERVICE_TOKEN",
            "https://app.infisical.com/", "st.…",
            fill("st.", 140, "0123abcd"), length(20, 1000), TOKEN,
        ),
        # Infisical Cloud (US, EU); self-hosted differs
        hosts="app.infisical.com eu.infisical.com",
    ),
    provider(
        "bitwarden", "Bitwarden Secrets Manager", "secrets", "bitwarden.com",
        cred(
            "access_token", "Machine account access token", "BWS_ACCESS_TOKEN",
            "https://vault.bitwarden.com/", "0.….…:…",
            "0.00000000-0000-4000-8000-000000000000." + fill("", 30) + ":" + fill("", 24),
            length(40, 400), TOKEN,
        ),
        hosts="api.bitwarden.com identity.bitwarden.com api.bitwarden.eu identity.bitwarden.eu",
    ),
    provider(
        "akeyless", "Akeyless", "secrets", "akeyless.io",
        cred(
            "access_id", "Access ID", "AKEYLESS_ACCESS_ID",
            "https://console.akeyless.io/", "p-…",
            "p-example0exa", length(4, 100), TOKEN,
        ),
        cred(
            "access_key", "Access key", "AKEYLESS_ACCESS_KEY",
            "https://console.akeyless.io/", "44 base64 characters",
            fill("", 43) + "=", length(16, 300), TOKEN,
        ),
        hosts="api.akeyless.io",
    ),
)
# fmt: on
