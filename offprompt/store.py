"""The request store: request records and their life (TTL, the state machine, the single write
(claim), waiters), and each request's typed delivery state (how its page reaches the person).

Pure bookkeeping on one asyncio loop with an injectable clock; no I/O and no values stored. It
sits below the collect core (DESIGN §2): the core writes `Delivery`, the page server reports a
visit and reads the seal key; nothing here imports the core.

States: ``awaiting`` → ``written`` (claim, then complete), ``cancelled`` (cancel, close_all) or
``expired`` (TTL passed). All three are final. While awaiting, a request may be *claimed*: one
write is in progress and every other claim, and cancel, is refused until it completes or is
released.

A claimed request does not expire: a person who submitted before the deadline gets their write,
even if the disk is slow. Expiring it mid-write would report ``expired`` for a file that was in
fact written. So the write decides: ``complete`` records it as written; ``release`` after the
deadline closes it as expired at once (closed_at = the release time).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from offprompt.crypto.confirm import code_for, matches, new_confirm_key
from offprompt.crypto.tokens import new_nonce, new_request_id, new_token, same
from offprompt.errors import RequestClosed
from offprompt.spec import (
    ConfirmAnswer,
    Prepared,
    ReasonAuthor,
    RequestStatus,
    SecretSpec,
    ShownStatus,
    SinkSpec,
    WriteOutcome,
)

if TYPE_CHECKING:
    from offprompt.crypto.seal import SealKey
    from offprompt.sinks.destinations import Planned

__all__ = ["CONFIRM_TRIES", "WRONG_CODES", "Delivery", "Held", "RequestRecord", "RequestStore"]

CONFIRM_TRIES = 5
"""Wrong confirmation codes a held submission survives, less one: the fifth closes it."""
WRONG_CODES = (
    "Five wrong confirmation codes were typed, so the held values were dropped and nothing "
    "was written."
)
"""Why a request closed on its wrong codes (`Delivery.confirm_reason`)."""


@dataclass(frozen=True)
class Held:
    """A submit a provider refused (DESIGN §16), as the person sent it: its values and the
    choices it made. "Write anyway" confirms it and may narrow the choices, never widen them."""

    values: Mapping[str, str] = field(repr=False)
    allow_tracked: bool = False
    also: tuple[int, ...] = ()


@dataclass(eq=False)
class Delivery:
    """The ladder's state of one request. Holds no value but `held` (a refused submit's, for
    "Write anyway") and `pending` (a submit awaiting its confirmation code); `forget` drops
    them, the keys and the code when the request closes, and the rest outlives the close (the
    Written page still reads `dialog`)."""

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
    held: Held | None = field(default=None, repr=False)
    """The submit a provider refused (DESIGN §16), kept as sent for the "Write anyway" post of
    the page's current nonce; dropped by the next post and when the request closes."""
    browser: str | None = field(default=None, repr=False)
    """The claim cookie of the browser that holds this request (DESIGN §17): set for the first
    browser to open it and required by every POST (`claimed` is a write in progress)."""
    opened_elsewhere: bool = False
    """A second browser opened the page or tried to post (DESIGN §17): results say so."""
    confirm_key: bytes | None = field(default=None, repr=False)
    """A remote request's confirmation-code key (DESIGN §17); dropped when the request closes."""
    pending: Prepared | None = field(default=None, repr=False)
    """A remote submit held until its confirmation code comes back (`RequestStore.hold`)."""
    code: str | None = field(default=None, repr=False)
    """The code the person's page shows for `pending`: never logged, never in a result."""
    tries_left: int = CONFIRM_TRIES
    """Codes that may still be typed before the held values are dropped and the request closed."""
    confirm_reason: str | None = None
    """Why the request was cancelled by wrong codes, for the result's note; else None."""

    def page_served(self) -> None:
        """The page server answered a GET of the page: a browser has it."""
        self.page_opened = True

    def forget(self) -> None:
        """The request closed: drop what must not outlive it."""
        self.seal_key = None
        self.held = None
        self.browser = None
        self.confirm_key = None
        self.pending = None
        self.code = None


