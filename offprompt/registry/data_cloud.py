"""Cloud and developer tool providers: clouds, hosting, code hosts, registries and work tools.

Platform tokens carry documented prefixes (ghp_, glpat-, dop_v1_, npm_); ids and secrets use
lengths only.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry.formats import RULES
from offprompt.registry.kit import (
    ALNUM,
    B64URL,
    HEX,
    TOKEN,
    ask,
    chars,
    cred,
    either,
    fill,
    fmt,
    length,
    offer,
    prefix,
    provider,
)
from offprompt.registry.model import Provider

_UUID: Final = fmt("uuid", "a UUID like 123e4567-e89b-12d3-a456-426614174000")
_EXAMPLE_UUID: Final = "00000000-0000-4000-8000-000000000000"
_DB_NAMES: Final = "DATABASE_URL POSTGRES_URL DATABASE_PRIVATE_URL DATABASE_PUBLIC_URL"

# A table, laid out by hand: one credential per block, related arguments on one line.
# fmt: off
PROVIDERS: Final[tuple[Provider, ...]] = (
    provider(
        "aws", "Amazon Web Services", "cloud", "aws.amazon.com amazon.com",
        cred(
            "access_key_id", "Access key ID", "AWS_ACCESS_KEY_ID AWS_ACCESS_KEY",
            "https://console.aws.amazon.com/iam/home#/security_credentials", "AKIA…",
            "AKIAIOSFODNN7EXAMPLE",
            # AKIA long-term, ASIA temporary (STS); ABIA and ACCA are the rarer kinds AWS lists.
            prefix("AKIA", "ASIA", "ABIA", "ACCA",
                   text="starts with AKIA (or ASIA for a temporary key)"),
            length(16, 128), ALNUM,
        ),
        cred(
            "secret_access_key", "Secret access key", "AWS_SECRET_ACCESS_KEY AWS_SECRET_KEY",
            "https://console.aws.amazon.com/iam/home#/security_credentials",
            "40 letters, digits, + and /",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", length(30, 100),
            chars(((0x2B, 0x2B), (0x2F, 0x39), (0x41, 0x5A), (0x61, 0x7A)),
                  "letters, digits, + and / only"),
        ),
        cred(
            "session_token", "Session token", "AWS_SESSION_TOKEN AWS_SECURITY_TOKEN",
            "https://console.aws.amazon.com/iam/home#/security_credentials", "IQoJb3JpZ2lu…",
            fill("IQoJb3JpZ2lu", 400), length(100), TOKEN,
        ),
        cred(
            "region", "Region", "AWS_REGION AWS_DEFAULT_REGION",
            "https://console.aws.amazon.com/", "us-east-1", "eu-west-3",
            length(4, 32), chars(((0x2D, 0x2D), (0x30, 0x39), (0x61, 0x7A)),
                                 "lowercase letters, digits and - only (like us-east-1)"),
            secret=False,
        ),
        # endpoints are per service and region, and the secret key only signs (SigV4): none is fixed
        hosts="",
    ),
    provider(
        "gcp", "Google Cloud", "cloud", "cloud.google.com google.com",
        cred(
            "api_key", "API key", "GOOGLE_API_KEY GOOGLE_MAPS_API_KEY GOOGLE_CLOUD_API_KEY",
            "https://console.cloud.google.com/apis/credentials", "AIza…",
            fill("AIza", 39), prefix("AIza"), length(30, 100), B64URL,
        ),
        cred(
            "service_account_key", "Service account key (JSON)",
            "GOOGLE_APPLICATION_CREDENTIALS_JSON GCP_SERVICE_ACCOUNT_KEY GOOGLE_CREDENTIALS "
            "GCP_SA_KEY GOOGLE_SERVICE_ACCOUNT_KEY",
            "https://console.cloud.google.com/iam-admin/serviceaccounts",
            '{"type": "service_account", …}',
            '{"type": "service_account", "project_id": "example"}', *RULES["json"],
            format="json",
        ),
        cred(
            "project_id", "Project ID", "GOOGLE_CLOUD_PROJECT GCP_PROJECT_ID GCLOUD_PROJECT",
            "https://console.cloud.google.com/", "my-project-123456",
            "example-project-123456", length(4, 64), TOKEN, secret=False,
        ),
        # API keys go to each service's own googleapis.com host, and a service account's key only
        # signs
        hosts="",
    ),
    provider(
        "azure", "Microsoft Azure", "cloud", "azure.com microsoft.com",
        cred(
            "tenant_id", "Tenant ID", "AZURE_TENANT_ID",
            "https://portal.azure.com/", "a UUID", _EXAMPLE_UUID, _UUID, secret=False,
            format="uuid",
        ),
        cred(
            "client_id", "Client (application) ID", "AZURE_CLIENT_ID",
            "https://portal.azure.com/", "a UUID", _EXAMPLE_UUID, _UUID, secret=False,
            format="uuid",
        ),
        cred(
            "client_secret", "Client secret", "AZURE_CLIENT_SECRET",
            "https://portal.azure.com/", "40 characters with ~ . - and _",
            fill("Exa8Q~", 40), length(16, 256), TOKEN,
        ),
        cred(
            "subscription_id", "Subscription ID", "AZURE_SUBSCRIPTION_ID",
            "https://portal.azure.com/", "a UUID", _EXAMPLE_UUID, _UUID, secret=False,
            format="uuid",
        ),
        cred(
            "storage_connection_string", "Storage connection string",
            "AZURE_STORAGE_CONNECTION_STRING",
            "https://portal.azure.com/", "DefaultEndpointsProtocol=https;AccountName=…",
            "DefaultEndpointsProtocol=https;AccountName=example;AccountKey=RVhBTVBMRTA=;"
            "EndpointSuffix=core.windows.net", length(20), TOKEN,
        ),
        # the token endpoint, where the client secret goes; a storage key only signs
        hosts="login.microsoftonline.com",
    ),
    provider(
        "cloudflare", "Cloudflare", "cloud", "cloudflare.com",
        cred(
            "api_token", "API token", "CLOUDFLARE_API_TOKEN CF_API_TOKEN",
            "https://dash.cloudflare.com/profile/api-tokens", "40 letters, digits, - and _",
            fill("", 40), length(20, 200), TOKEN,
            # user tokens (the link above); an account-owned token verifies only under its account
            check=ask(
                "https://api.cloudflare.com/client/v4/user/tokens/verify",
                "https://developers.cloudflare.com/api/resources/user/subresources/tokens/methods/verify/",
                ok_field="success", rejected=(401,),
            ),
        ),
        cred(
            "account_id", "Account ID", "CLOUDFLARE_ACCOUNT_ID CF_ACCOUNT_ID",
            "https://dash.cloudflare.com/", "32 hex digits",
            fill("", 32, "0123abcd"), length(32, 32), HEX, secret=False,
        ),
        cred(
            "r2_access_key_id", "R2 access key ID", "R2_ACCESS_KEY_ID CLOUDFLARE_R2_ACCESS_KEY_ID",
            "https://dash.cloudflare.com/?to=/:account/r2/api-tokens", "32 hex digits",
            fill("", 32, "0123abcd"), length(16, 128), ALNUM, secret=False,
        ),
        cred(
            "r2_secret_access_key", "R2 secret access key",
            "R2_SECRET_ACCESS_KEY CLOUDFLARE_R2_SECRET_ACCESS_KEY",
            "https://dash.cloudflare.com/?to=/:account/r2/api-tokens", "64 hex digits",
            fill("", 64, "0123abcd"), length(16, 256), ALNUM,
        ),
        # R2 keys only sign, for the account's own host
        hosts="api.cloudflare.com",
    ),
    provider(
        "vercel", "Vercel", "cloud", "vercel.com",
        cred(
            "token", "Access token", "VERCEL_TOKEN VERCEL_API_TOKEN VERCEL_ACCESS_TOKEN",
            "https://vercel.com/account/settings/tokens", "24 letters and digits",
            fill("", 24), length(16, 200), TOKEN,
            check=ask(
                "https://api.vercel.com/v2/user",
                "https://vercel.com/docs/rest-api/user/get-the-user",
                account="json:user.username",
            ),
        ),
        cred(
            "blob_token", "Blob read-write token", "BLOB_READ_WRITE_TOKEN",
            "https://vercel.com/dashboard/stores", "vercel_blob_rw_…",
            fill("vercel_blob_rw_", 60), prefix("vercel_blob_rw_"), length(20, 200), TOKEN,
        ),
        hosts="api.vercel.com blob.vercel-storage.com",
    ),
    provider(
        "netlify", "Netlify", "cloud", "netlify.com",
        cred(
            "auth_token", "Personal access token", "NETLIFY_AUTH_TOKEN NETLIFY_TOKEN",
            "https://app.netlify.com/user/applications#personal-access-tokens", "nfp_…",
            fill("nfp_", 40), length(20, 200), TOKEN,
        ),
        cred(
            "site_id", "Site ID", "NETLIFY_SITE_ID",
            "https://app.netlify.com/", "a UUID", _EXAMPLE_UUID, _UUID, secret=False,
            format="uuid",
        ),
        hosts="api.netlify.com",
    ),
    provider(
        "github", "GitHub", "cloud", "github.com",
        cred(
            "token", "Personal access token",
            "GITHUB_TOKEN GH_TOKEN GITHUB_PAT GITHUB_ACCESS_TOKEN",
            "https://github.com/settings/personal-access-tokens", "github_pat_… or ghp_…",
            fill("github_pat_", 93),
            either(
                prefix("github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
                fmt("hex", "40 hex digits"),
                text="starts with github_pat_ or ghp_ (or is an older 40-hex-digit token)",
            ),
            length(30, 255), B64URL,
            check=ask(
                "https://api.github.com/user",
                "https://docs.github.com/en/rest/users/users#get-the-authenticated-user",
                headers=(("Accept", "application/vnd.github+json"),
                         ("X-GitHub-Api-Version", "2022-11-28")),
                # 403 is a rate limit or a policy, not a bad token
                account="json:login", rejected=(401,),
            ),
        ),
        cred(
            "client_id", "OAuth client ID", "GITHUB_CLIENT_ID GITHUB_ID AUTH_GITHUB_ID",
            "https://github.com/settings/developers", "Ov23li… or Iv1.…",
            "Ov23liEXAMPLE0EXAMPL", length(16, 64), TOKEN, secret=False,
        ),
        cred(
            "client_secret", "OAuth client secret",
            "GITHUB_CLIENT_SECRET AUTH_GITHUB_SECRET",
            "https://github.com/settings/developers", "40 hex digits",
            fill("", 40, "0123abcd"), length(20, 128), ALNUM,
        ),
        cred(
            "app_id", "App ID", "GITHUB_APP_ID",
            "https://github.com/settings/apps", "123456", "123456",
            fmt("integer", "a whole number, digits only"), secret=False, format="integer",
        ),
        cred(
            "app_private_key", "App private key", "GITHUB_APP_PRIVATE_KEY GITHUB_PRIVATE_KEY",
            "https://github.com/settings/apps", "-----BEGIN RSA PRIVATE KEY-----…",
            "-----BEGIN RSA PRIVATE KEY-----\n" + fill("", 64) + "\n-----END RSA PRIVATE KEY-----",
            *RULES["pem"], format="pem",
        ),
        cred(
            "webhook_secret", "Webhook secret", "GITHUB_WEBHOOK_SECRET",
            "https://github.com/settings/apps", "the secret you typed there",
            "EXAMPLE-webhook-secret", length(1, 1000),
        ),
        # github.com: git over HTTPS and the OAuth token exchange; the app key and webhook secret
        # only sign
        hosts="api.github.com uploads.github.com github.com",
    ),
    provider(
        "gitlab", "GitLab", "cloud", "gitlab.com",
        cred(
            "token", "Personal access token",
            "GITLAB_TOKEN GITLAB_PAT GITLAB_ACCESS_TOKEN GL_TOKEN",
            "https://gitlab.com/-/user_settings/personal_access_tokens", "glpat-…",
            # Self-managed instances may set their own prefix: none is required.
            fill("glpat-", 26), length(20, 255), TOKEN,
        ),
        # GitLab.com; a self-managed instance has its own host
        hosts="gitlab.com",
    ),
    provider(
        "npm", "npm", "cloud", "npmjs.com",
        cred(
            "token", "Access token", "NPM_TOKEN NPM_AUTH_TOKEN",
            "https://www.npmjs.com/settings/~/tokens", "npm_…",
            fill("npm_", 40), prefix("npm_"), length(20, 200), B64URL,
        ),
        hosts="registry.npmjs.org",
    ),
    provider(
        "pypi", "PyPI", "cloud", "pypi.org",
        cred(
            "token", "API token", "PYPI_TOKEN PYPI_API_TOKEN",
            "https://pypi.org/manage/account/token/", "pypi-…",
            fill("pypi-AgEIcHlwaS5vcmc", 180), prefix("pypi-"), length(50, 1000), TOKEN,
        ),
        hosts="upload.pypi.org",
    ),
    provider(
        "docker", "Docker Hub", "cloud", "docker.com",
        cred(
            "token", "Personal access token", "DOCKERHUB_TOKEN DOCKER_HUB_TOKEN DOCKER_TOKEN",
            "https://app.docker.com/settings/personal-access-tokens", "dckr_pat_…",
            fill("dckr_pat_", 36),
            either(prefix("dckr_pat_", "dckr_oat_"), fmt("uuid", "a UUID"),
                   text="starts with dckr_pat_ (or a UUID for an older token)"),
            length(20, 200), TOKEN,
        ),
        hosts="hub.docker.com auth.docker.io registry-1.docker.io",
    ),
    provider(
        "fly", "Fly.io", "cloud", "fly.io",
        cred(
            "api_token", "API token", "FLY_API_TOKEN FLY_ACCESS_TOKEN",
            "https://fly.io/user/personal_access_tokens", "FlyV1 fm2_…",
            # "FlyV1 …" tokens hold a space and commas: no character rule.
            "FlyV1 fm2_" + fill("", 300), length(20, 8000),
        ),
        hosts="api.fly.io api.machines.dev",
    ),
    provider(
        "railway", "Railway", "cloud", "railway.com railway.app",
        cred(
            "token", "Project token", "RAILWAY_TOKEN",
            "https://railway.com/account/tokens", "a UUID", _EXAMPLE_UUID, length(20, 200), TOKEN,
        ),
        cred(
            "api_token", "Account token", "RAILWAY_API_TOKEN",
            "https://railway.com/account/tokens", "a UUID", _EXAMPLE_UUID, length(20, 200), TOKEN,
        ),
        offers=(offer("postgres_url", "https://railway.com/dashboard", _DB_NAMES),),
        hosts="backboard.railway.com backboard.railway.app",
    ),
    provider(
        "render", "Render", "cloud", "render.com",
        cred(
            "api_key", "API key", "RENDER_API_KEY",
            "https://dashboard.render.com/u/settings#api-keys", "rnd_…",
            fill("rnd_", 36), prefix("rnd_"), length(20, 200), TOKEN,
        ),
        offers=(offer("postgres_url", "https://dashboard.render.com/", _DB_NAMES),),
        hosts="api.render.com",
    ),
    provider(
        "heroku", "Heroku", "cloud", "heroku.com",
        cred(
            "api_key", "API key", "HEROKU_API_KEY HEROKU_API_TOKEN",
            "https://dashboard.heroku.com/account", "HRKU-…",
            "HRKU-" + fill("", 60),
            either(prefix("HRKU-"), fmt("uuid", "a UUID"),
                   text="starts with HRKU- (or a UUID for an older key)"),
            length(20, 200), TOKEN,
        ),
        offers=(offer("postgres_url", "https://data.heroku.com/", _DB_NAMES),),
        hosts="api.heroku.com git.heroku.com",
    ),
    provider(
        "digitalocean", "DigitalOcean", "cloud", "digitalocean.com",
        cred(
            "token", "Personal access token",
            "DIGITALOCEAN_TOKEN DIGITALOCEAN_ACCESS_TOKEN DO_TOKEN DO_API_TOKEN",
            "https://cloud.digitalocean.com/account/api/tokens", "dop_v1_…",
            fill("dop_v1_", 71, "0123abcd"), prefix("dop_v1_", "doo_v1_", "dor_v1_",
                                                    text="starts with dop_v1_"),
            length(20, 200), B64URL,
        ),
        cred(
            "spaces_key", "Spaces access key", "SPACES_ACCESS_KEY_ID DO_SPACES_KEY SPACES_KEY",
            "https://cloud.digitalocean.com/spaces/access_keys", "DO00…",
            fill("DO00", 20, "EXAMPLE0"), length(16, 128), ALNUM, secret=False,
        ),
        cred(
            "spaces_secret", "Spaces secret key",
            "SPACES_SECRET_ACCESS_KEY DO_SPACES_SECRET SPACES_SECRET",
            "https://cloud.digitalocean.com/spaces/access_keys", "43 characters",
            fill("", 43), length(20, 200), TOKEN,
        ),
        offers=(offer("postgres_url", "https://cloud.digitalocean.com/databases", _DB_NAMES),),
        # Spaces keys only sign, for per-region hosts
        hosts="api.digitalocean.com",
    ),
    provider(
        "linear", "Linear", "cloud", "linear.app",
        cred(
            "api_key", "Personal API key", "LINEAR_API_KEY LINEAR_TOKEN",
            "https://linear.app/settings/account/security", "lin_api_…",
            fill("lin_api_", 48), prefix("lin_api_"), length(20, 200), B64URL,
            # a personal key goes bare in Authorization (OAuth tokens take "Bearer")
            check=ask(
                "https://api.linear.app/graphql",
                "https://linear.app/developers/graphql",
                auth="header:Authorization", headers=(("Content-Type", "application/json"),),
                body='{"query":"{ viewer { organization { name } } }"}',
                account="json:data.viewer.organization.name", rejected=(401,),
            ),
        ),
        hosts="api.linear.app",
    ),
    provider(
        "notion", "Notion", "cloud", "notion.so notion.com",
        cred(
            "api_key", "Integration secret",
            "NOTION_API_KEY NOTION_TOKEN NOTION_SECRET NOTION_INTEGRATION_TOKEN",
            "https://www.notion.so/profile/integrations", "ntn_…",
            fill("ntn_", 50),
            # ntn_ since late 2024; secret_ is the older form, too plain a word to name Notion
            either(prefix("ntn_"), prefix("secret_", distinctive=False),
                   text="starts with ntn_ (or secret_ for an older one)"),
            length(40, 100), B64URL,
            check=ask(
                "https://api.notion.com/v1/users/me",
                "https://developers.notion.com/reference/get-self",
                headers=(("Notion-Version", "2022-06-28"),),
                account="json:bot.workspace_name", rejected=(401,),
            ),
        ),
        hosts="api.notion.com",
    ),
    provider(
        "atlassian", "Atlassian (Jira, Confluence)", "cloud", "atlassian.com",
        cred(
            "api_token", "API token", "ATLASSIAN_API_TOKEN JIRA_API_TOKEN CONFLUENCE_API_TOKEN",
            "https://id.atlassian.com/manage-profile/security/api-tokens", "ATATT…",
            fill("ATATT3x", 192), length(20, 1000), TOKEN,
        ),
        # each site also has its own host (<site>.atlassian.net)
        hosts="api.atlassian.com",
    ),
    provider(
        "figma", "Figma", "cloud", "figma.com",
        cred(
            "token", "Personal access token", "FIGMA_ACCESS_TOKEN FIGMA_TOKEN FIGMA_API_KEY",
            "https://www.figma.com/settings", "figd_…",
            fill("figd_", 45), prefix("figd_"), length(20, 200), B64URL,
        ),
        hosts="api.figma.com",
    ),
    provider(
        "expo", "Expo", "cloud", "expo.dev",
        cred(
            "token", "Access token", "EXPO_TOKEN",
            "https://expo.dev/settings/access-tokens", "40 letters, digits, - and _",
            fill("", 40), length(20, 200), TOKEN,
        ),
        hosts="api.expo.dev exp.host",
    ),
    provider(
        "terraform", "HCP Terraform", "cloud", "terraform.io hashicorp.com",
        cred(
            "token", "API token", "TF_API_TOKEN TFE_TOKEN TF_TOKEN_APP_TERRAFORM_IO",
            "https://app.terraform.io/app/settings/tokens", "….atlasv1.…",
            fill("", 14) + ".atlasv1." + fill("", 67), length(30, 300), TOKEN,
        ),
        hosts="app.terraform.io",
    ),
    provider(
        "circleci", "CircleCI", "cloud", "circleci.com",
        cred(
            "token", "Personal API token", "CIRCLECI_TOKEN CIRCLE_TOKEN CIRCLECI_API_TOKEN",
            "https://app.circleci.com/settings/user/tokens", "CCIPAT_… or 40 hex digits",
            fill("CCIPAT_", 60), length(20, 200), TOKEN,
        ),
        hosts="circleci.com",
    ),
    provider(
        "mapbox", "Mapbox", "cloud", "mapbox.com",
        cred(
            "access_token", "Access token",
            "MAPBOX_ACCESS_TOKEN MAPBOX_TOKEN MAPBOX_PUBLIC_TOKEN",
            "https://console.mapbox.com/account/access-tokens/", "pk.eyJ…",
            "pk.eyJ1IjoiZXhhbXBsZSJ9." + fill("", 22),
            prefix("pk.", "sk.", "tk.", text="starts with pk. (sk. for a secret token)"),
            length(20, 300), TOKEN,
        ),
        cred(
            "secret_token", "Secret access token", "MAPBOX_SECRET_TOKEN MAPBOX_DOWNLOADS_TOKEN",
            "https://console.mapbox.com/account/access-tokens/", "sk.eyJ…",
            "sk.eyJ1IjoiZXhhbXBsZSJ9." + fill("", 22), prefix("sk."), length(20, 300), TOKEN,
        ),
        hosts="api.mapbox.com",
    ),
)
# fmt: on
