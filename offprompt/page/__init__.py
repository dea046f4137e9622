"""The loopback page where the person types values: server, guards and rendering (DESIGN §6).

`PageServer` (in `loopback`) binds its socket without aiohttp, so a link can go out first;
the application in `server` imports aiohttp and is loaded when the page is to be served.
"""

from offprompt.page.loopback import PageServer, PageSettings

__all__ = ["PageServer", "PageSettings"]