@dataclass(eq=False, kw_only=True)
class RequestRecord:
    """One collect request, owned and mutated only by its `RequestStore`.

    `display` is the destination as results show it: relative to the project, `/` separators.
    `expires_at` and `closed_at` are on the store's clock. `delivery` is the collect core's
    typed state of how the page reaches the person (`Delivery`, below); the store only makes
    it drop its seal key on close.
    """

    id: str
    token: str = field(repr=False)
    nonce: str = field(repr=False)
    secrets: tuple[SecretSpec, ...]
    sink: SinkSpec
    project: Path
    display: str
    reason: str = field(repr=False)
    reason_by: ReasonAuthor = "agent"
    """Who wrote `reason`; the page says so (never "the agent's words" for offprompt's own)."""
    client: str | None = None
    remote: bool = False
    expires_at: float
    status: RequestStatus = "awaiting"
    claimed: bool = False
    outcome: WriteOutcome | None = None
    closed_at: float | None = None
    delivery: Delivery = field(default_factory=Delivery, repr=False)
    also: tuple[Planned, ...] = ()
    """The `also` destinations as linked when the request was made (DESIGN §13), in order."""

    @property
    def names(self) -> tuple[str, ...]:
        """The requested names, in request order."""
        return tuple(s.name for s in self.secrets)

    @property
    def shown_status(self) -> ShownStatus:
        """`status`, or `confirm` while awaiting with a submit held for its code (DESIGN §17):
        what results and the page's status route say."""
        if self.status == "awaiting" and self.delivery.pending is not None:
            return "confirm"
        return self.status

    def expires_in(self, now: float) -> int:
        """Whole seconds left at `now` (store clock), rounded up; 0 once the request is closed."""
        if self.status != "awaiting":
            return 0
        return max(0, math.ceil(self.expires_at - now))


