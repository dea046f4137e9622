"""Observability and product providers: errors, logs, metrics, analytics, flags and LLM tracing.

Project keys that ship in the browser (PostHog phc_, Sentry DSN) are marked not secret.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry.kit import (
    B64URL,
    HEX,
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

_URL: Final = fmt("url", "a URL with a scheme and a host, like https://example.com")
_HEX64: Final = fmt("hex", "64 hex digits")

# A table, laid out by hand: one credential per block, related arguments on one line.
# fmt: off
PROVIDERS: Final[tuple[Provider, ...]] = (
    provider(
        "sentry", "Sentry", "observability", "sentry.io",
        cred(
            "dsn", "DSN", "SENTRY_DSN",
            "https://sentry.io/settings/projects/", "https://…@o….ingest.sentry.io/…",
            "https://0123456789abcdef0123456789abcdef@o123456.ingest.us.sentry.io/1234567",
            scheme("https://", "http://"), _URL, secret=False, format="url",
        ),
        cred(
            "auth_token", "Auth token", "SENTRY_AUTH_TOKEN SENTRY_TOKEN",
            "https://sentry.io/settings/account/api/auth-tokens/", "sntrys_… or sntryu_…",
            fill("sntrys_", 120),
            either(prefix("sntrys_", "sntryu_"), _HEX64,
                   text="starts with sntrys_ or sntryu_ (or 64 hex digits for an older token)"),
            length(20, 1000), TOKEN,
        ),
        # the DSN goes to the org's own ingest host
        hosts="sentry.io us.sentry.io de.sentry.io",
    ),
    provider(
        "datadog", "Datadog", "observability", "datadoghq.com datadoghq.eu",
        cred(
            "api_key", "API key", "DD_API_KEY DATADOG_API_KEY",
            "https://app.datadoghq.com/organization-settings/api-keys", "32 hex digits",
            fill("", 32, "0123abcd"), length(32, 32), HEX,
        ),
        cred(
            "app_key", "Application key", "DD_APP_KEY DD_APPLICATION_KEY DATADOG_APP_KEY",
            "https://app.datadoghq.com/organization-settings/application-keys", "40 hex digits",
            fill("", 40, "0123abcd"), length(32, 64), HEX,
        ),
        cred(
            "site", "Site", "DD_SITE DATADOG_SITE",
            "https://app.datadoghq.com/", "datadoghq.com, us5.datadoghq.com, datadoghq.eu…",
            "us5.datadoghq.com",
            fmt("hostname", "a host name like db.example.com, without https:// or a path"),
            secret=False, format="hostname",
        ),
        # one per site
        hosts=("api.datadoghq.com api.us3.datadoghq.com api.us5.datadoghq.com api.datadoghq.eu"
               " api.ap1.datadoghq.com api.ap2.datadoghq.com api.ddog-gov.com"),
    ),
    provider(
        "posthog", "PostHog", "observability", "posthog.com",
        cred(
            "project_key", "Project API key", "POSTHOG_KEY POSTHOG_API_KEY POSTHOG_PROJECT_API_KEY",
            "https://us.posthog.com/settings/project#variables", "phc_…",
            fill("phc_", 47), prefix("phc_"), length(20, 200), B64URL, secret=False,
        ),
        cred(
            "personal_key", "Personal API key", "POSTHOG_PERSONAL_API_KEY",
            "https://us.posthog.com/settings/user-api-keys", "phx_…",
            fill("phx_", 47), prefix("phx_"), length(20, 200), B64URL,
        ),
        cred(
            "host", "Host", "POSTHOG_HOST POSTHOG_API_HOST",
            "https://us.posthog.com/settings/project", "https://us.i.posthog.com",
            "https://eu.i.posthog.com", _URL, secret=False, format="url",
        ),
        hosts="us.i.posthog.com eu.i.posthog.com us.posthog.com eu.posthog.com",
    ),
    provider(
        "mixpanel", "Mixpanel", "observability", "mixpanel.com",
        cred(
            "token", "Project token", "MIXPANEL_TOKEN MIXPANEL_PROJECT_TOKEN",
            "https://mixpanel.com/settings/project", "32 hex digits",
            fill("", 32, "0123abcd"), length(16, 128), TOKEN, secret=False,
        ),
        cred(
            "api_secret", "API secret", "MIXPANEL_API_SECRET MIXPANEL_SECRET",
            "https://mixpanel.com/settings/project", "32 hex digits",
            fill("", 32, "0123abcd"), length(16, 128), TOKEN,
        ),
        hosts=("api.mixpanel.com api-eu.mixpanel.com mixpanel.com eu.mixpanel.com"
               " data.mixpanel.com data-eu.mixpanel.com"),
    ),
    provider(
        "segment", "Segment", "observability", "segment.com",
        cred(
            "write_key", "Write key", "SEGMENT_WRITE_KEY SEGMENT_KEY",
            "https://app.segment.com/", "32 letters and digits",
            fill("", 32), length(16, 128), TOKEN, secret=False,
        ),
        hosts="api.segment.io events.eu1.segmentapis.com",
    ),
    provider(
        "amplitude", "Amplitude", "observability", "amplitude.com",
        cred(
            "api_key", "API key", "AMPLITUDE_API_KEY AMPLITUDE_KEY",
            "https://app.amplitude.com/", "32 hex digits",
            fill("", 32, "0123abcd"), length(16, 128), TOKEN, secret=False,
        ),
        cred(
            "secret_key", "Secret key", "AMPLITUDE_SECRET_KEY AMPLITUDE_SECRET",
            "https://app.amplitude.com/", "32 hex digits",
            fill("", 32, "0123abcd"), length(16, 128), TOKEN,
        ),
        hosts="api2.amplitude.com api.eu.amplitude.com amplitude.com analytics.eu.amplitude.com",
    ),
    provider(
        "newrelic", "New Relic", "observability", "newrelic.com",
        cred(
            "license_key", "Ingest license key", "NEW_RELIC_LICENSE_KEY NEWRELIC_LICENSE_KEY",
            "https://one.newrelic.com/api-keys", "40 characters ending in NRAL",
            fill("", 36, "0123abcd") + "NRAL", length(30, 100), TOKEN,
        ),
        cred(
            "user_key", "User API key", "NEW_RELIC_API_KEY NEW_RELIC_USER_KEY NEWRELIC_API_KEY",
            "https://one.newrelic.com/api-keys", "NRAK-…",
            fill("NRAK-", 32, "EXAMPLE0"), prefix("NRAK-"), length(20, 200), TOKEN,
        ),
        hosts=("api.newrelic.com api.eu.newrelic.com collector.newrelic.com log-api.newrelic.com"
               " log-api.eu.newrelic.com metric-api.newrelic.com metric-api.eu.newrelic.com"
               " otlp.nr-data.net otlp.eu01.nr-data.net"),
    ),
    provider(
        "honeycomb", "Honeycomb", "observability", "honeycomb.io",
        cred(
            "api_key", "API key", "HONEYCOMB_API_KEY HONEYCOMB_WRITEKEY HONEYCOMB_KEY",
            "https://ui.honeycomb.io/account", "hcaik_… or 22 letters and digits",
            fill("hcaik_", 64), length(16, 200), TOKEN,
        ),
        hosts="api.honeycomb.io api.eu1.honeycomb.io",
    ),
    provider(
        "grafana", "Grafana Cloud", "observability", "grafana.com grafana.net",
        cred(
            "service_account_token", "Service account token",
            "GRAFANA_SERVICE_ACCOUNT_TOKEN GRAFANA_TOKEN GRAFANA_API_KEY",
            "https://grafana.com/auth/sign-in", "glsa_…",
            fill("glsa_", 46), prefix("glsa_"), length(20, 300), TOKEN,
        ),
        cred(
            "access_policy_token", "Cloud access policy token",
            "GRAFANA_CLOUD_ACCESS_POLICY_TOKEN GRAFANA_CLOUD_API_KEY GRAFANA_CLOUD_TOKEN",
            "https://grafana.com/orgs", "glc_…",
            fill("glc_eyJvIjoiMTIz", 120), prefix("glc_"), length(20, 1000), TOKEN,
        ),
        # the Cloud API; each stack has its own host (<stack>.grafana.net)
        hosts="grafana.com",
    ),
    provider(
        "betterstack", "Better Stack", "observability", "betterstack.com",
        cred(
            "source_token", "Source token",
            "BETTERSTACK_SOURCE_TOKEN LOGTAIL_SOURCE_TOKEN BETTER_STACK_SOURCE_TOKEN",
            "https://telemetry.betterstack.com/", "24 letters and digits",
            fill("", 24), length(16, 200), TOKEN,
        ),
        # each source has its own ingesting host, shown beside its token: none is fixed
        hosts="",
    ),
    provider(
        "axiom", "Axiom", "observability", "axiom.co",
        cred(
            "token", "API token", "AXIOM_TOKEN AXIOM_API_TOKEN",
            "https://app.axiom.co/settings/api-tokens", "xaat-…",
            "xaat-" + "00000000-0000-4000-8000-000000000000",
            prefix("xaat-", "xapt-", text="starts with xaat- (or xapt- for a personal token)"),
            length(20, 200), TOKEN,
        ),
        hosts="api.axiom.co",
    ),
    provider(
        "langfuse", "Langfuse", "observability", "langfuse.com",
        cred(
            "secret_key", "Secret key", "LANGFUSE_SECRET_KEY",
            "https://cloud.langfuse.com/", "sk-lf-…",
            "sk-lf-00000000-0000-4000-8000-000000000000", prefix("sk-lf-"), length(20, 200),
            TOKEN,
        ),
        cred(
            "public_key", "Public key", "LANGFUSE_PUBLIC_KEY",
            "https://cloud.langfuse.com/", "pk-lf-…",
            "pk-lf-00000000-0000-4000-8000-000000000000", prefix("pk-lf-"), length(20, 200),
            TOKEN, secret=False,
        ),
        cred(
            "host", "Host", "LANGFUSE_HOST LANGFUSE_BASE_URL",
            "https://cloud.langfuse.com/", "https://cloud.langfuse.com",
            "https://us.cloud.langfuse.com", _URL, secret=False, format="url",
        ),
        hosts="cloud.langfuse.com us.cloud.langfuse.com",
    ),
    provider(
        "langsmith", "LangSmith", "observability", "langchain.com",
        cred(
            "api_key", "API key", "LANGSMITH_API_KEY LANGCHAIN_API_KEY",
            "https://smith.langchain.com/settings", "lsv2_pt_…",
            fill("lsv2_pt_", 51, "0123abcd"),
            prefix("lsv2_", "ls__", text="starts with lsv2_ (or ls__ for an older key)"),
            length(20, 200), B64URL,
        ),
        hosts="api.smith.langchain.com eu.api.smith.langchain.com",
    ),
    provider(
        "launchdarkly", "LaunchDarkly", "observability", "launchdarkly.com",
        cred(
            "sdk_key", "Server-side SDK key", "LAUNCHDARKLY_SDK_KEY LD_SDK_KEY",
            "https://app.launchdarkly.com/settings/projects", "sdk-…",
            "sdk-00000000-0000-4000-8000-000000000000", prefix("sdk-"), length(20, 200), TOKEN,
        ),
        cred(
            "client_side_id", "Client-side ID",
            "LAUNCHDARKLY_CLIENT_SIDE_ID LD_CLIENT_SIDE_ID LAUNCHDARKLY_CLIENT_ID",
            "https://app.launchdarkly.com/settings/projects", "24 hex digits",
            fill("", 24, "0123abcd"), length(16, 64), TOKEN, secret=False,
        ),
        cred(
            "api_token", "API access token", "LAUNCHDARKLY_API_TOKEN LAUNCHDARKLY_ACCESS_TOKEN",
            "https://app.launchdarkly.com/settings/authorization", "api-…",
            "api-00000000-0000-4000-8000-000000000000", prefix("api-"), length(20, 200), TOKEN,
        ),
        hosts=("app.launchdarkly.com sdk.launchdarkly.com stream.launchdarkly.com"
               " events.launchdarkly.com clientsdk.launchdarkly.com clientstream.launchdarkly.com"),
    ),
    provider(
        "statsig", "Statsig", "observability", "statsig.com",
        cred(
            "server_secret", "Server secret key", "STATSIG_SERVER_SECRET STATSIG_SERVER_SECRET_KEY",
            "https://console.statsig.com/", "secret-…",
            fill("secret-", 50), prefix("secret-"), length(20, 200), TOKEN,
        ),
        cred(
            "client_key", "Client API key", "STATSIG_CLIENT_KEY STATSIG_CLIENT_API_KEY",
            "https://console.statsig.com/", "client-…",
            fill("client-", 50), prefix("client-"), length(20, 200), TOKEN, secret=False,
        ),
        hosts="api.statsig.com statsigapi.net",
    ),
    provider(
        "google_analytics", "Google Analytics", "observability", "google.com",
        cred(
            "measurement_id", "Measurement ID", "GA_MEASUREMENT_ID",
            "https://analytics.google.com/", "G-…",
            "G-EXAMPLE012", prefix("G-"), length(4, 40), TOKEN, secret=False,
        ),
        hosts="www.google-analytics.com region1.google-analytics.com",
    ),
)
# fmt: on
