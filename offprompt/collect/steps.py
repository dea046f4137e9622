"""What the collect core answers a door, and what it needs from the door's client.

The ladder returns one of these steps; it never raises to end a round. Only the MCP layer
turns `Ask` into `input_required`; a terminal never gets one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from offprompt.spec import ConfirmAnswer, DialogAnswer
    from offprompt.store import RequestRecord

__all__ = ["Ask", "AskCode", "Client", "Refused", "Report", "Step", "Wait"]


class Client(Protocol):
    """Who asked, and how to talk back to them during the call."""

    @property
    def name(self) -> str:
        """clientInfo.name (`offprompt-cli` for the terminal)."""
        ...

    @property
    def modern(self) -> bool:
        """The call is 2026-07-28: a URL elicitation is an `Ask`, answered by a retry."""
        ...

    @property
    def url_elicitation(self) -> bool:
        """The client declared `elicitation.url`."""
        ...

    @property
    def can_send_requests(self) -> bool:
        """A legacy server→client request can be sent now."""
        ...

    def progress(self, message: str) -> None: ...

    async def elicit_url(
        self, *, url: str, message: str, elicitation_id: str, wait: float
    ) -> DialogAnswer:
        """Legacy: send `elicitation/create` and wait up to `wait` seconds for the answer."""
        ...

    def elicitation_complete(self, elicitation_id: str) -> None: ...

    @property
    def form_elicitation(self) -> bool:
        """The client declared form elicitation (`elicitation.form`, or the form-only `{}`)."""
        ...

    async def elicit_code(self, *, message: str, wait: float) -> str | None:
        """Legacy: ask for the confirmation code in the host's form dialog and wait up to
        `wait` seconds; what the person typed, or None (declined, dismissed, no answer)."""
        ...


@dataclass(frozen=True)
class Ask:
    """Ask the client to show `url` in a URL elicitation and retry with the answer (2026-07-28).

    `request_id` goes into the signed (HMAC) requestState, which lives `ttl` seconds."""

    request_id: str
    url: str
    message: str
    ttl: float


@dataclass(frozen=True)
class AskCode:
    """Ask the client, in a form dialog, for the confirmation code the person's page shows,
    and retry with what they typed (2026-07-28, DESIGN §17). `request_id` goes into the signed
    requestState, which lives `ttl` seconds."""

    request_id: str
    message: str
    ttl: float


@dataclass(frozen=True)
class Wait:
    """The page is with the person: wait for the write or the TTL (`Collector.wait`).

    `elicited`: a legacy URL elicitation was sent, so the client hears when it completed."""

    request: RequestRecord
    elicited: bool = False


@dataclass(frozen=True)
class Report:
    """Answer now with the request's state; the link is in it when `delivery.hand_out`.

    `opened`: the page is known to be with the person; `declined`: the person just declined
    the host's dialog (DESIGN §4.1); `confirmed`: what a confirmation code just typed did
    (DESIGN §17), None when none was."""

    request: RequestRecord
    opened: bool = False
    declined: bool = False
    confirmed: ConfirmAnswer | None = None


@dataclass(frozen=True)
class Refused:
    """The request cannot be served, said so a person or an agent can act on it.

    `cause`: `arguments` (what was asked: a terminal's usage error), `project`, `write`, or
    `environment` (a setting such as OFFPROMPT_PORT the person must change)."""

    message: str
    cause: Literal["arguments", "project", "write", "environment"] = "arguments"


Step = Ask | AskCode | Wait | Report | Refused
