"""The loopback page where the person types values: server, guards and rendering (DESIGN §6).

Imports aiohttp, so callers import this package lazily, on the first request that needs a page.
"""

from offprompt.page.server import MAX_BODY, PageServer, PageSettings, create_app

__all__ = ["MAX_BODY", "PageServer", "PageSettings", "create_app"]
