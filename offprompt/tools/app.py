"""What `offprompt serve` serves: the product's tools, identity and instructions."""

from __future__ import annotations

from offprompt import __version__
from offprompt.mcp.server import ServerInfo
from offprompt.mcp.stdio import App
from offprompt.tools import build

TYPE_CHECKING = False  # not typing's: the first reply does without it (see mcp.jsonrpc)
if TYPE_CHECKING:
    from offprompt.tools.service import Service

INSTRUCTIONS = (
    "offprompt collects secrets (API keys, tokens, database URLs) from the person without the "
    "values passing through you. Call secret_status first to see which keys are missing, instead "
    "of reading the .env file, then ask for every missing key in ONE collect_secret call. When it "
    "returns tell_user, say that fingerprint to the person right away. Never ask for a secret in "
    "the chat, and never open, print or read the .env file. When a result has a url, show it to "
    "the person on its own line, then call await_secret. While a collect_secret call is open "
    "(even one moved to the background), do not call it again for the same keys: tell the "
    "person the page is open and wait for its result. On status confirm, ask the person for "
    "the code their page shows and pass it to await_secret as confirm; never guess it."
)


def make_app() -> App:
    service: list[Service] = []

    def get_service() -> Service:
        if not service:
            from offprompt.tools.service import Service

            service.append(Service())
        return service[0]

    async def close() -> None:
        if service:
            await service[0].close()

    return App(
        tools=build(get_service),
        info=ServerInfo(
            name="offprompt", version=__version__, instructions=INSTRUCTIONS, title="offprompt"
        ),
        on_close=[close],
    )
