"""The collaborators of one collect core, built once and passed in (tests pass fakes).

Building them imports aiohttp (the page server) and every agent's declaration (the mask keeper):
do it on the first call that needs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from offprompt.agents.mask.keeper import Keeper
    from offprompt.collect.settings import Settings
    from offprompt.page.loopback import PageServer
    from offprompt.store import RequestStore
    from offprompt.tunnel import Tunnel
    from offprompt.write.submit import Submitter

__all__ = ["BrowserOpener", "Opener", "Parts", "mask_keeper"]


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


def mask_keeper() -> Keeper:
    """Every host's mask, kept after each write (write.steps.MaskKeeper): the write room
    imports no agent, so the process's Submitter is handed this."""
    from offprompt.agents import AGENTS
    from offprompt.agents.mask.keeper import Keeper

    return Keeper(agent.mask for agent in AGENTS if agent.mask is not None)


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
        from offprompt.page.loopback import PageServer
        from offprompt.store import RequestStore
        from offprompt.tunnel import Tunnel
        from offprompt.write.journal import Journal
        from offprompt.write.submit import Submitter

        store = RequestStore()
        journal = Journal(settings.journal_path)
        submitter = Submitter(store, journal, env=settings.env, mask=mask_keeper())
        return cls(
            store=store,
            submitter=submitter,
            page=PageServer(store, submitter, port=settings.port),
            tunnel=Tunnel(settings.env),
            opener=opener if opener is not None else BrowserOpener(settings.env),
        )
