"""Data and storage providers: databases, caches, vector stores, files, search and content.

Database URLs are offers (many providers use DATABASE_URL); API keys and tokens are credentials.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry.formats import RULES
from offprompt.registry.kit import (
    ALNUM,
    B64URL,
    NO_BLANK,
    TOKEN,
    cred,
    either,
    fill,
    fmt,
    length,
    offer,
    prefix,
    provider,
    scheme,
)
from offprompt.registry.model import Provider

_URL: Final = fmt("url", "a URL with a scheme and a host, like https://example.com")
_HTTPS: Final = scheme("https://")
_JWT_EXAMPLE: Final = (
    "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoiZXhhbXBsZSJ9.EXAMPLE0EXAMPLE0EXAMPLE0EXAMPLE"
)
_DB_NAMES: Final = "DATABASE_URL POSTGRES_URL POSTGRES_PRISMA_URL DIRECT_URL DATABASE_URL_UNPOOLED"

# A table, laid out by hand: one credential per block, related arguments on one line.
# fmt: off
PROVIDERS: Final[tuple[Provider, ...]] = (
    provider(
        "supabase", "Supabase", "data", "supabase.com supabase.co",
        cred(
            "url", "Project URL", "SUPABASE_URL",
            "https://supabase.com/dashboard/project/_/settings/api", "https://….supabase.co",
            "https://example.supabase.co", _HTTPS, _URL, secret=False, format="url",
        ),
        cred(
            "publishable_key", "Publishable (anon) key",
            "SUPABASE_ANON_KEY SUPABASE_PUBLISHABLE_KEY",
            "https://supabase.com/dashboard/project/_/settings/api-keys",
            "sb_publishable_… or eyJ…",
            fill("sb_publishable_", 46),
            either(prefix("sb_publishable_"), fmt("jwt", "a JWT"),
                   text="starts with sb_publishable_, or a JWT (eyJ…) for the legacy anon key"),
            length(20, 2000), TOKEN, secret=False,
        ),
        cred(
            "secret_key", "Secret (service role) key",
            "SUPABASE_SERVICE_ROLE_KEY SUPABASE_SECRET_KEY SUPABASE_SERVICE_KEY",
            "https://supabase.com/dashboard/project/_/settings/api-keys", "sb_secret_… or eyJ…",
            _JWT_EXAMPLE,
            either(prefix("sb_secret_"), fmt("jwt", "a JWT"),
                   text="starts with sb_secret_, or a JWT (eyJ…) for the legacy service role key"),
            length(20, 2000), TOKEN,
        ),
        offers=(offer("postgres_url", "https://supabase.com/dashboard/project/_?showConnect=true",
                      _DB_NAMES + " SUPABASE_DB_URL"),),
        # keys go to the project's own host (<ref>.supabase.co): none is fixed
        hosts="",
    ),
    provider(
        "neon", "Neon", "data", "neon.tech neon.com",
        cred(
            "api_key", "API key", "NEON_API_KEY",
            "https://console.neon.tech/app/settings/api-keys", "napi_…",
            fill("napi_", 64), length(20, 200), TOKEN,
        ),
        offers=(offer("postgres_url", "https://console.neon.tech/app/projects", _DB_NAMES),),
        # the API; databases are per endpoint
        hosts="console.neon.tech",
    ),
    provider(
        "planetscale", "PlanetScale", "data", "planetscale.com",
        cred(
            "service_token", "Service token", "PLANETSCALE_SERVICE_TOKEN",
            "https://app.planetscale.com/", "pscale_tkn_…",
            fill("pscale_tkn_", 54), prefix("pscale_tkn_"), length(20, 200), TOKEN,
        ),
        cred(
            "service_token_id", "Service token ID", "PLANETSCALE_SERVICE_TOKEN_ID",
            "https://app.planetscale.com/", "12 letters and digits",
            fill("", 12, "example0"), length(4, 64), ALNUM, secret=False,
        ),
        offers=(offer("postgres_url", "https://app.planetscale.com/", _DB_NAMES),),
        hosts="api.planetscale.com",
    ),
    provider(
        "turso", "Turso", "data", "turso.tech",
        cred(
            "database_url", "Database URL", "TURSO_DATABASE_URL TURSO_URL LIBSQL_URL",
            "https://app.turso.tech/", "libsql://….turso.io",
            "libsql://example-org.turso.io",
            scheme("libsql://", "https://", "wss://", "http://", "ws://", "file:",
                   text="starts with libsql:// (or https://, wss://, file:)"),
            NO_BLANK, secret=False, format="url",
        ),
        cred(
            "auth_token", "Auth token", "TURSO_AUTH_TOKEN LIBSQL_AUTH_TOKEN",
            "https://app.turso.tech/", "eyJ…", _JWT_EXAMPLE, *RULES["jwt"], format="jwt",
        ),
        # the auth token goes to the database's own host (<db>-<org>.turso.io): none is fixed
        hosts="",
    ),
    provider(
        "mongodb", "MongoDB Atlas", "data", "mongodb.com",
        cred(
            "uri", "Connection string", "MONGODB_URI MONGODB_URL MONGO_URI MONGO_URL",
            "https://cloud.mongodb.com/", "mongodb+srv://user:password@….mongodb.net/",
            "mongodb+srv://app:EXAMPLE0@cluster0.example.mongodb.net/app",
            scheme("mongodb+srv://", "mongodb://"),
            fmt("url_host", "has a host after the scheme: user:password@host/db"), NO_BLANK,
            format="url",
        ),
        # the URI names its own cluster's hosts: none is fixed
        hosts="",
    ),
    provider(
        "redis", "Redis Cloud", "data", "redis.io redislabs.com",
        cred(
            "url", "Connection URL", "REDIS_URL REDIS_URI REDIS_TLS_URL",
            "https://cloud.redis.io/", "redis://default:password@host:port",
            "rediss://default:EXAMPLE0@redis.example.com:6380",
            scheme("redis://", "rediss://", "unix://",
                   text="starts with redis:// or rediss:// (unix:// for a socket)"),
            NO_BLANK,
            format="url",
        ),
        # the URL names its own database's host: none is fixed
        hosts="",
    ),
    provider(
        "upstash", "Upstash", "data", "upstash.com upstash.io",
        cred(
            "redis_rest_url", "Redis REST URL", "UPSTASH_REDIS_REST_URL KV_REST_API_URL",
            "https://console.upstash.com/", "https://….upstash.io",
            "https://example-12345.upstash.io", _HTTPS, _URL, secret=False, format="url",
        ),
        cred(
            "redis_rest_token", "Redis REST token", "UPSTASH_REDIS_REST_TOKEN KV_REST_API_TOKEN",
            "https://console.upstash.com/", "AX…",
            fill("AX", 60), length(20, 400), TOKEN,
        ),
        cred(
            "qstash_token", "QStash token", "QSTASH_TOKEN",
            "https://console.upstash.com/qstash", "eyJ…",
            fill("eyJVc2VySUQiOi", 80), length(20, 400), TOKEN,
        ),
        cred(
            "qstash_current_signing_key", "QStash current signing key",
            "QSTASH_CURRENT_SIGNING_KEY",
            "https://console.upstash.com/qstash", "sig_…",
            fill("sig_", 32), prefix("sig_"), length(10, 200), TOKEN,
        ),
        cred(
            "qstash_next_signing_key", "QStash next signing key", "QSTASH_NEXT_SIGNING_KEY",
            "https://console.upstash.com/qstash", "sig_…",
            fill("sig_", 32), prefix("sig_"), length(10, 200), TOKEN,
        ),
        # the Redis REST token goes to the database's own host (<db>.upstash.io)
        hosts="qstash.upstash.io",
    ),
    provider(
        "firebase", "Firebase", "data", "firebase.google.com google.com",
        cred(
            "api_key", "Web API key", "FIREBASE_API_KEY",
            "https://console.firebase.google.com/", "AIza…",
            fill("AIza", 39), prefix("AIza"), length(30, 100), B64URL, secret=False,
        ),
        cred(
            "project_id", "Project ID", "FIREBASE_PROJECT_ID",
            "https://console.firebase.google.com/", "my-project-1234",
            "example-project-1234", length(4, 64), TOKEN, secret=False,
        ),
        cred(
            "client_email", "Service account email", "FIREBASE_CLIENT_EMAIL",
            "https://console.firebase.google.com/", "…@….iam.gserviceaccount.com",
            "firebase-adminsdk@example.iam.gserviceaccount.com", *RULES["email"],
            secret=False, format="email",
        ),
        cred(
            "private_key", "Service account private key", "FIREBASE_PRIVATE_KEY",
            "https://console.firebase.google.com/", "-----BEGIN PRIVATE KEY-----…",
            "-----BEGIN PRIVATE KEY-----\\n" + fill("", 64) + "\\n-----END PRIVATE KEY-----\\n",
            *RULES["pem"], format="pem",
        ),
        cred(
            "service_account", "Service account JSON",
            "FIREBASE_SERVICE_ACCOUNT FIREBASE_SERVICE_ACCOUNT_KEY FIREBASE_ADMIN_CREDENTIALS",
            "https://console.firebase.google.com/", '{"type": "service_account", …}',
            '{"type": "service_account", "project_id": "example"}', *RULES["json"],
            format="json",
        ),
        # the web API key's Auth APIs; the service account's private key only signs
        hosts="identitytoolkit.googleapis.com securetoken.googleapis.com",
    ),
    provider(
        "pinecone", "Pinecone", "data", "pinecone.io",
        cred(
            "api_key", "API key", "PINECONE_API_KEY",
            "https://app.pinecone.io/", "pcsk_…",
            fill("pcsk_", 75), either(
                prefix("pcsk_"), fmt("uuid", "a UUID"),
                text="starts with pcsk_, or a UUID for an older key",
            ),
            length(20, 200), TOKEN,
        ),
        # the control plane; each index has its own host
        hosts="api.pinecone.io",
    ),
    provider(
        "qdrant", "Qdrant Cloud", "data", "qdrant.io qdrant.tech",
        cred(
            "api_key", "API key", "QDRANT_API_KEY",
            "https://cloud.qdrant.io/", "the key shown once at creation",
            fill("", 64), length(16, 1000), TOKEN,
        ),
        cred(
            "url", "Cluster URL", "QDRANT_URL QDRANT_HOST",
            "https://cloud.qdrant.io/", "https://….cloud.qdrant.io:6333",
            "https://example.eu-central.aws.cloud.qdrant.io:6333", _URL,
            secret=False, format="url",
        ),
        # the key goes to the cluster's own host (<id>.<region>.cloud.qdrant.io): none is fixed
        hosts="",
    ),
    provider(
        "weaviate", "Weaviate Cloud", "data", "weaviate.cloud weaviate.io",
        cred(
            "api_key", "API key", "WEAVIATE_API_KEY",
            "https://console.weaviate.cloud/", "the cluster's admin key",
            fill("", 40), length(16, 1000), TOKEN,
        ),
        cred(
            "url", "REST endpoint", "WEAVIATE_URL WEAVIATE_HOST WCD_URL",
            "https://console.weaviate.cloud/", "https://….weaviate.cloud",
            "https://example.c0.europe-west3.gcp.weaviate.cloud", _URL,
            secret=False, format="url",
        ),
        # the key goes to the cluster's own host: none is fixed
        hosts="",
    ),
    provider(
        "convex", "Convex", "data", "convex.dev",
        cred(
            "deploy_key", "Deploy key", "CONVEX_DEPLOY_KEY",
            "https://dashboard.convex.dev/", "prod:…|…",
            "prod:example-animal-123|" + fill("eyJ2MiI6", 60), length(20, 1000), TOKEN,
        ),
        # the CLI asks it for the key's deployment; deployments are <name>.convex.cloud
        hosts="api.convex.dev",
    ),
    provider(
        "uploadthing", "UploadThing", "data", "uploadthing.com",
        cred(
            "token", "Token", "UPLOADTHING_TOKEN",
            "https://uploadthing.com/dashboard", "eyJhcGlLZXkiOi…",
            fill("eyJhcGlLZXkiOi", 160), length(20, 2000), TOKEN,
        ),
        hosts="api.uploadthing.com",
    ),
    provider(
        "cloudinary", "Cloudinary", "data", "cloudinary.com",
        cred(
            "url", "API environment variable", "CLOUDINARY_URL",
            "https://console.cloudinary.com/settings/api-keys",
            "cloudinary://api_key:api_secret@cloud_name",
            "cloudinary://123456789012345:EXAMPLE0EXAMPLE0EXAMPLE0EXA@example",
            prefix("cloudinary://"), NO_BLANK, format="url",
        ),
        cred(
            "api_key", "API key", "CLOUDINARY_API_KEY CLOUDINARY_KEY",
            "https://console.cloudinary.com/settings/api-keys", "15 digits",
            "123456789012345", length(6, 40), ALNUM, secret=False,
        ),
        cred(
            "api_secret", "API secret", "CLOUDINARY_API_SECRET CLOUDINARY_SECRET",
            "https://console.cloudinary.com/settings/api-keys", "27 letters, digits, - and _",
            fill("", 27), length(10, 100), B64URL,
        ),
        cred(
            "cloud_name", "Cloud name", "CLOUDINARY_CLOUD_NAME",
            "https://console.cloudinary.com/settings/api-keys", "my-cloud",
            "example", length(1, 100), TOKEN, secret=False,
        ),
        hosts="api.cloudinary.com",
    ),
    provider(
        "algolia", "Algolia", "data", "algolia.com",
        cred(
            "app_id", "Application ID", "ALGOLIA_APP_ID ALGOLIA_APPLICATION_ID",
            "https://dashboard.algolia.com/account/api-keys/all", "10 capitals and digits",
            "EXAMPLE012", length(4, 40), ALNUM, secret=False,
        ),
        cred(
            "admin_key", "Admin API key", "ALGOLIA_ADMIN_KEY ALGOLIA_ADMIN_API_KEY ALGOLIA_API_KEY",
            "https://dashboard.algolia.com/account/api-keys/all", "32 hex digits",
            fill("", 32, "0123abcd"), length(16, 256), TOKEN,
        ),
        cred(
            "search_key", "Search-only API key", "ALGOLIA_SEARCH_KEY ALGOLIA_SEARCH_API_KEY",
            "https://dashboard.algolia.com/account/api-keys/all", "32 hex digits",
            fill("", 32, "0123abcd"), length(16, 1000), TOKEN, secret=False,
        ),
        # search and indexing go to the app's own hosts (<APP_ID>.algolia.net)
        hosts="analytics.algolia.com insights.algolia.io",
    ),
    provider(
        "contentful", "Contentful", "data", "contentful.com",
        cred(
            "space_id", "Space ID", "CONTENTFUL_SPACE_ID",
            "https://app.contentful.com/", "12 letters and digits",
            fill("", 12, "example0"), length(4, 64), ALNUM, secret=False,
        ),
        cred(
            "delivery_token", "Content Delivery API token",
            "CONTENTFUL_ACCESS_TOKEN CONTENTFUL_DELIVERY_TOKEN CONTENTFUL_DELIVERY_ACCESS_TOKEN",
            "https://app.contentful.com/", "43 letters, digits, - and _",
            fill("", 43), length(20, 200), B64URL,
        ),
        cred(
            "management_token", "Personal access token (management)",
            "CONTENTFUL_MANAGEMENT_TOKEN CONTENTFUL_MANAGEMENT_ACCESS_TOKEN",
            "https://app.contentful.com/account/profile/cma_tokens", "CFPAT-…",
            fill("CFPAT-", 49), prefix("CFPAT-"), length(20, 200), B64URL,
        ),
        hosts=("cdn.contentful.com preview.contentful.com api.contentful.com"
               " upload.contentful.com graphql.contentful.com"),
    ),
    provider(
        "airtable", "Airtable", "data", "airtable.com",
        cred(
            "token", "Personal access token", "AIRTABLE_TOKEN AIRTABLE_API_KEY AIRTABLE_PAT",
            "https://airtable.com/create/tokens", "pat….…",
            "patEXAMPLE012345." + fill("", 64, "0123abcd"), prefix("pat"), length(20, 200),
            TOKEN,
        ),
        hosts="api.airtable.com",
    ),
    provider(
        "sanity", "Sanity", "data", "sanity.io",
        cred(
            "project_id", "Project ID", "SANITY_PROJECT_ID",
            "https://www.sanity.io/manage", "8 letters and digits",
            "example0", length(4, 40), ALNUM, secret=False,
        ),
        cred(
            "token", "API token", "SANITY_API_TOKEN SANITY_TOKEN SANITY_API_READ_TOKEN",
            "https://www.sanity.io/manage", "sk…",
            fill("sk", 180), length(20, 1000), TOKEN,
        ),
        # the global API; project APIs are <projectId>.api.sanity.io
        hosts="api.sanity.io",
    ),
)
# fmt: on
