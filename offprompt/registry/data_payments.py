"""Payments and commerce providers: card processors, merchants of record, banking data.

Test and live keys share a field: both prefixes pass, since projects switch between them.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry.kit import (
    ALNUM,
    B64URL,
    HEX,
    TOKEN,
    ask,
    cred,
    fill,
    length,
    prefix,
    provider,
)
from offprompt.registry.model import Provider

# A table, laid out by hand: one credential per block, related arguments on one line.
# fmt: off
PROVIDERS: Final[tuple[Provider, ...]] = (
    provider(
        "stripe", "Stripe", "payments", "stripe.com",
        cred(
            "secret_key", "Secret key", "STRIPE_SECRET_KEY STRIPE_API_KEY STRIPE_SK",
            "https://dashboard.stripe.com/apikeys", "sk_live_… or sk_test_…",
            fill("sk_test_", 107),
            # Restricted keys (rk_) stand in for the secret key with fewer permissions.
            prefix("sk_live_", "sk_test_", "rk_live_", "rk_test_",
                   text="starts with sk_live_ or sk_test_ (rk_ for a restricted key)"),
            length(20, 255), B64URL,
            check=ask(
                "https://api.stripe.com/v1/account",
                "https://docs.stripe.com/api/accounts/retrieve",
                # 403: "the API key doesn't have permissions" (a restricted key), so Stripe knows it
                account="json:id", rejected=(401,), accepted=(403,),
            ),
        ),
        cred(
            "publishable_key", "Publishable key",
            "STRIPE_PUBLISHABLE_KEY STRIPE_PUBLIC_KEY STRIPE_PK",
            "https://dashboard.stripe.com/apikeys", "pk_live_… or pk_test_…",
            fill("pk_test_", 107), prefix("pk_live_", "pk_test_"), length(20, 255), B64URL,
            secret=False,
        ),
        cred(
            "webhook_secret", "Webhook signing secret",
            "STRIPE_WEBHOOK_SECRET STRIPE_WEBHOOK_SIGNING_SECRET STRIPE_ENDPOINT_SECRET",
            "https://dashboard.stripe.com/webhooks", "whsec_…",
            fill("whsec_", 70), prefix("whsec_"), length(20, 200), TOKEN,
        ),
        # files: uploads; connect: OAuth with the secret key. The webhook secret is never sent
        hosts="api.stripe.com files.stripe.com connect.stripe.com",
    ),
    provider(
        "paypal", "PayPal", "payments", "paypal.com",
        cred(
            "client_id", "Client ID", "PAYPAL_CLIENT_ID",
            "https://developer.paypal.com/dashboard/applications", "80 letters, digits, - and _",
            fill("A", 80), length(20, 200), B64URL, secret=False,
        ),
        cred(
            "client_secret", "Client secret", "PAYPAL_CLIENT_SECRET PAYPAL_SECRET",
            "https://developer.paypal.com/dashboard/applications", "80 letters, digits, - and _",
            fill("E", 80), length(20, 200), B64URL,
        ),
        hosts="api-m.paypal.com api-m.sandbox.paypal.com",
    ),
    provider(
        "square", "Square", "payments", "squareup.com",
        cred(
            "access_token", "Access token", "SQUARE_ACCESS_TOKEN SQUARE_TOKEN",
            "https://developer.squareup.com/apps", "EAAA…",
            fill("EAAA", 64), prefix("EAAA"), length(20, 200), B64URL,
        ),
        cred(
            "application_id", "Application ID", "SQUARE_APPLICATION_ID SQUARE_APP_ID",
            "https://developer.squareup.com/apps", "sq0idp-… or sandbox-sq0idb-…",
            fill("sandbox-sq0idb-", 37), prefix("sq0idp-", "sandbox-sq0idb-"), length(10, 100),
            B64URL, secret=False,
        ),
        hosts="connect.squareup.com connect.squareupsandbox.com",
    ),
    provider(
        "paddle", "Paddle", "payments", "paddle.com",
        cred(
            "api_key", "API key", "PADDLE_API_KEY",
            "https://vendors.paddle.com/authentication-v2", "pdl_live_apikey_…",
            fill("pdl_sdbx_apikey_", 69), length(20, 200), TOKEN,
        ),
        cred(
            "client_token", "Client-side token", "PADDLE_CLIENT_TOKEN PADDLE_CLIENT_SIDE_TOKEN",
            "https://vendors.paddle.com/authentication-v2", "live_… or test_…",
            fill("test_", 32), prefix("live_", "test_"), length(10, 100), B64URL, secret=False,
        ),
        cred(
            "webhook_secret", "Webhook secret key",
            "PADDLE_WEBHOOK_SECRET PADDLE_NOTIFICATION_SECRET",
            "https://vendors.paddle.com/notifications", "pdl_ntfset_…",
            fill("pdl_ntfset_", 60), length(10, 200), TOKEN,
        ),
        hosts="api.paddle.com sandbox-api.paddle.com",
    ),
    provider(
        "lemonsqueezy", "Lemon Squeezy", "payments", "lemonsqueezy.com",
        cred(
            "api_key", "API key", "LEMONSQUEEZY_API_KEY LEMON_SQUEEZY_API_KEY",
            "https://app.lemonsqueezy.com/settings/api", "eyJ…",
            fill("eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.", 400), length(40, 4000), TOKEN,
        ),
        cred(
            "webhook_secret", "Webhook signing secret",
            "LEMONSQUEEZY_WEBHOOK_SECRET LEMON_SQUEEZY_WEBHOOK_SECRET",
            "https://app.lemonsqueezy.com/settings/webhooks", "the secret you typed there",
            "EXAMPLE-signing-secret", length(6, 200),
        ),
        hosts="api.lemonsqueezy.com",
    ),
    provider(
        "braintree", "Braintree", "payments", "braintreegateway.com braintreepayments.com",
        cred(
            "merchant_id", "Merchant ID", "BRAINTREE_MERCHANT_ID",
            "https://www.braintreegateway.com/login", "16 letters and digits",
            fill("", 16, "example0"), length(4, 64), ALNUM, secret=False,
        ),
        cred(
            "public_key", "Public key", "BRAINTREE_PUBLIC_KEY",
            "https://www.braintreegateway.com/login", "16 letters and digits",
            fill("", 16, "example0"), length(4, 64), ALNUM, secret=False,
        ),
        cred(
            "private_key", "Private key", "BRAINTREE_PRIVATE_KEY",
            "https://www.braintreegateway.com/login", "32 letters and digits",
            fill("", 32, "0123abcd"), length(8, 128), ALNUM,
        ),
        hosts=("api.braintreegateway.com api.sandbox.braintreegateway.com"
               " payments.braintree-api.com payments.sandbox.braintree-api.com"),
    ),
    provider(
        "adyen", "Adyen", "payments", "adyen.com",
        cred(
            "api_key", "API key", "ADYEN_API_KEY",
            "https://ca-test.adyen.com/ca/ca/config/api_credentials_new.shtml", "AQE…",
            fill("AQE", 160), length(20, 400), TOKEN,
        ),
        cred(
            "hmac_key", "Webhook HMAC key", "ADYEN_HMAC_KEY ADYEN_WEBHOOK_HMAC_KEY",
            "https://ca-test.adyen.com/ca/ca/config/showthirdparty.shtml", "64 hex digits",
            fill("", 64, "0123abcd"), length(16, 256), HEX,
        ),
        # live Checkout and payments hosts carry a per-merchant prefix
        # (*-checkout-live.adyenpayments.com)
        hosts=("checkout-test.adyen.com pal-test.adyen.com management-test.adyen.com"
               " management-live.adyen.com"),
    ),
    provider(
        "razorpay", "Razorpay", "payments", "razorpay.com",
        cred(
            "key_id", "Key ID", "RAZORPAY_KEY_ID RAZORPAY_KEY",
            "https://dashboard.razorpay.com/app/website-app-settings/api-keys",
            "rzp_live_… or rzp_test_…",
            fill("rzp_test_", 23), prefix("rzp_live_", "rzp_test_"), length(12, 64), B64URL,
            secret=False,
        ),
        cred(
            "key_secret", "Key secret", "RAZORPAY_KEY_SECRET RAZORPAY_SECRET",
            "https://dashboard.razorpay.com/app/website-app-settings/api-keys",
            "24 letters and digits",
            fill("", 24), length(10, 100), ALNUM,
        ),
        hosts="api.razorpay.com",
    ),
    provider(
        "mollie", "Mollie", "payments", "mollie.com",
        cred(
            "api_key", "API key", "MOLLIE_API_KEY MOLLIE_KEY",
            "https://my.mollie.com/dashboard/developers/api-keys", "live_… or test_…",
            fill("test_", 35),
            prefix("live_", "test_", "access_",
                   text="starts with live_ or test_ (access_ for an organization token)"),
            length(20, 100), B64URL,
        ),
        hosts="api.mollie.com",
    ),
    provider(
        "plaid", "Plaid", "payments", "plaid.com",
        cred(
            "client_id", "Client ID", "PLAID_CLIENT_ID",
            "https://dashboard.plaid.com/developers/keys", "24 hex digits",
            fill("", 24, "0123abcd"), length(10, 64), ALNUM, secret=False,
        ),
        cred(
            "secret", "Secret", "PLAID_SECRET PLAID_SANDBOX_SECRET PLAID_PRODUCTION_SECRET",
            "https://dashboard.plaid.com/developers/keys", "30 hex digits",
            fill("", 30, "0123abcd"), length(10, 64), ALNUM,
        ),
        hosts="production.plaid.com sandbox.plaid.com",
    ),
    provider(
        "shopify", "Shopify", "payments", "shopify.com",
        cred(
            "admin_token", "Admin API access token",
            "SHOPIFY_ACCESS_TOKEN SHOPIFY_ADMIN_ACCESS_TOKEN SHOPIFY_ADMIN_API_ACCESS_TOKEN",
            "https://admin.shopify.com/", "shpat_…",
            fill("shpat_", 38, "0123abcd"), length(20, 200), TOKEN,
        ),
        cred(
            "api_key", "API key (client ID)", "SHOPIFY_API_KEY SHOPIFY_CLIENT_ID",
            "https://partners.shopify.com/", "32 hex digits",
            fill("", 32, "0123abcd"), length(16, 128), TOKEN, secret=False,
        ),
        cred(
            "api_secret", "API secret key",
            "SHOPIFY_API_SECRET SHOPIFY_API_SECRET_KEY SHOPIFY_CLIENT_SECRET",
            "https://partners.shopify.com/", "shpss_… or 32 hex digits",
            fill("shpss_", 38, "0123abcd"), length(16, 128), TOKEN,
        ),
        cred(
            "storefront_token", "Storefront API access token",
            "SHOPIFY_STOREFRONT_ACCESS_TOKEN SHOPIFY_STOREFRONT_TOKEN",
            "https://admin.shopify.com/", "32 hex digits",
            fill("", 32, "0123abcd"), length(16, 128), TOKEN, secret=False,
        ),
        # every API is on the shop's own host (<shop>.myshopify.com): none is fixed
        hosts="",
    ),
)
# fmt: on
