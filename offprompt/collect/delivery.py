"""How one request's page is reaching the person (DESIGN §4, §5): the ladder's typed state.

Owned by the collect core; the page server only reports a visit and reads the seal key.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from offprompt.crypto.seal import SealKey

__all__ = ["Delivery"]


@dataclass(eq=False)
class Delivery:
    """The ladder's state of one request. Holds no value; `forget` drops the seal key when the
    request closes, and the rest outlives the close (the Written page still reads `dialog`)."""

    page_opened: bool = False
    """A GET of the page was served: a browser has it, whoever opened it."""
    dialog: bool = False
    """A 2026-07-28 URL dialog may be on screen: input_required went out, no retry came yet."""
    declined: bool = False
    """The person declined the dialog (DESIGN §4.1): offprompt opens no tab for this request."""
    browser_opened: bool = False
    """offprompt's own opener succeeded (DESIGN §4 step 2)."""
    url: str | None = field(default=None, repr=False)
    """The page's link once made (sealed `#k=` for a remote request)."""
    hand_out: bool = False
    """The link goes into results: the person must be given it by whoever asked."""
    tunnel_problem: str | None = None
    """Why a remote link is a loopback one (no tunnel), else None."""
    port: int | None = None
    """The page server's loopback port, for a link that needs port forwarding."""
    seal_key: SealKey | None = field(default=None, repr=False)
    """A remote request's private key (DESIGN §5); dropped when the request closes."""
    opener: asyncio.Task[bool] | None = field(default=None, repr=False)
    """The one attempt to open the browser, once started: every path awaits this same task."""
    dialog_timer: asyncio.Task[None] | None = field(default=None, repr=False)
    """Opens the browser when the dialog gets no answer and the page no visit in time."""

    def page_served(self) -> None:
        """The page server answered a GET of the page: a browser has it."""
        self.page_opened = True

    def forget(self) -> None:
        """The request closed: drop what must not outlive it."""
        self.seal_key = None
