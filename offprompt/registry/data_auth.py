"""Auth providers: hosted sign-in, identity platforms, and OAuth clients for social sign-in.

Client IDs are not secret (they ship in the browser); client secrets and signing keys are.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry.formats import RULES
from offprompt.registry.kit import (
    ALNUM,
    B64URL,
    TOKEN,
    cred,
    either,
    fill,
    fmt,
    length,
    prefix,
    provider,
    scheme,
)
from offprompt.registry.model import Provider

_HOST: Final = fmt("hostname", "a host name like db.example.com, without https:// or a path")
_URL: Final = fmt("url", "a URL with a scheme and a host, like https://example.com")

# A table, laid out by hand: one credential per block, related arguments on one line.
# fmt: off
PROVIDERS: Final[tuple[Provider, ...]] = (
    provider(
        "clerk", "Clerk", "auth", "clerk.com",
        cred(
            "secret_key", "Secret key", "CLERK_SECRET_KEY CLERK_API_KEY",
            "https://dashboard.clerk.com/last-active?path=api-keys", "sk_live_… or sk_test_…",
            fill("sk_test_", 50), prefix("sk_live_", "sk_test_"), length(20, 255), B64URL,
        ),
        cred(
            "publishable_key", "Publishable key", "CLERK_PUBLISHABLE_KEY",
            "https://dashboard.clerk.com/last-active?path=api-keys", "pk_live_… or pk_test_…",
            "pk_test_ZXhhbXBsZS5jbGVyay5hY2NvdW50cy5kZXYk", prefix("pk_live_", "pk_test_"),
            length(20, 255), TOKEN, secret=False,
        ),
        cred(
            "webhook_secret", "Webhook signing secret",
            "CLERK_WEBHOOK_SECRET CLERK_WEBHOOK_SIGNING_SECRET",
            "https://dashboard.clerk.com/last-active?path=webhooks", "whsec_…",
            fill("whsec_", 38), prefix("whsec_"), length(20, 200), TOKEN,
        ),
        # the Backend API; the webhook secret is never sent
        hosts="api.clerk.com",
    ),
    provider(
        "auth0", "Auth0", "auth", "auth0.com",
        cred(
            "domain", "Domain", "AUTH0_DOMAIN AUTH0_ISSUER_DOMAIN",
            "https://manage.auth0.com/", "your-tenant.us.auth0.com",
            "example.us.auth0.com", _HOST, secret=False, format="hostname",
        ),
        cred(
            "issuer_base_url", "Issuer base URL", "AUTH0_ISSUER_BASE_URL AUTH0_ISSUER",
            "https://manage.auth0.com/", "https://your-tenant.us.auth0.com",
            "https://example.us.auth0.com", scheme("https://"), _URL, secret=False, format="url",
        ),
        cred(
            "client_id", "Client ID", "AUTH0_CLIENT_ID",
            "https://manage.auth0.com/", "32 letters and digits",
            fill("", 32), length(16, 128), B64URL, secret=False,
        ),
        cred(
            "client_secret", "Client secret", "AUTH0_CLIENT_SECRET",
            "https://manage.auth0.com/", "64 letters, digits, - and _",
            fill("", 64), length(16, 256), TOKEN,
        ),
        cred(
            "management_token", "Management API token",
            "AUTH0_MANAGEMENT_API_TOKEN AUTH0_API_TOKEN",
            "https://manage.auth0.com/", "eyJ…",
            "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJleGFtcGxlIn0.EXAMPLE0EXAMPLE0", *RULES["jwt"],
            format="jwt",
        ),
        # every tenant has its own host (<tenant>.auth0.com): none is fixed
        hosts="",
    ),
    provider(
        "workos", "WorkOS", "auth", "workos.com",
        cred(
            "api_key", "API key", "WORKOS_API_KEY",
            "https://dashboard.workos.com/api-keys", "sk_test_… or sk_live_…",
            fill("sk_test_", 80), length(20, 255), TOKEN,
        ),
        cred(
            "client_id", "Client ID", "WORKOS_CLIENT_ID",
            "https://dashboard.workos.com/api-keys", "client_…",
            fill("client_", 33, "01EXAMPL"), prefix("client_"), length(10, 100), B64URL,
            secret=False,
        ),
        hosts="api.workos.com",
    ),
    provider(
        "okta", "Okta", "auth", "okta.com",
        cred(
            "org_url", "Org URL", "OKTA_ORG_URL OKTA_ISSUER OKTA_DOMAIN OKTA_BASE_URL",
            "https://login.okta.com/", "https://your-org.okta.com",
            "https://example.okta.com", _URL, secret=False, format="url",
        ),
        cred(
            "api_token", "API token", "OKTA_API_TOKEN OKTA_TOKEN",
            "https://login.okta.com/", "00…",
            fill("00", 42), length(20, 200), TOKEN,
        ),
        cred(
            "client_id", "Client ID", "OKTA_CLIENT_ID",
            "https://login.okta.com/", "0oa…",
            fill("0oa", 20, "example0"), length(10, 100), TOKEN, secret=False,
        ),
        cred(
            "client_secret", "Client secret", "OKTA_CLIENT_SECRET",
            "https://login.okta.com/", "40 letters, digits, - and _",
            fill("", 40), length(16, 256), TOKEN,
        ),
        # every org has its own host (<org>.okta.com): none is fixed
        hosts="",
    ),
    provider(
        "kinde", "Kinde", "auth", "kinde.com",
        cred(
            "issuer_url", "Issuer URL", "KINDE_ISSUER_URL KINDE_DOMAIN",
            "https://app.kinde.com/", "https://your-business.kinde.com",
            "https://example.kinde.com", _URL, secret=False, format="url",
        ),
        cred(
            "client_id", "Client ID", "KINDE_CLIENT_ID",
            "https://app.kinde.com/", "32 hex digits",
            fill("", 32, "0123abcd"), length(10, 128), TOKEN, secret=False,
        ),
        cred(
            "client_secret", "Client secret", "KINDE_CLIENT_SECRET",
            "https://app.kinde.com/", "48 letters and digits",
            fill("", 48), length(16, 256), TOKEN,
        ),
        # every business has its own host (<business>.kinde.com): none is fixed
        hosts="",
    ),
    provider(
        "stytch", "Stytch", "auth", "stytch.com",
        cred(
            "project_id", "Project ID", "STYTCH_PROJECT_ID",
            "https://stytch.com/dashboard/api-keys", "project-live-… or project-test-…",
            "project-test-00000000-0000-4000-8000-000000000000",
            prefix("project-live-", "project-test-"), length(20, 100), TOKEN, secret=False,
        ),
        cred(
            "secret", "Secret", "STYTCH_SECRET STYTCH_SECRET_KEY",
            "https://stytch.com/dashboard/api-keys", "secret-live-… or secret-test-…",
            fill("secret-test-", 48), prefix("secret-live-", "secret-test-"), length(20, 200),
            TOKEN,
        ),
        cred(
            "public_token", "Public token", "STYTCH_PUBLIC_TOKEN",
            "https://stytch.com/dashboard/api-keys", "public-token-live-… or public-token-test-…",
            "public-token-test-00000000-0000-4000-8000-000000000000",
            prefix("public-token-live-", "public-token-test-"), length(20, 200), TOKEN,
            secret=False,
        ),
        hosts="api.stytch.com test.stytch.com",
    ),
    provider(
        "google", "Google OAuth", "auth", "google.com",
        cred(
            "client_id", "OAuth client ID",
            "GOOGLE_CLIENT_ID GOOGLE_OAUTH_CLIENT_ID AUTH_GOOGLE_ID",
            "https://console.cloud.google.com/apis/credentials",
            "….apps.googleusercontent.com",
            "123456789012-example0example0example0example.apps.googleusercontent.com",
            length(20, 200), TOKEN, secret=False,
        ),
        cred(
            "client_secret", "OAuth client secret",
            "GOOGLE_CLIENT_SECRET GOOGLE_OAUTH_CLIENT_SECRET AUTH_GOOGLE_SECRET",
            "https://console.cloud.google.com/apis/credentials", "GOCSPX-…",
            fill("GOCSPX-", 35),
            # Secrets made before 2021 have no prefix and are still accepted by Google.
            either(prefix("GOCSPX-"), length(24, 24),
                   text="starts with GOCSPX- (or is an older 24-character secret)"),
            length(20, 100), B64URL,
        ),
        # the token endpoint, where the client secret goes
        hosts="oauth2.googleapis.com",
    ),
    provider(
        "apple", "Sign in with Apple", "auth", "apple.com",
        cred(
            "team_id", "Team ID", "APPLE_TEAM_ID",
            "https://developer.apple.com/account", "10 capitals and digits",
            "EXAMPLE012", length(10, 10), ALNUM, secret=False,
        ),
        cred(
            "key_id", "Key ID", "APPLE_KEY_ID",
            "https://developer.apple.com/account/resources/authkeys/list", "10 capitals and digits",
            "EXAMPLE345", length(10, 10), ALNUM, secret=False,
        ),
        cred(
            "private_key", "Private key (.p8)", "APPLE_PRIVATE_KEY APPLE_AUTH_KEY",
            "https://developer.apple.com/account/resources/authkeys/list",
            "-----BEGIN PRIVATE KEY-----…",
            "-----BEGIN PRIVATE KEY-----\n" + fill("", 64) + "\n-----END PRIVATE KEY-----",
            *RULES["pem"], format="pem",
        ),
        cred(
            "client_id", "Services ID", "APPLE_CLIENT_ID AUTH_APPLE_ID",
            "https://developer.apple.com/account/resources/identifiers/list/serviceId",
            "com.example.signin", "com.example.signin", length(3, 200), TOKEN, secret=False,
        ),
        # the private key only signs the client secret sent there
        hosts="appleid.apple.com",
    ),
)
# fmt: on
