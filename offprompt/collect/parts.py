"""The collaborators of one collect core, built once and passed in (tests pass fakes).

Building them imports aiohttp (the page server): do it on the first call that needs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from offprompt.collect.settings import Settings
    from offprompt.page.loopback import PageServer
    from offprompt.store import RequestStore
    from offprompt.tunnel import Tunnel
    from offprompt.write.submit import Submitter

__all__ = ["BrowserOpener", "Opener", "Parts", "keep_mask"]


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


class KeepMask:
    """The Submitter's mask keeper (write.steps.MaskKeeper): `agents.mask`, when the project may
    be masked (the record beside the journal exists, or Codex's project config does). The
    agents are imported only then, so an unmasked project's write never loads them."""

    def covers(self, record: Path, project: Path) -> bool:
        if not _maybe_masked(record, project):
            return False
        from offprompt.agents import mask

        return mask.covers(record, project)

    def __call__(
        self, record: Path, project: Path, file: Path, names: tuple[str, ...], whole: bool
    ) -> str | None:
        if not _maybe_masked(record, project):
            return None
        from offprompt.agents import mask

        return mask.keep(record, project, file, names, whole)


def _maybe_masked(record: Path, project: Path) -> bool:
    codex = project / ".codex" / "config.toml"  # agents.codex.project_config
    return record.exists() or codex.is_file()


keep_mask = KeepMask()


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
        submitter = Submitter(
            store, Journal(settings.journal_path), env=settings.env, mask=keep_mask
        )
        return cls(
            store=store,
            submitter=submitter,
            page=PageServer(store, submitter, port=settings.port),
            tunnel=Tunnel(settings.env),
            opener=opener if opener is not None else BrowserOpener(settings.env),
        )
