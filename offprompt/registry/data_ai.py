"""AI providers: model APIs, inference hosts, speech and embeddings.

Prefixes are the ones the providers print in their consoles and SDK docs; lengths are wide.
"""

from __future__ import annotations

from typing import Final

from offprompt.registry.kit import (
    ALNUM,
    B64URL,
    TOKEN,
    ask,
    cred,
    fill,
    fmt,
    length,
    prefix,
    provider,
)
from offprompt.registry.model import Provider

# A table, laid out by hand: one credential per block, related arguments on one line.
# fmt: off
PROVIDERS: Final[tuple[Provider, ...]] = (
    provider(
        "openai", "OpenAI", "ai", "openai.com",
        cred(
            "api_key", "API key", "OPENAI_API_KEY",
            "https://platform.openai.com/api-keys", "sk-proj-…",
            fill("sk-proj-", 164),
            # Project, service-account and admin keys, and the older user keys: all "sk-".
            prefix("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-", text="starts with sk-"),
            length(40, 400),
            B64URL,
            check=ask(
                "https://api.openai.com/v1/models",
                "https://platform.openai.com/docs/api-reference/models/list",
                # 403 is "country, region, or territory not supported", not a bad key
                account="header:openai-organization", rejected=(401,),
            ),
        ),
        cred(
            "org_id", "Organization ID", "OPENAI_ORG_ID OPENAI_ORGANIZATION OPENAI_ORGANIZATION_ID",
            "https://platform.openai.com/settings/organization/general", "org-…",
            fill("org-", 28), prefix("org-"), length(10, 64), B64URL, secret=False,
        ),
        cred(
            "project_id", "Project ID", "OPENAI_PROJECT_ID OPENAI_PROJECT",
            "https://platform.openai.com/settings/organization/projects", "proj_…",
            fill("proj_", 29), prefix("proj_"), length(10, 64), B64URL, secret=False,
        ),
        hosts="api.openai.com",
    ),
    provider(
        "anthropic", "Anthropic", "ai", "anthropic.com claude.com",
        cred(
            "api_key", "API key", "ANTHROPIC_API_KEY CLAUDE_API_KEY",
            "https://console.anthropic.com/settings/keys", "sk-ant-api03-…",
            fill("sk-ant-api03-", 108), prefix("sk-ant-"), length(40, 300), B64URL,
            check=ask(
                "https://api.anthropic.com/v1/models",
                "https://platform.claude.com/docs/en/api/models",
                auth="header:x-api-key", headers=(("anthropic-version", "2023-06-01"),),
                # 403 permission_error: a working key this workspace may not use here
                account="header:anthropic-organization-id", rejected=(401,),
            ),
        ),
        hosts="api.anthropic.com",
    ),
    provider(
        "gemini", "Google Gemini", "ai", "google.com",
        cred(
            "api_key", "API key",
            "GEMINI_API_KEY GOOGLE_GENERATIVE_AI_API_KEY GOOGLE_AI_API_KEY",
            "https://aistudio.google.com/app/apikey", "AIza…",
            fill("AIza", 39), prefix("AIza"), length(30, 100), B64URL,
            check=ask(
                "https://generativelanguage.googleapis.com/v1beta/models",
                "https://ai.google.dev/api/rest/v1beta/models/list",
                # a bad key is 400 INVALID_ARGUMENT (API_KEY_INVALID); 403 PERMISSION_DENIED is a
                # key without the Generative Language API
                auth="header:x-goog-api-key", rejected=(400, 401, 403),
            ),
        ),
        hosts="generativelanguage.googleapis.com",
    ),
    provider(
        "mistral", "Mistral AI", "ai", "mistral.ai",
        cred(
            "api_key", "API key", "MISTRAL_API_KEY",
            "https://console.mistral.ai/api-keys", "32 letters and digits",
            fill("", 32), length(20, 128), TOKEN,
            check=ask(
                "https://api.mistral.ai/v1/models",
                "https://docs.mistral.ai/api/#tag/models",
                rejected=(401,),
            ),
        ),
        hosts="api.mistral.ai",
    ),
    provider(
        "cohere", "Cohere", "ai", "cohere.com",
        cred(
            "api_key", "API key", "COHERE_API_KEY CO_API_KEY",
            "https://dashboard.cohere.com/api-keys", "40 letters and digits",
            fill("", 40), length(20, 128), TOKEN,
        ),
        # api.cohere.ai: the older SDKs' default
        hosts="api.cohere.com api.cohere.ai",
    ),
    provider(
        "groq", "Groq", "ai", "groq.com",
        cred(
            "api_key", "API key", "GROQ_API_KEY",
            "https://console.groq.com/keys", "gsk_…",
            fill("gsk_", 56), prefix("gsk_"), length(30, 200), B64URL,
            check=ask(
                "https://api.groq.com/openai/v1/models",
                "https://console.groq.com/docs/api-reference#models",
                rejected=(401,),
            ),
        ),
        hosts="api.groq.com",
    ),
    provider(
        "huggingface", "Hugging Face", "ai", "huggingface.co",
        cred(
            "token", "Access token", "HF_TOKEN HUGGING_FACE_HUB_TOKEN HUGGINGFACEHUB_API_TOKEN",
            "https://huggingface.co/settings/tokens", "hf_…",
            fill("hf_", 37), prefix("hf_"), length(20, 200), B64URL,
            check=ask(
                "https://huggingface.co/api/whoami-v2",
                "https://huggingface.co/docs/hub/api#get-apiwhoami-v2",
                account="json:name", rejected=(401,),
            ),
        ),
        # Inference Endpoints are per endpoint (*.endpoints.huggingface.cloud)
        hosts="huggingface.co router.huggingface.co api-inference.huggingface.co",
    ),
    provider(
        "replicate", "Replicate", "ai", "replicate.com",
        cred(
            "api_token", "API token", "REPLICATE_API_TOKEN REPLICATE_API_KEY",
            "https://replicate.com/account/api-tokens", "r8_…",
            fill("r8_", 40), prefix("r8_"), length(20, 200), B64URL,
            check=ask(
                "https://api.replicate.com/v1/account",
                "https://replicate.com/docs/reference/http#account.get",
                account="json:username", rejected=(401,),
            ),
        ),
        hosts="api.replicate.com",
    ),
    provider(
        "together", "Together AI", "ai", "together.ai together.xyz",
        cred(
            "api_key", "API key", "TOGETHER_API_KEY TOGETHER_AI_API_KEY",
            "https://api.together.ai/settings/api-keys", "tgp_v1_… or 64 hex digits",
            fill("tgp_v1_", 50), length(30, 200), TOKEN,
        ),
        hosts="api.together.xyz api.together.ai",
    ),
    provider(
        "perplexity", "Perplexity", "ai", "perplexity.ai",
        cred(
            "api_key", "API key", "PERPLEXITY_API_KEY PPLX_API_KEY",
            "https://www.perplexity.ai/settings/api", "pplx-…",
            fill("pplx-", 53), prefix("pplx-"), length(20, 200), B64URL,
        ),
        hosts="api.perplexity.ai",
    ),
    provider(
        "openrouter", "OpenRouter", "ai", "openrouter.ai",
        cred(
            "api_key", "API key", "OPENROUTER_API_KEY",
            "https://openrouter.ai/settings/keys", "sk-or-v1-…",
            fill("sk-or-v1-", 73, "0123abcd"), prefix("sk-or-"), length(30, 200), B64URL,
            # no account: the answer's `label` is the key itself, shortened
            check=ask(
                "https://openrouter.ai/api/v1/key",
                "https://openrouter.ai/docs/api/api-reference/api-keys/get-current-key",
                rejected=(401,),
            ),
        ),
        hosts="openrouter.ai",
    ),
    provider(
        "deepseek", "DeepSeek", "ai", "deepseek.com",
        cred(
            "api_key", "API key", "DEEPSEEK_API_KEY",
            "https://platform.deepseek.com/api_keys", "sk-…",
            fill("sk-", 35, "0123abcd"), prefix("sk-"), length(20, 200), B64URL,
        ),
        hosts="api.deepseek.com",
    ),
    provider(
        "xai", "xAI", "ai", "x.ai",
        cred(
            "api_key", "API key", "XAI_API_KEY GROK_API_KEY",
            "https://console.x.ai/", "xai-…",
            fill("xai-", 84), prefix("xai-"), length(30, 300), B64URL,
        ),
        hosts="api.x.ai",
    ),
    provider(
        "fireworks", "Fireworks AI", "ai", "fireworks.ai",
        cred(
            "api_key", "API key", "FIREWORKS_API_KEY",
            "https://app.fireworks.ai/settings/users/api-keys", "fw_… or 48 letters and digits",
            fill("fw_", 48), length(20, 200), TOKEN,
        ),
        hosts="api.fireworks.ai",
    ),
    provider(
        "elevenlabs", "ElevenLabs", "ai", "elevenlabs.io",
        cred(
            "api_key", "API key", "ELEVENLABS_API_KEY ELEVEN_API_KEY XI_API_KEY",
            "https://elevenlabs.io/app/settings/api-keys", "sk_…",
            fill("sk_", 51, "0123abcd"), length(20, 200), TOKEN,
        ),
        hosts="api.elevenlabs.io",
    ),
    provider(
        "deepgram", "Deepgram", "ai", "deepgram.com",
        cred(
            "api_key", "API key", "DEEPGRAM_API_KEY",
            "https://console.deepgram.com/", "40 hex digits",
            fill("", 40, "0123abcd"), length(20, 128), TOKEN,
        ),
        hosts="api.deepgram.com",
    ),
    provider(
        "assemblyai", "AssemblyAI", "ai", "assemblyai.com",
        cred(
            "api_key", "API key", "ASSEMBLYAI_API_KEY",
            "https://www.assemblyai.com/dashboard/api-keys", "32 hex digits",
            fill("", 32, "0123abcd"), length(20, 128), ALNUM,
        ),
        hosts="api.assemblyai.com api.eu.assemblyai.com streaming.assemblyai.com",
    ),
    provider(
        "azure_openai", "Azure OpenAI", "ai", "azure.com microsoft.com",
        cred(
            "api_key", "API key", "AZURE_OPENAI_API_KEY AZURE_OPENAI_KEY",
            "https://ai.azure.com/", "32 hex digits or 84 letters and digits",
            fill("", 32, "0123abcd"), length(20, 200), TOKEN,
        ),
        cred(
            "endpoint", "Endpoint", "AZURE_OPENAI_ENDPOINT AZURE_OPENAI_BASE_URL",
            "https://ai.azure.com/", "https://….openai.azure.com/",
            "https://example.openai.azure.com/",
            fmt("url", "a URL with a scheme and a host, like https://example.com"),
            secret=False, format="url",
        ),
        # each resource has its own host (<resource>.openai.azure.com): none is fixed
        hosts="",
    ),
    provider(
        "voyage", "Voyage AI", "ai", "voyageai.com",
        cred(
            "api_key", "API key", "VOYAGE_API_KEY VOYAGEAI_API_KEY",
            "https://dashboard.voyageai.com/organization/api-keys", "pa-…",
            fill("pa-", 46), length(20, 200), TOKEN,
        ),
        hosts="api.voyageai.com",
    ),
    provider(
        "stability", "Stability AI", "ai", "stability.ai",
        cred(
            "api_key", "API key", "STABILITY_API_KEY STABILITY_KEY",
            "https://platform.stability.ai/account/keys", "sk-…",
            fill("sk-", 51), length(20, 200), TOKEN,
        ),
        hosts="api.stability.ai",
    ),
    provider(
        "cerebras", "Cerebras", "ai", "cerebras.ai",
        cred(
            "api_key", "API key", "CEREBRAS_API_KEY",
            "https://cloud.cerebras.ai/platform/", "csk-…",
            fill("csk-", 52), length(20, 200), TOKEN,
        ),
        hosts="api.cerebras.ai",
    ),
)
# fmt: on
