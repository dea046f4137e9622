"""Email and messaging providers: transactional email, SMS, chat bots, push and realtime.

Webhook URLs are credentials too: they carry their secret in the path.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry.kit import (
    ALNUM,
    B64URL,
    HEX,
    NO_BLANK,
    TOKEN,
    ask,
    chars,
    cred,
    fill,
    fmt,
    length,
    prefix,
    provider,
)
from offprompt.registry.model import Provider

_UUID: Final = fmt("uuid", "a UUID like 123e4567-e89b-12d3-a456-426614174000")
_EXAMPLE_UUID: Final = "00000000-0000-4000-8000-000000000000"
# Bot and user tokens alike; Slack answers 200 with ok: false (invalid_auth, token_revoked…) for
# a bad one.
_SLACK_AUTH_TEST: Final = ask(
    "https://slack.com/api/auth.test",
    "https://docs.slack.dev/reference/methods/auth.test",
    headers=(("Content-Type", "application/json; charset=utf-8"),),
    body="{}",
    ok_field="ok",
    account="json:team",
)

# A table, laid out by hand: one credential per block, related arguments on one line.
# fmt: off
PROVIDERS: Final[tuple[Provider, ...]] = (
    provider(
        "resend", "Resend", "messaging", "resend.com",
        cred(
            "api_key", "API key", "RESEND_API_KEY RESEND_KEY",
            "https://resend.com/api-keys", "re_…",
            fill("re_", 36), prefix("re_"), length(10, 200), B64URL,
            # a key that does not exist: 400 "API key is invalid" (403 invalid_api_key before);
            # 401 restricted_api_key is a sending-only key, so Resend knows it
            check=ask(
                "https://api.resend.com/domains",
                "https://resend.com/docs/api-reference/errors",
                rejected=(400, 403), accepted=(401,),
            ),
        ),
        hosts="api.resend.com",
    ),
    provider(
        "sendgrid", "SendGrid", "messaging", "sendgrid.com",
        cred(
            "api_key", "API key", "SENDGRID_API_KEY SENDGRID_KEY",
            "https://app.sendgrid.com/settings/api_keys", "SG.…",
            fill("SG.", 69), prefix("SG."), length(30, 200), TOKEN,
            # every key may list its own scopes; 403 is a permission, not a bad key
            check=ask(
                "https://api.sendgrid.com/v3/scopes",
                "https://www.twilio.com/docs/sendgrid/api-reference/api-key-permissions/retrieve-a-list-of-scopes-for-which-this-user-has-access",
                rejected=(401,),
            ),
        ),
        hosts="api.sendgrid.com",
    ),
    provider(
        "postmark", "Postmark", "messaging", "postmarkapp.com",
        cred(
            "server_token", "Server API token",
            "POSTMARK_SERVER_TOKEN POSTMARK_API_TOKEN POSTMARK_SERVER_API_TOKEN POSTMARK_API_KEY",
            "https://account.postmarkapp.com/servers", "a UUID", _EXAMPLE_UUID, _UUID,
            check=ask(
                "https://api.postmarkapp.com/server",
                "https://postmarkapp.com/developer/api/server-api",
                auth="header:X-Postmark-Server-Token", headers=(("Accept", "application/json"),),
                # a 403 comes from a network filter in front of the API, not from Postmark
                account="json:Name", rejected=(401,),
            ),
        ),
        cred(
            "account_token", "Account API token",
            "POSTMARK_ACCOUNT_TOKEN POSTMARK_ACCOUNT_API_TOKEN",
            "https://account.postmarkapp.com/api_tokens", "a UUID", _EXAMPLE_UUID, _UUID,
        ),
        hosts="api.postmarkapp.com",
    ),
    provider(
        "mailgun", "Mailgun", "messaging", "mailgun.com",
        cred(
            "api_key", "API key", "MAILGUN_API_KEY MAILGUN_KEY",
            "https://app.mailgun.com/settings/api_security", "32 hex digits, a dash, …",
            fill("", 32, "0123abcd") + "-0123abcd-0123abcd", length(20, 200), TOKEN,
            # API keys are global (EU domains share them), so the US host answers for every key;
            # 403 is "valid credentials but access denied" (a domain sending key)
            check=ask(
                "https://api.mailgun.net/v3/domains",
                "https://documentation.mailgun.com/docs/mailgun/api-reference/api-overview",
                auth="basic", user="api", rejected=(401,), accepted=(403,),
            ),
        ),
        cred(
            "signing_key", "Webhook signing key", "MAILGUN_WEBHOOK_SIGNING_KEY MAILGUN_SIGNING_KEY",
            "https://app.mailgun.com/settings/api_security", "32 hex digits, …",
            fill("", 32, "0123abcd"), length(16, 200), TOKEN,
        ),
        cred(
            "domain", "Sending domain", "MAILGUN_DOMAIN",
            "https://app.mailgun.com/mg/sending/domains", "mg.example.com",
            "mg.example.com",
            fmt("hostname", "a host name like db.example.com, without https:// or a path"),
            secret=False, format="hostname",
        ),
        hosts="api.mailgun.net api.eu.mailgun.net",
    ),
    provider(
        "twilio", "Twilio", "messaging", "twilio.com",
        cred(
            "account_sid", "Account SID", "TWILIO_ACCOUNT_SID TWILIO_SID",
            "https://console.twilio.com/", "AC…",
            fill("AC", 34, "0123abcd"), length(34, 34), ALNUM, secret=False,
        ),
        cred(
            "auth_token", "Auth token", "TWILIO_AUTH_TOKEN TWILIO_TOKEN",
            "https://console.twilio.com/", "32 hex digits",
            fill("", 32, "0123abcd"), length(20, 64), ALNUM,
            check=ask(
                "https://api.twilio.com/2010-04-01/Accounts.json",
                "https://www.twilio.com/docs/iam/api/account#read-multiple-account-resources",
                auth="basic", user_from="account_sid", account="json:accounts.0.friendly_name",
            ),
        ),
        cred(
            "api_key_sid", "API key SID", "TWILIO_API_KEY TWILIO_API_KEY_SID",
            "https://console.twilio.com/us1/account/keys-credentials/api-keys", "SK…",
            fill("SK", 34, "0123abcd"), length(34, 34), ALNUM, secret=False,
        ),
        cred(
            "api_key_secret", "API key secret", "TWILIO_API_SECRET TWILIO_API_KEY_SECRET",
            "https://console.twilio.com/us1/account/keys-credentials/api-keys",
            "32 letters and digits",
            fill("", 32), length(20, 64), ALNUM,
        ),
        hosts=("api.twilio.com verify.twilio.com lookups.twilio.com messaging.twilio.com"
               " conversations.twilio.com video.twilio.com"),
    ),
    provider(
        "slack", "Slack", "messaging", "slack.com",
        cred(
            "bot_token", "Bot token", "SLACK_BOT_TOKEN",
            "https://api.slack.com/apps", "xoxb-…",
            fill("xoxb-", 57, "0123-abc"), prefix("xoxb-"), length(20, 255), TOKEN,
            check=_SLACK_AUTH_TEST,
        ),
        cred(
            "user_token", "User token", "SLACK_USER_TOKEN",
            "https://api.slack.com/apps", "xoxp-…",
            fill("xoxp-", 76, "0123-abc"), prefix("xoxp-"), length(20, 255), TOKEN,
            check=_SLACK_AUTH_TEST,
        ),
        cred(
            "app_token", "App-level token", "SLACK_APP_TOKEN",
            "https://api.slack.com/apps", "xapp-…",
            fill("xapp-", 98, "1-A0-abc"), prefix("xapp-"), length(20, 255), TOKEN,
        ),
        cred(
            "signing_secret", "Signing secret", "SLACK_SIGNING_SECRET",
            "https://api.slack.com/apps", "32 hex digits",
            fill("", 32, "0123abcd"), length(16, 128), ALNUM,
        ),
        cred(
            "webhook_url", "Incoming webhook URL", "SLACK_WEBHOOK_URL SLACK_WEBHOOK",
            "https://api.slack.com/apps", "https://hooks.slack.com/services/…",
            "https://hooks.slack.com/services/T0000/B0000/EXAMPLE0EXAMPLE0",
            prefix("https://hooks.slack.com/"), NO_BLANK, format="url",
        ),
        hosts="slack.com hooks.slack.com",
    ),
    provider(
        "discord", "Discord", "messaging", "discord.com",
        cred(
            "bot_token", "Bot token", "DISCORD_BOT_TOKEN DISCORD_TOKEN",
            "https://discord.com/developers/applications", "three parts joined by dots",
            fill("", 26, "MTAxMjM0") + ".EXAMPL." + fill("", 38),
            length(50, 200),
            chars(((0x2D, 0x2E), (0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
                  "letters, digits, dots, - and _ only"),
        ),
        cred(
            "public_key", "Application public key", "DISCORD_PUBLIC_KEY",
            "https://discord.com/developers/applications", "64 hex digits",
            fill("", 64, "0123abcd"), length(64, 64), HEX, secret=False,
        ),
        cred(
            "webhook_url", "Webhook URL", "DISCORD_WEBHOOK_URL DISCORD_WEBHOOK",
            "https://discord.com/developers/applications", "https://discord.com/api/webhooks/…",
            "https://discord.com/api/webhooks/0123456789/EXAMPLE0EXAMPLE0",
            prefix("https://discord.com/api/webhooks/", "https://discordapp.com/api/webhooks/",
                   "https://ptb.discord.com/api/webhooks/",
                   "https://canary.discord.com/api/webhooks/",
                   text="starts with https://discord.com/api/webhooks/"),
            NO_BLANK, format="url",
        ),
        # gateway: the bot token in the gateway's IDENTIFY
        hosts="discord.com gateway.discord.gg",
    ),
    provider(
        "telegram", "Telegram", "messaging", "telegram.org t.me",
        cred(
            "bot_token", "Bot token", "TELEGRAM_BOT_TOKEN TELEGRAM_TOKEN TG_BOT_TOKEN",
            "https://t.me/BotFather", "123456789:AA…",
            "123456789:" + fill("AA", 35), length(30, 100),
            chars(((0x2D, 0x2D), (0x30, 0x3A), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
                  "digits, a colon, then letters, digits, - and _"),
        ),
        hosts="api.telegram.org",
    ),
    provider(
        "vonage", "Vonage", "messaging", "vonage.com nexmo.com",
        cred(
            "api_key", "API key", "VONAGE_API_KEY NEXMO_API_KEY",
            "https://dashboard.nexmo.com/", "8 hex digits",
            "0123abcd", length(6, 64), ALNUM, secret=False,
        ),
        cred(
            "api_secret", "API secret", "VONAGE_API_SECRET NEXMO_API_SECRET",
            "https://dashboard.nexmo.com/", "16 letters and digits",
            fill("", 16), length(8, 128), TOKEN,
        ),
        hosts="api.nexmo.com rest.nexmo.com",
    ),
    provider(
        "brevo", "Brevo", "messaging", "brevo.com",
        cred(
            "api_key", "API key", "BREVO_API_KEY SENDINBLUE_API_KEY",
            "https://app.brevo.com/settings/keys/api", "xkeysib-…",
            fill("xkeysib-", 89, "0123abcd"), prefix("xkeysib-"), length(30, 200), TOKEN,
        ),
        cred(
            "smtp_key", "SMTP key", "BREVO_SMTP_KEY BREVO_SMTP_PASSWORD",
            "https://app.brevo.com/settings/keys/smtp", "xsmtpsib-…",
            fill("xsmtpsib-", 90, "0123abcd"), prefix("xsmtpsib-"), length(30, 200), TOKEN,
        ),
        hosts="api.brevo.com",
    ),
    provider(
        "mailchimp", "Mailchimp", "messaging", "mailchimp.com",
        cred(
            "api_key", "API key", "MAILCHIMP_API_KEY MAILCHIMP_KEY",
            "https://admin.mailchimp.com/account/api/", "32 hex digits-us21",
            fill("", 32, "0123abcd") + "-us21", length(20, 100), TOKEN,
        ),
        # the key names its data centre, and the API is on it (<dc>.api.mailchimp.com): none is
        # fixed
        hosts="",
    ),
    provider(
        "loops", "Loops", "messaging", "loops.so",
        cred(
            "api_key", "API key", "LOOPS_API_KEY",
            "https://app.loops.so/settings?page=api", "32 hex digits",
            fill("", 32, "0123abcd"), length(16, 128), TOKEN,
        ),
        hosts="app.loops.so",
    ),
    provider(
        "pusher", "Pusher", "messaging", "pusher.com",
        cred(
            "app_id", "App ID", "PUSHER_APP_ID",
            "https://dashboard.pusher.com/", "1234567", "1234567",
            fmt("integer", "a whole number, digits only"), secret=False, format="integer",
        ),
        cred(
            "key", "Key", "PUSHER_KEY PUSHER_APP_KEY",
            "https://dashboard.pusher.com/", "20 hex digits",
            fill("", 20, "0123abcd"), length(10, 64), ALNUM, secret=False,
        ),
        cred(
            "secret", "Secret", "PUSHER_SECRET PUSHER_APP_SECRET",
            "https://dashboard.pusher.com/", "20 hex digits",
            fill("", 20, "0123abcd"), length(10, 64), ALNUM,
        ),
        cred(
            "cluster", "Cluster", "PUSHER_CLUSTER PUSHER_APP_CLUSTER",
            "https://dashboard.pusher.com/", "mt1, eu, ap2…", "mt1",
            length(2, 20), chars(((0x2D, 0x2D), (0x30, 0x39), (0x61, 0x7A)),
                                 "lowercase letters, digits and - only"),
            secret=False,
        ),
        # the REST API is per cluster (api-<cluster>.pusher.com), and the secret only signs: none is
        # fixed
        hosts="",
    ),
    provider(
        "ably", "Ably", "messaging", "ably.com",
        cred(
            "api_key", "API key", "ABLY_API_KEY ABLY_KEY",
            "https://ably.com/accounts", "appId.keyId:secret",
            "EXAMPL.e0EXAM:" + fill("", 43), length(20, 200), TOKEN,
        ),
        hosts="rest.ably.io realtime.ably.io",
    ),
    provider(
        "onesignal", "OneSignal", "messaging", "onesignal.com",
        cred(
            "app_id", "App ID", "ONESIGNAL_APP_ID",
            "https://dashboard.onesignal.com/", "a UUID", _EXAMPLE_UUID, _UUID, secret=False,
        ),
        cred(
            "rest_api_key", "REST API key", "ONESIGNAL_REST_API_KEY ONESIGNAL_API_KEY",
            "https://dashboard.onesignal.com/", "os_v2_app_…",
            fill("os_v2_app_", 113, "example0"), length(20, 300), TOKEN,
        ),
        # onesignal.com: the older /api/v1 paths
        hosts="api.onesignal.com onesignal.com",
    ),
)
# fmt: on
