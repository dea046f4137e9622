"""The collaborators of one collect core, built once and passed in (tests pass fakes).

Building them imports aiohttp (the page server): do it on the first call that needs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from offprompt.collect.settings import Settings
    from offprompt.page.loopback import PageServer
    from offprompt.store import RequestStore
    from offprompt.submit import Submitter
    from offprompt.tunnel import Tunnel

__all__ = ["BrowserOpener", "Opener", "Parts"]


class Opener(Protocol):
    """Opens a link in the person's browser (DESIGN §4 step 2); True when it did."""

    async def open(self, url: str) -> bool: ...


class BrowserOpener:
    """`$BROWSER` from the settings' environment, else the platform's opener."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    async def open(self, url: str) -> bool:
        from offprompt import browser

        return await browser.open_url(url, env=self._env)


@dataclass(frozen=True)
class Parts:
    """Store, submitter, page server, tunnel and opener of one process."""

    store: RequestStore
    submitter: Submitter
    page: PageServer
    tunnel: Tunnel
    opener: Opener

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        opener: Opener | None = None,
    ) -> Parts:
        """The real parts for `settings`; `opener` may be replaced."""
        from offprompt.journal import Journal
        from offprompt.page.loopback import PageServer
        from offprompt.store import RequestStore
        from offprompt.submit import Submitter
        from offprompt.tunnel import Tunnel

        store = RequestStore()
        submitter = Submitter(store, Journal(settings.journal_path), env=settings.env)
        return cls(
            store=store,
            submitter=submitter,
            page=PageServer(store, submitter, port=settings.port),
            tunnel=Tunnel(settings.env),
            opener=opener if opener is not None else BrowserOpener(settings.env),
        )
