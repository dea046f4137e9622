"""The table both rules engines run: hand-written edge cases with the verdict they must reach,
then cases built from every credential's example and seeded random values (verdicts compared).

A case is `(ref, value)`: `ref` is a provider ref (`stripe/secret_key`) or a format id.
"""

import random

from offprompt.registry import PROVIDERS, Field, format_ids, resolve

# (ref, value, ok): what each engine must decide, not only agree on.
HAND: list[tuple[str, str, bool]] = [
    # JSON: the strict grammar both runtimes decide by hand.
    ("json", "{}", True),
    ("json", "[]", True),
    ("json", '{"a":1}', True),
    ("json", ' {"a" : [1, 2.5e-3, true, false, null]} ', True),
    ("json", '{"k":"v"}\n', True),
    ("json", '{"a":1,"a":2}', True),
    ("json", "123456789012345678901234567890", True),
    ("json", "1e400", True),
    ("json", "-0", True),
    ("json", '"\\ud800"', True),
    ("json", '"a\\"b"', True),
    ("json", '"\\u00e9\\n\\t\\/"', True),
    ("json", '"😀"', True),
    ("json", "[[[[]]]]", True),
    ("json", "[" * 512 + "]" * 512, True),
    ("json", "[" * 513 + "]" * 513, False),
    ("json", "true", True),
    ("json", "NaN", False),
    ("json", "[NaN]", False),
    ("json", "Infinity", False),
    ("json", "-Infinity", False),
    ("json", '{"a":1,}', False),
    ("json", "[1,]", False),
    ("json", "{'a':1}", False),
    ("json", "", False),
    ("json", " ", False),
    ("json", "01", False),
    ("json", "1.", False),
    ("json", ".5", False),
    ("json", "1e", False),
    ("json", "1e+", False),
    ("json", '"\x00"', False),
    ("json", '"\t"', False),
    ("json", '"\\x41"', False),
    ("json", '"\\u00G1"', False),
    ("json", "\ufeff{}", False),
    ("json", '{"a":1}x', False),
    ("json", "tru", False),
    ("json", "nul", False),
    ("json", '"abc', False),
    ("json", '{"a" 1}', False),
    ("json", "{1:2}", False),
    ("json", "[1 2]", False),
    ("json", "// comment\n{}", False),
    ("json", '{"a":[1,2}', False),
    # PEM: BEGIN line first, the matching END line anywhere after it.
    ("pem", "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----", True),
    ("pem", "-----BEGIN PRIVATE KEY-----\\nMIIB\\n-----END PRIVATE KEY-----\\n", True),
    ("pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", True),
    ("pem", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----", True),
    ("pem", "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----", False),
    ("pem", "-----BEGIN PRIVATE KEY-----\nMIIB", False),
    ("pem", "-----BEGIN private key-----\nMIIB\n-----END private key-----", False),
    ("pem", "-----BEGIN -----\n-----END -----", False),
    ("pem", " -----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----", False),
    ("pem", "MIIB", False),
    # JWT: three base64url parts, the last one may be empty.
    ("jwt", "a.b.c", True),
    ("jwt", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", True),
    ("jwt", "a.b", False),
    ("jwt", "a.b.c.d", False),
    ("jwt", "a=.b.c", False),
    ("jwt", "..", False),
    ("jwt", "", False),
    ("jwt", "a.b.c\n", False),
    # UUID
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", True),
    ("uuid", "123E4567-E89B-12D3-A456-426614174000", True),
    ("uuid", "123e4567e89b12d3a456426614174000", False),
    ("uuid", "{123e4567-e89b-12d3-a456-426614174000}", False),
    ("uuid", "123e4567-e89b-12d3-a456-42661417400", False),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000\n", False),
    # Email
    ("email", "a@b.co", True),
    ("email", "first.last+tag@mail.example.org", True),
    ("email", "名前@例え.jp", True),
    ("email", "a@b", False),
    ("email", "a b@c.d", False),
    ("email", "@b.c", False),
    ("email", "a@@b.c", False),
    ("email", "a@b..c", False),
    ("email", "a@b.c.", False),
    # URL
    ("url", "https://x", True),
    ("url", "http://localhost:8080", True),
    ("url", "ftp://a/b", True),
    ("url", "HTTPS://EXAMPLE.COM/a?b=c#d", True),
    ("url", "https://user:pass@host/path", True),
    ("url", "https://", False),
    ("url", "example.com", False),
    ("url", "https://a b", False),
    ("url", "https:///path", False),
    ("url", "1http://x", False),
    ("url", "https://a/b c", False),
    # Host names
    ("hostname", "db.example.com", True),
    ("hostname", "localhost", True),
    ("hostname", "127.0.0.1", True),
    ("hostname", "::1", True),
    ("hostname", "[::1]", True),
    ("hostname", "[::1]:5432", True),
    ("hostname", "db.example.com:5432", True),
    ("hostname", "x.com.", True),
    ("hostname", "a_b.internal", True),
    ("hostname", "https://x.com", False),
    ("hostname", "x.com/path", False),
    ("hostname", "a..b", False),
    ("hostname", ".", False),
    ("hostname", "", False),
    ("hostname", "a" * 261, False),
    # Numbers, hex, base64
    ("integer", "0", True),
    ("integer", "-5", True),
    ("integer", "+5", True),
    ("integer", "12345678901234567890", True),
    ("integer", "1.0", False),
    ("integer", "1e3", False),
    ("integer", " 1", False),
    ("integer", "١٢", False),
    ("integer", "", False),
    ("hex", "deadBEEF", True),
    ("hex", "0xff", True),
    ("hex", "0x", False),
    ("hex", "xyz", False),
    ("hex", "", False),
    ("base64", "SGVsbG8=", True),
    ("base64", "SGVsbG8", True),
    ("base64", "a-b_c", True),
    ("base64", "SGVs\nbG8=", True),
    ("base64", "a=b", False),
    ("base64", "===", False),
    ("base64", "a===", False),
    # Postgres URLs
    ("postgres_url", "postgres://u:p@h:5432/d", True),
    ("postgres_url", "postgresql://h/d", True),
    ("postgres_url", "postgresql:///d?host=/var/run/postgresql", True),
    ("postgres_url", "postgresql://[::1]:5432/d", True),
    ("postgres_url", "postgresql://h1:1,h2:2/d", True),
    ("postgres_url", "postgresql://user@host", True),
    ("postgres_url", "postgresql:///d", False),
    ("postgres_url", "mysql://h/d", False),
    ("postgres_url", "postgres://u:p@/d", False),
    ("postgres_url", "postgres://u:p w@h/d", False),
    ("postgres_url", "POSTGRES://h/d", False),
    ("neon/postgres_url", "postgresql://app:pw@ep-x.eu-central-1.aws.neon.tech/neondb", True),
    # Text takes anything.
    ("text", "anything at all", True),
    ("text", "", True),
    ("text", 'multi\nline "quoted" 😀', True),
    # Credentials: prefixes, lengths, characters, and either-of.
    ("stripe/secret_key", "sk_live_" + "a1B2" * 6, True),
    ("stripe/secret_key", "rk_test_" + "a1B2" * 6, True),
    ("stripe/secret_key", "pk_test_" + "a1B2" * 6, False),
    ("stripe/secret_key", "whsec_" + "a1B2" * 6, False),
    ("stripe/secret_key", "sk-proj-" + "a1B2" * 12, False),
    ("stripe/secret_key", "sk_live_abc", False),
    ("stripe/secret_key", "sk_live_" + "a1B2" * 3 + " " + "a1B2" * 3, False),
    ("stripe/secret_key", '"sk_live_' + "a1B2" * 6 + '"', False),
    ("stripe/secret_key", "sk_live_…", False),
    ("stripe/publishable_key", "pk_live_" + "a1B2" * 6, True),
    ("stripe/publishable_key", "sk_live_" + "a1B2" * 6, False),
    ("stripe/webhook_secret", "whsec_" + "a1B2" * 8, True),
    ("stripe/webhook_secret", "sk_test_" + "a1B2" * 6, False),
    ("anthropic/api_key", "sk-ant-api03-" + "a1B2" * 20, True),
    ("anthropic/api_key", "sk-proj-" + "a1B2" * 20, False),
    ("anthropic/api_key", "sk-" + "a1B2" * 12, False),
    ("openai/api_key", "sk-ant-api03-" + "a1B2" * 20, True),
    ("openai/api_key", "sk-proj-" + "a1B2_-" * 20, True),
    ("openai/api_key", "sk-" + "a1B2" * 12, True),
    ("openai/api_key", "sk-or-v1-" + "ab12" * 16, True),
    ("openai/api_key", "AIza" + "a1B2" * 9, False),
    ("deepseek/api_key", "sk-proj-" + "a1B2" * 20, True),
    ("gemini/api_key", "AIzaSyA" + "a1B2" * 8, True),
    ("github/token", "ghp_" + "a1B2" * 9, True),
    ("github/token", "gho_" + "a1B2" * 9, True),
    ("github/token", "github_pat_" + "a1B2" * 20, True),
    ("github/token", "glpat-" + "a1B2" * 5, False),
    ("github/token", "GHP_" + "a1B2" * 9, False),
    ("aws/access_key_id", "AKIAIOSFODNN7EXAMPLE", True),
    ("aws/access_key_id", "ASIAIOSFODNN7EXAMPLE", True),
    ("aws/access_key_id", "akiaiosfodnn7example", False),
    ("aws/secret_access_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", True),
    ("aws/secret_access_key", "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY", False),
    ("supabase/secret_key", "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.abcDEF123", True),
    ("supabase/secret_key", "sb_secret_" + "a1B2" * 8, True),
    ("supabase/secret_key", "sb_publishable_" + "a1B2" * 8, False),
    ("supabase/publishable_key", "sb_publishable_" + "a1B2" * 8, True),
    ("sentry/auth_token", "0123456789abcdef" * 4, True),
    ("sentry/auth_token", "sntryu_" + "ab12" * 16, True),
    ("sentry/auth_token", "xyz_" + "ab12" * 16, False),
    ("google/client_secret", "a1B2" * 6, True),
    ("google/client_secret", "GOCSPX-" + "a1B2" * 7, True),
    ("google/client_secret", "a1B2" * 8, False),
    ("docker/token", "123e4567-e89b-12d3-a456-426614174000", True),
    ("docker/token", "dckr_pat_" + "a1B2" * 7, True),
    ("fly/api_token", "FlyV1 fm2_" + "a1B2,/+=" * 10, True),
    ("discord/webhook_url", "https://discord.com/api/webhooks/123/abc", True),
    ("discord/webhook_url", "https://example.com/api/webhooks/123/abc", False),
    ("slack/webhook_url", "https://hooks.slack.com/services/T0/B0/xyz", True),
    ("twilio/account_sid", "AC" + "0123abcd" * 4, True),
    ("twilio/account_sid", "AC" + "0123abcd" * 4 + "0", False),
    ("telegram/bot_token", "123456789:AA" + "a1B2_-" * 6, True),
    ("vault/token", "hvs." + "a1B2" * 20, True),
    ("vault/token", "s." + "a1B2" * 6, True),
    ("vault/token", "x." + "a1B2" * 6, False),
    ("datadog/api_key", "0123abcd" * 4, True),
    ("datadog/api_key", "0123abcg" * 4, False),
    ("mongodb/uri", "mongodb+srv://u:p@cluster0.abc.mongodb.net/db?retryWrites=true", True),
    ("mongodb/uri", "mongodb://localhost:27017", True),
    ("mongodb/uri", "postgres://h/d", False),
    ("redis/url", "redis://localhost:6379/0", True),
    ("redis/url", "unix:///run/redis.sock", True),
    ("redis/url", "http://localhost:6379", False),
    ("github/token", "0123456789abcdef0123456789abcdef01234567", True),
    ("mollie/api_key", "access_" + "a1B2" * 6, True),
    ("turso/database_url", "file:local.db", True),
    (
        "firebase/private_key",
        "-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----",
        True,
    ),
    ("gcp/service_account_key", '{"type": "service_account"}', True),
    ("gcp/service_account_key", "{type: service_account}", False),
    ("azure/tenant_id", "123e4567-e89b-12d3-a456-426614174000", True),
    ("azure/tenant_id", "not-a-uuid", False),
    ("pusher/app_id", "1234567", True),
    ("pusher/app_id", "12a4567", False),
    ("aws/region", "us-east-1", True),
    ("aws/region", "US-EAST-1", False),
]

# Characters that exercise the charset descriptions and code point counting.
_PIECES = [*" \t\n\r\"'`…é😀\x00\x7f=./+:\u2028“漢-_"]
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def field_for(ref: str) -> Field | None:
    """The field a case runs against: a provider ref, or a format id."""
    if "/" in ref:
        return resolve("CASE", provider=ref)
    return resolve("CASE", format=ref)


def credential_refs() -> list[str]:
    """Every `provider/credential` ref, in registry order."""
    return [f"{p.id}/{c.key}" for p in PROVIDERS for c in p.credentials]


def built() -> list[tuple[str, str]]:
    """Per credential: its example, broken five ways, and the next credential's example."""
    creds = [(f"{p.id}/{c.key}", c.example) for p in PROVIDERS for c in p.credentials]
    out: list[tuple[str, str]] = []
    for i, (ref, example) in enumerate(creds):
        other = creds[(i + 1) % len(creds)][1]
        middle = len(example) // 2
        out += [
            (ref, example),
            (ref, example[:5]),
            (ref, example[:middle] + " " + example[middle:]),
            (ref, example + "…"),
            (ref, example.upper()),
            (ref, "x" + example),
            (ref, other),
        ]
    return out


def fuzzed(n: int = 400) -> list[tuple[str, str]]:
    """Seeded random values against random fields: known prefixes, odd characters, any length."""
    rng = random.Random(20261130)  # noqa: S311 - seeded on purpose: reproducible cases
    refs = [*credential_refs(), *format_ids()]
    prefixes = "sk- sk-ant- sk_live_ pk_test_ ghp_ AIza xoxb- re_ whsec_ eyJ postgres:// {".split()
    prefixes += ["https://", "[", "-----BEGIN X-----"]
    out: list[tuple[str, str]] = []
    for _ in range(n):
        body = "".join(
            rng.choice(_PIECES) if rng.random() < 0.1 else rng.choice(_ALNUM)
            for _ in range(rng.randrange(0, 120))
        )
        start = rng.choice(prefixes) if rng.random() < 0.6 else ""
        out.append((rng.choice(refs), start + body))
    return out


def all_cases() -> list[tuple[str, str]]:
    """The whole table: hand-written, built from examples, fuzzed."""
    return [(ref, value) for ref, value, _ in HAND] + built() + fuzzed()