def _token_key(token: str) -> bytes:
    # The index is keyed by a hash so a lookup's timing depends on the hash, not on how many
    # leading characters of a guessed token match a real one.
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class RequestStore:
    """Every live request of this process, and those closed within the last `keep_closed` s.

    Expiry and forgetting are applied lazily at every call, which also wakes the waiters of any
    request that expired. `clock` is monotonic seconds; tests pass a fake one.
    """

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, keep_closed: float = 3600.0
    ) -> None:
        self._clock = clock
        self._keep_closed = keep_closed
        self._by_id: dict[str, RequestRecord] = {}
        self._by_token: dict[bytes, RequestRecord] = {}
        self._waiters: dict[str, set[asyncio.Future[None]]] = {}
        # Claimed when close_all ran: their writer finishes, but a release cancels them.
        self._cancel_on_release: set[str] = set()

    def now(self) -> float:
        """The store's clock, the one `expires_at` and `closed_at` are measured on."""
        return self._clock()

    # -- records ------------------------------------------------------------------------------

    def create(
        self,
        secrets: Iterable[SecretSpec],
        sink: SinkSpec,
        project: Path,
        reason: str,
        *,
        ttl: float,
        client: str | None = None,
        remote: bool = False,
        display: str | None = None,
        also: tuple[Planned, ...] = (),
        reason_by: ReasonAuthor = "agent",
    ) -> RequestRecord:
        """A new awaiting request that expires `ttl` seconds from now.

        `display`: the resolved destination relative to the project (`sinks.display_of`); only
        when the sink's path is already that may it be left out.
        """
        if not (ttl > 0 and math.isfinite(ttl)):
            raise ValueError("ttl must be a positive number of seconds")
        self._sweep()
        request_id = new_request_id()
        while request_id in self._by_id:
            request_id = new_request_id()
        request = RequestRecord(
            id=request_id,
            token=new_token(),
            nonce=new_nonce(),
            secrets=tuple(secrets),
            sink=sink,
            project=project,
            display=sink.path if display is None else display,
            reason=reason,
            reason_by=reason_by,
            client=client,
            remote=remote,
            expires_at=self._clock() + ttl,
            also=also,
        )
        self._by_id[request.id] = request
        self._by_token[_token_key(request.token)] = request
        return request

    def get(self, request_id: str) -> RequestRecord | None:
        """The request with this id, open or recently closed; None if unknown or forgotten."""
        self._sweep()
        return self._by_id.get(request_id)

    def awaiting(self) -> list[RequestRecord]:
        """Every request still open (awaiting, expiry applied), oldest first."""
        self._sweep()
        return [r for r in self._by_id.values() if r.status == "awaiting"]

    def by_token(self, token: str) -> RequestRecord | None:
        """The request whose page token this is, compared in constant time; None otherwise."""
        self._sweep()
        request = self._by_token.get(_token_key(token))
        if request is None or not same(request.token, token):
            return None
        return request

    def expires_in(self, request: RequestRecord) -> int:
        """Whole seconds `request` has left now; 0 once closed."""
        self._sweep()
        return request.expires_in(self._clock())

    # -- the single write ---------------------------------------------------------------------

    def claim(self, request: RequestRecord) -> bool:
        """Reserve the request for one write; False if closed, expired or already claimed."""
        self._sweep()
        if request.status != "awaiting" or request.claimed:
            return False
        request.claimed = True
        self._notify(request)
        return True

    def renew_nonce(self, request: RequestRecord) -> str:
        """A fresh form nonce for `request`, which the old one no longer matches (the "Write
        anyway" form of a refused key, DESIGN §16)."""
        request.nonce = new_nonce()
        return request.nonce

    def release(self, request: RequestRecord) -> None:
        """Give back a claim after a failed write: the request stays open for a retry.

        Past the deadline, or after close_all, the request closes instead (expired, cancelled).
        """
        if not request.claimed:
            return
        request.claimed = False
        if request.id in self._cancel_on_release:
            self._close(request, "cancelled", self._clock())
        elif self._clock() >= request.expires_at:
            self._close(request, "expired", self._clock())
        else:
            self._notify(request)
        self._sweep()

    def complete(self, request: RequestRecord, outcome: WriteOutcome) -> None:
        """Record the claimed write as done: the request is written and closed."""
        if not request.claimed or request.status != "awaiting":
            raise RuntimeError(f"request {request.id} is not claimed; claim it before writing")
        request.claimed = False
        request.outcome = outcome
        self._close(request, "written", self._clock())
        self._sweep()

    # -- the confirmation code (DESIGN §17) -----------------------------------------------------

    def hold(self, request: RequestRecord, prepared: Prepared) -> str:
        """Keep `prepared` until its confirmation code comes back, and return that code (for
        the person's page only). A new hold replaces an earlier one and its code, but never
        gives back tries. Raises RequestClosed when the request is not open or being written."""
        self._sweep()
        if request.status != "awaiting" or request.claimed:
            raise RequestClosed(request.id)
        delivery = request.delivery
        if delivery.confirm_key is None:
            delivery.confirm_key = new_confirm_key()
        code = code_for(delivery.confirm_key, request.id, prepared.digest())
        delivery.pending, delivery.code = prepared, code
        self._notify(request)  # a waiting await_secret asks for the code
        return code

    def try_code(self, request: RequestRecord, typed: str) -> ConfirmAnswer:
        """Compare a typed code with the held submission's. `right`: the code is used up and
        the caller writes `delivery.pending` (`Submitter.commit`); `wrong`: one try fewer;
        `cancelled`: that was the last try, so the values are dropped and the request closed;
        `closed`: not open, or being written; `none`: nothing is held yet (no try is spent)."""
        self._sweep()
        if request.status != "awaiting" or request.claimed:
            return "closed"
        delivery = request.delivery
        if delivery.pending is None or delivery.code is None:
            return "none"
        if matches(delivery.code, typed):
            delivery.code = None  # one use: the caller takes `pending` now
            return "right"
        delivery.tries_left = max(0, delivery.tries_left - 1)
        if delivery.tries_left == 0:
            delivery.confirm_reason = WRONG_CODES
            self._close(request, "cancelled", self._clock())
            return "cancelled"
        self._notify(request)
        return "wrong"

    def take_pending(self, request: RequestRecord) -> Prepared | None:
        """The held submission, no longer held: after a `right` code, for the write."""
        delivery = request.delivery
        prepared, delivery.pending, delivery.code = delivery.pending, None, None
        return prepared

    def cancel(self, request: RequestRecord) -> bool:
        """Close an awaiting request as cancelled; False if closed or while a write holds it."""
        self._sweep()
        if request.status != "awaiting" or request.claimed:
            return False
        self._close(request, "cancelled", self._clock())
        return True

    def close_all(self) -> None:
        """At shutdown: cancel every awaiting request and wake every waiter.

        A request being written is left to its writer: completing records the write that
        happened; releasing cancels it.
        """
        now = self._clock()
        for request in list(self._by_id.values()):
            if request.status != "awaiting":
                continue
            if request.claimed:
                self._cancel_on_release.add(request.id)
            else:
                self._close(request, "cancelled", now)

    # -- waiting ------------------------------------------------------------------------------

    # A timeout here is an answer ("still awaiting"), not an error, so asyncio.timeout() would
    # not fit: hence the timeout parameters.
    async def wait(self, request: RequestRecord, timeout: float) -> RequestStatus:
        """The status once it leaves awaiting, or `awaiting` after `timeout` seconds.

        Wakes on complete, cancel, close_all and on the TTL passing (real clock), or when any
        other call notices the expiry (fake clock). Any number of callers may wait at once.
        """
        await self._wait(request, timeout, held=False)
        return request.status

    async def wait_shown(self, request: RequestRecord, timeout: float) -> ShownStatus:
        """As `wait`, but also done when a submit is held for its code (`confirm`)."""
        await self._wait(request, timeout, held=True)
        return request.shown_status

    async def _wait(self, request: RequestRecord, timeout: float, *, held: bool) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout)
        while True:
            self._sweep()
            if request.status != "awaiting" or (held and request.delivery.pending is not None):
                return
            left = deadline - loop.time()
            if left <= 0:
                return
            if not request.claimed:
                # Sleep no longer than the TTL so expiry needs no other caller to be noticed.
                # A claimed request does not expire, so only a change can end its wait.
                left = min(left, max(0.0, request.expires_at - self._clock()))
            await self._next_change(request, left)

    async def _next_change(self, request: RequestRecord, seconds: float) -> bool:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(request.id, set()).add(future)
        try:
            done, _ = await asyncio.wait({future}, timeout=seconds)
            return bool(done)
        finally:
            waiters = self._waiters.get(request.id)
            if waiters is not None:
                waiters.discard(future)
                if not waiters:
                    del self._waiters[request.id]
            if not future.done():
                future.cancel()

    # -- internals ----------------------------------------------------------------------------

    def _notify(self, request: RequestRecord) -> None:
        for future in self._waiters.pop(request.id, set()):
            if not future.done() and not future.get_loop().is_closed():
                future.set_result(None)

    def _close(self, request: RequestRecord, status: RequestStatus, at: float) -> None:
        request.status = status
        request.claimed = False
        request.closed_at = at
        request.delivery.forget()
        self._cancel_on_release.discard(request.id)
        self._notify(request)

    def _sweep(self) -> None:
        now = self._clock()
        forget: list[RequestRecord] = []
        for request in self._by_id.values():
            if request.status == "awaiting":
                if not request.claimed and now >= request.expires_at:
                    self._close(request, "expired", request.expires_at)
            if request.closed_at is not None and now >= request.closed_at + self._keep_closed:
                forget.append(request)
        for request in forget:
            del self._by_id[request.id]
            self._by_token.pop(_token_key(request.token), None)
            self._waiters.pop(request.id, None)
