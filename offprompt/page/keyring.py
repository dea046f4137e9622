"""The page's side of the OS's keyring (DESIGN §13.2): which requested names it may offer to
fill, and the fill itself, on the server, once the person ticked the box.

The value is read here, in this process, only for a ticked name whose field came back empty;
the page never receives it. `offprompt.oskeyring` is loaded only when a page is served.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from offprompt.errors import OffpromptError
from offprompt.offloop import run_off_loop
from offprompt.page.submission import Submission
from offprompt.store import RequestRecord

__all__ = ["filled", "offered"]


async def offered(req: RequestRecord) -> frozenset[str]:
    """The requested names the keyring can fill, asked by name only; none when that cannot be
    told now (the field is then typed, as on any page)."""
    from offprompt import oskeyring

    try:
        return await run_off_loop(oskeyring.offered, req.names)
    except OffpromptError:  # every file worker is stuck: the page still serves
        return frozenset()


async def filled(posted: Submission) -> Submission:
    """`posted` with each ticked name left empty filled from the keyring, so the Submitter
    writes and fingerprints it as a typed one; NotInKeyring (a 400, nothing written) when one
    is not there."""
    from offprompt import oskeyring

    values = await run_off_loop(oskeyring.fill, posted.values, posted.keyring)
    return replace(posted, values=MappingProxyType(values))
