"""What `offprompt serve` serves: the product's tools, identity and instructions."""

from offprompt import __version__
from offprompt.mcp.server import ServerInfo
from offprompt.mcp.stdio import App

INSTRUCTIONS = (
    "offprompt collects secrets (API keys, tokens, database URLs) from the person without the "
    "values passing through you. Ask for every key you need in one collect_secret call. When "
    "it returns, tell the person the fingerprint right away so they can match it with their "
    "page. Never open, print or read the .env file or the values; use `offprompt keys` to see "
    "which key names a file holds. When a result has a url, show it on its own line."
)


def make_app() -> App:
    return App(
        tools=[],
        info=ServerInfo(
            name="offprompt", version=__version__, instructions=INSTRUCTIONS, title="offprompt"
        ),
    )
