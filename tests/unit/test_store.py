"""The request store: states, the single write, expiry, forgetting and waiters."""

import asyncio
import re
import time
from pathlib import Path

import pytest

from offprompt.crypto.seal import SealKey
from offprompt.spec import Prepared, SecretSpec, SinkSpec, WriteOutcome
from offprompt.store import RequestRecord, RequestStore

TTL = 300.0


class FakeClock:
    """A monotonic clock that moves only when told, and counts how often it is read."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock: FakeClock) -> RequestStore:
    return RequestStore(clock=clock, keep_closed=3600.0)


def make(store: RequestStore, ttl: float = TTL, **kw: object) -> RequestRecord:
    """A request for two keys in a dotenv sink."""
    return store.create(
        (SecretSpec("STRIPE_SECRET_KEY"), SecretSpec("RESEND_API_KEY")),
        SinkSpec(),
        Path("/tmp/project"),
        "The app needs Stripe and Resend.",
        ttl=ttl,
        **kw,  # type: ignore[arg-type]
    )


OUTCOME = WriteOutcome(
    file=".env", names=("STRIPE_SECRET_KEY", "RESEND_API_KEY"), fingerprint="🍋 🥝 🌮 🧀"
)


# -- records ------------------------------------------------------------------------------


def test_create_makes_an_awaiting_request(store: RequestStore, clock: FakeClock) -> None:
    """A new request awaits, unclaimed, with fresh id, token and nonce and a TTL deadline."""
    r = make(store, client="Claude Code", remote=True)
    assert "awaiting" == r.status
    assert not r.claimed
    assert r.outcome is None
    assert r.closed_at is None
    assert r.delivery.seal_key is None
    assert re.fullmatch(r"[a-z2-7]{12}", r.id)
    assert re.fullmatch(r"[0-9a-f]{32}", r.token)
    assert re.fullmatch(r"[A-Za-z0-9_-]{22,}", r.nonce)
    assert clock.now + TTL == r.expires_at
    assert "Claude Code" == r.client
    assert r.remote
    assert ("STRIPE_SECRET_KEY", "RESEND_API_KEY") == r.names


def test_requests_are_distinct(store: RequestStore) -> None:
    """Two requests never share an id, token or nonce."""
    a, b = make(store), make(store)
    assert a.id != b.id
    assert a.token != b.token
    assert a.nonce != b.nonce


@pytest.mark.parametrize("ttl", [0.0, -1.0, float("inf"), float("nan")])
def test_create_refuses_a_bad_ttl(store: RequestStore, ttl: float) -> None:
    """A TTL must be a positive, finite number of seconds."""
    with pytest.raises(ValueError, match="ttl"):
        make(store, ttl=ttl)


def test_repr_hides_token_nonce_reason_and_delivery(store: RequestStore) -> None:
    """repr() of a request names it without its token, nonce, reason or delivery state."""
    r = make(store)
    r.delivery.seal_key = SealKey()
    text = repr(r)
    assert r.id in text
    assert r.token not in text
    assert r.nonce not in text
    assert "Stripe and Resend" not in text
    assert r.delivery.seal_key.fragment not in text
    assert "SealKey" not in text


def test_get_finds_by_id(store: RequestStore) -> None:
    """get() returns the request with that id, None for an unknown id."""
    r = make(store)
    assert r is store.get(r.id)
    assert store.get("unknownid000") is None


def test_by_token_finds_the_request(store: RequestStore) -> None:
    """by_token() returns the request whose token it is."""
    a, b = make(store), make(store)
    assert a is store.by_token(a.token)
    assert b is store.by_token(b.token)


@pytest.mark.parametrize(
    "guess",
    ["", "0" * 32, "f" * 32, "é" * 32, "🍋" * 8, "\ud800" * 32, "x", "0" * 1000],
)
def test_by_token_rejects_wrong_tokens(store: RequestStore, guess: str) -> None:
    """Wrong, empty, multibyte or malformed tokens find nothing and raise nothing."""
    make(store)
    assert store.by_token(guess) is None


def test_by_token_rejects_near_misses(store: RequestStore) -> None:
    """A token differing in case, by a prefix or by a suffix finds nothing."""
    r = make(store)
    for guess in (r.token.upper(), r.token[:-1], r.token + "0", " " + r.token):
        assert store.by_token(guess) is None


def test_expires_in_rounds_up_and_stops_at_zero(store: RequestStore, clock: FakeClock) -> None:
    """Seconds left are rounded up while awaiting and 0 once expired."""
    r = make(store, ttl=10.0)
    assert 10 == store.expires_in(r)
    clock.advance(0.5)
    assert 10 == store.expires_in(r)
    assert 10 == r.expires_in(clock.now)
    clock.advance(9.0)
    assert 1 == store.expires_in(r)
    clock.advance(1.0)
    assert 0 == store.expires_in(r)
    assert "expired" == r.status


def test_expires_in_is_zero_once_closed(store: RequestStore, clock: FakeClock) -> None:
    """A cancelled request has no time left, whatever its deadline."""
    r = make(store)
    store.cancel(r)
    assert 0 == r.expires_in(clock.now)


# -- the state machine ----------------------------------------------------------------------

# Each row: operations in order, the result of each, then the final status.
TABLE = [
    (["claim", "complete"], [True, None], "written"),
    (["claim", "claim"], [True, False], "awaiting"),
    (["claim", "release", "claim"], [True, None, True], "awaiting"),
    (["claim", "release", "cancel"], [True, None, True], "cancelled"),
    (["cancel"], [True], "cancelled"),
    (["cancel", "cancel"], [True, False], "cancelled"),
    (["cancel", "claim"], [True, False], "cancelled"),
    (["claim", "cancel"], [True, False], "awaiting"),
    (["claim", "complete", "claim"], [True, None, False], "written"),
    (["claim", "complete", "cancel"], [True, None, False], "written"),
    (["expire", "claim"], [None, False], "expired"),
    (["expire", "cancel"], [None, False], "expired"),
    (["claim", "expire", "complete"], [True, None, None], "written"),
    (["claim", "expire", "release"], [True, None, None], "expired"),
    (["claim", "expire", "cancel"], [True, None, False], "awaiting"),
    (["release"], [None], "awaiting"),
]


@pytest.mark.parametrize(("ops", "results", "final"), TABLE)
def test_state_machine(
    store: RequestStore, clock: FakeClock, ops: list[str], results: list[object], final: str
) -> None:
    """Claim, release, complete, cancel and expiry move a request as the table says."""
    r = make(store)
    got: list[object] = []
    for op in ops:
        if op == "claim":
            got.append(store.claim(r))
        elif op == "release":
            got.append(store.release(r))
        elif op == "complete":
            got.append(store.complete(r, OUTCOME))
        elif op == "cancel":
            got.append(store.cancel(r))
        elif op == "expire":
            clock.advance(TTL + 1)
            got.append(None)
    assert results == got
    assert final == r.status


def test_complete_without_claim_is_an_error(store: RequestStore) -> None:
    """Writing without holding the claim is a programming error."""
    r = make(store)
    with pytest.raises(RuntimeError, match="not claimed"):
        store.complete(r, OUTCOME)


def test_complete_records_outcome_and_closes(store: RequestStore, clock: FakeClock) -> None:
    """complete() stores the outcome, releases the claim, sets closed_at and drops the seal key."""
    r = make(store)
    r.delivery.seal_key = SealKey()
    store.claim(r)
    clock.advance(5)
    store.complete(r, OUTCOME)
    assert OUTCOME is r.outcome
    assert not r.claimed
    assert clock.now == r.closed_at
    assert r.delivery.seal_key is None


def test_cancel_drops_the_seal_key(store: RequestStore, clock: FakeClock) -> None:
    """A cancelled request drops its seal key and records when it closed."""
    r = make(store)
    r.delivery.seal_key = SealKey()
    store.cancel(r)
    assert r.delivery.seal_key is None
    assert clock.now == r.closed_at


def test_expiry_closes_at_the_deadline(store: RequestStore, clock: FakeClock) -> None:
    """A request noticed late as expired is recorded as closed at its deadline."""
    r = make(store)
    r.delivery.seal_key = SealKey()
    clock.advance(TTL + 100)
    assert r is store.get(r.id)
    assert "expired" == r.status
    assert r.expires_at == r.closed_at
    assert r.delivery.seal_key is None


def test_expiry_is_noticed_by_any_access(store: RequestStore, clock: FakeClock) -> None:
    """Touching one request applies expiry to the others too."""
    a = make(store)
    clock.advance(TTL)
    b = make(store)
    assert "expired" == a.status
    assert "awaiting" == b.status


def test_release_after_deadline_closes_at_release_time(
    store: RequestStore, clock: FakeClock
) -> None:
    """A failed write that ends past the deadline expires the request then, not earlier."""
    r = make(store)
    store.claim(r)
    clock.advance(TTL + 30)
    store.release(r)
    assert "expired" == r.status
    assert clock.now == r.closed_at


def test_claimed_request_does_not_expire(store: RequestStore, clock: FakeClock) -> None:
    """A write in progress keeps the request awaiting past its deadline."""
    r = make(store)
    store.claim(r)
    clock.advance(TTL * 2)
    assert r is store.get(r.id)
    assert "awaiting" == r.status
    assert r.claimed


def test_closed_request_is_kept_then_forgotten(store: RequestStore, clock: FakeClock) -> None:
    """A closed request is found for keep_closed seconds, then no longer."""
    r = make(store)
    store.cancel(r)
    clock.advance(3599)
    assert r is store.get(r.id)
    assert r is store.by_token(r.token)
    clock.advance(1)
    assert store.get(r.id) is None
    assert store.by_token(r.token) is None


def test_expired_long_ago_is_forgotten_at_once(store: RequestStore, clock: FakeClock) -> None:
    """A request whose deadline passed more than keep_closed ago is simply gone."""
    r = make(store)
    clock.advance(TTL + 3600)
    assert store.get(r.id) is None


def test_open_request_is_never_forgotten(store: RequestStore, clock: FakeClock) -> None:
    """Only closed requests are forgotten; a claimed one stays however long the write takes."""
    r = make(store)
    store.claim(r)
    clock.advance(TTL + 10 * 3600)
    assert r is store.get(r.id)


def test_close_all_cancels_awaiting(store: RequestStore) -> None:
    """Shutdown cancels every awaiting request and drops its seal key; closed ones keep status."""
    a, b = make(store), make(store)
    a.delivery.seal_key = SealKey()
    store.claim(b)
    store.complete(b, OUTCOME)
    store.close_all()
    assert "cancelled" == a.status
    assert a.delivery.seal_key is None
    assert "written" == b.status


def test_close_all_lets_a_write_in_progress_complete(store: RequestStore) -> None:
    """A write under way at shutdown is recorded as written when it completes."""
    r = make(store)
    store.claim(r)
    store.close_all()
    assert "awaiting" == r.status
    store.complete(r, OUTCOME)
    assert "written" == r.status


def test_close_all_then_release_cancels(store: RequestStore) -> None:
    """A write under way at shutdown that fails leaves the request cancelled, not open."""
    r = make(store)
    store.claim(r)
    store.close_all()
    store.release(r)
    assert "cancelled" == r.status
    assert not store.claim(r)


# -- waiting --------------------------------------------------------------------------------


async def test_wait_returns_written_when_completed(store: RequestStore) -> None:
    """A waiter wakes with `written` as soon as the write completes."""
    r = make(store)
    waiter = asyncio.create_task(store.wait(r, 30))
    await asyncio.sleep(0)
    store.claim(r)
    store.complete(r, OUTCOME)
    assert "written" == await asyncio.wait_for(waiter, 1)


async def test_wait_wakes_every_waiter(store: RequestStore) -> None:
    """Many concurrent waiters are all woken by one change."""
    r = make(store)
    waiters = [asyncio.create_task(store.wait(r, 30)) for _ in range(20)]
    await asyncio.sleep(0)
    store.cancel(r)
    assert ["cancelled"] * 20 == await asyncio.wait_for(asyncio.gather(*waiters), 1)


async def test_wait_sees_cancel(store: RequestStore) -> None:
    """Cancelling during a wait ends it with `cancelled`."""
    r = make(store)
    waiter = asyncio.create_task(store.wait(r, 30))
    await asyncio.sleep(0.01)
    assert store.cancel(r)
    assert "cancelled" == await asyncio.wait_for(waiter, 1)


async def test_wait_wakes_on_fake_clock_expiry(store: RequestStore, clock: FakeClock) -> None:
    """When the clock passes the deadline, the next access expires the request and wakes waiters."""
    r = make(store)
    waiter = asyncio.create_task(store.wait(r, 30))
    await asyncio.sleep(0.01)
    assert not waiter.done()
    clock.advance(TTL)
    store.get("anything")
    assert "expired" == await asyncio.wait_for(waiter, 1)


async def test_wait_wakes_on_real_expiry_without_other_access() -> None:
    """With the real clock, a waiter notices the TTL passing on its own."""
    store = RequestStore()
    r = make(store, ttl=0.05)
    started = time.monotonic()
    assert "expired" == await store.wait(r, 5)
    assert time.monotonic() - started < 1


async def test_wait_times_out_awaiting(store: RequestStore) -> None:
    """With nothing happening, wait() returns `awaiting` after its timeout."""
    r = make(store)
    started = time.monotonic()
    assert "awaiting" == await store.wait(r, 0.05)
    assert 0.04 <= time.monotonic() - started < 1


async def test_wait_returns_at_once_when_closed(store: RequestStore) -> None:
    """Waiting on a closed request answers its final status immediately."""
    r = make(store)
    store.cancel(r)
    assert "cancelled" == await asyncio.wait_for(store.wait(r, 30), 0.5)


async def test_wait_on_stalled_write_does_not_busy_loop(
    store: RequestStore, clock: FakeClock
) -> None:
    """A claimed request past its deadline is waited on quietly until the timeout."""
    r = make(store)
    store.claim(r)
    clock.advance(TTL + 1)
    clock.reads = 0
    assert "awaiting" == await store.wait(r, 0.1)
    assert clock.reads < 10


async def test_wait_on_claimed_request_ends_with_the_write(
    store: RequestStore, clock: FakeClock
) -> None:
    """A waiter on a write running past the deadline gets `written` when it completes."""
    r = make(store)
    store.claim(r)
    clock.advance(TTL + 1)
    waiter = asyncio.create_task(store.wait(r, 30))
    await asyncio.sleep(0.01)
    store.complete(r, OUTCOME)
    assert "written" == await asyncio.wait_for(waiter, 1)


async def test_wait_keeps_waiting_through_a_failed_write(store: RequestStore) -> None:
    """A claim and release wake no waiter into a final answer; the request stays open."""
    r = make(store)
    waiter = asyncio.create_task(store.wait(r, 30))
    await asyncio.sleep(0)
    store.claim(r)
    await asyncio.sleep(0.01)
    store.release(r)
    await asyncio.sleep(0.01)
    assert not waiter.done()
    store.cancel(r)
    assert "cancelled" == await asyncio.wait_for(waiter, 1)


async def test_cancelling_a_waiter_leaves_the_request_open(store: RequestStore) -> None:
    """Stopping a blocking call (notifications/cancelled) does not close the request."""
    r = make(store)
    waiter = asyncio.create_task(store.wait(r, 30))
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert "awaiting" == r.status
    assert store.claim(r)


async def test_close_all_wakes_waiters(store: RequestStore) -> None:
    """Shutdown ends every wait with `cancelled`."""
    a, b = make(store), make(store)
    waiters = [asyncio.create_task(store.wait(x, 30)) for x in (a, b)]
    await asyncio.sleep(0)
    store.close_all()
    assert ["cancelled", "cancelled"] == await asyncio.wait_for(asyncio.gather(*waiters), 1)


async def test_two_submits_race_for_one_claim(store: RequestStore) -> None:
    """Of two writers interleaving at await points, exactly one gets the claim."""
    r = make(store)
    wins: list[int] = []

    async def submit(n: int) -> None:
        await asyncio.sleep(0)
        if store.claim(r):
            await asyncio.sleep(0.01)
            store.complete(r, OUTCOME)
            wins.append(n)

    await asyncio.gather(submit(1), submit(2))
    assert 1 == len(wins)
    assert "written" == r.status


def test_store_imports_nothing_above_it() -> None:
    """The store sits below the collect core (DESIGN §2): it imports no core, door or page."""
    import ast

    import offprompt.store

    tree = ast.parse(Path(offprompt.store.__file__).read_text(encoding="utf-8"))
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    } | {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    above = ("offprompt.collect", "offprompt.tools", "offprompt.mcp", "offprompt.page")
    assert [m for m in sorted(imported) if m.startswith(above)] == []
    assert "offprompt.crypto.tokens" in imported  # the walk does see the store's imports


# -- the confirmation code (DESIGN §17) -------------------------------------------------------


def held(value: str = "canary-store-value") -> Prepared:
    return Prepared(
        values={"STRIPE_SECRET_KEY": value, "RESEND_API_KEY": value + "-2"},
        supplied=("STRIPE_SECRET_KEY", "RESEND_API_KEY"),
    )


def other_code(code: str) -> str:
    return ("2" if code[0] != "2" else "3") + code[1:]


def test_hold_returns_the_code_and_shows_confirm(store: RequestStore) -> None:
    """A held submit: the code is returned, kept out of repr, and the request shows `confirm`."""
    req = make(store)
    assert req.shown_status == "awaiting"
    code = store.hold(req, held())
    assert len(code) == 7
    assert (req.status, req.shown_status) == ("awaiting", "confirm")
    assert req.delivery.code == code
    assert code not in repr(req) + repr(req.delivery)
    assert "canary-store-value" not in repr(req.delivery)


def test_the_code_is_made_from_the_request_key_and_the_submission(store: RequestStore) -> None:
    """The code is the HMAC of the request's key over its id and the submission's digest."""
    from offprompt.crypto.confirm import code_for

    req = make(store)
    code = store.hold(req, held())
    key = req.delivery.confirm_key
    assert key is not None
    assert code == code_for(key, req.id, held().digest())
    assert store.hold(req, held("canary-another")) != code


def test_a_right_code_is_used_once(store: RequestStore) -> None:
    """Right: the caller may write the held submission; the code cannot be used again."""
    req = make(store)
    code = store.hold(req, held())
    assert store.try_code(req, code.lower()) == "right"
    assert req.delivery.code is None
    assert store.take_pending(req) == held()
    assert req.delivery.pending is None
    assert store.try_code(req, code) == "none"


def test_each_wrong_code_takes_one_try(store: RequestStore) -> None:
    """Wrong: one try fewer, the submission still held."""
    req = make(store)
    code = store.hold(req, held())
    for left in (4, 3, 2, 1):
        assert store.try_code(req, other_code(code)) == "wrong"
        assert req.delivery.tries_left == left
        assert req.shown_status == "confirm"


def test_the_fifth_wrong_code_drops_the_values_and_cancels(store: RequestStore) -> None:
    """The fifth wrong code closes the request as cancelled, with the reason, values dropped."""
    req = make(store)
    code = store.hold(req, held())
    wrong = other_code(code)
    answers = [store.try_code(req, wrong) for _ in range(5)]
    assert answers == ["wrong"] * 4 + ["cancelled"]
    assert req.status == "cancelled"
    assert req.delivery.confirm_reason is not None
    assert "wrong" in req.delivery.confirm_reason
    assert (req.delivery.pending, req.delivery.code, req.delivery.confirm_key) == (None, None, None)
    assert store.try_code(req, code) == "closed"


def test_a_new_hold_replaces_the_old_but_keeps_the_tries(store: RequestStore) -> None:
    """Submitting the page again holds the new values under a new code; tries are not reset."""
    req = make(store)
    first = store.hold(req, held())
    store.try_code(req, other_code(first))
    second = store.hold(req, held("canary-second"))
    assert req.delivery.tries_left == 4
    assert second != first  # another submission, another code (2**-35 to collide)
    assert store.try_code(req, first) == "wrong"
    assert req.delivery.tries_left == 3
    assert store.try_code(req, second) == "right"


def test_no_code_is_tried_before_a_hold(store: RequestStore) -> None:
    """Nothing held: `none`, and no try is spent."""
    req = make(store)
    assert store.try_code(req, "ABCD-EFG") == "none"
    assert req.delivery.tries_left == 5


def test_a_closed_or_claimed_request_takes_no_code_and_no_hold(store: RequestStore) -> None:
    """Being written or closed: `closed` to a code, RequestClosed to a hold."""
    from offprompt.errors import RequestClosed

    req = make(store)
    code = store.hold(req, held())
    assert store.claim(req)
    assert store.try_code(req, code) == "closed"
    with pytest.raises(RequestClosed):
        store.hold(req, held())
    store.release(req)
    store.cancel(req)
    assert store.try_code(req, code) == "closed"
    with pytest.raises(RequestClosed):
        store.hold(req, held())


def test_closing_drops_the_held_submission_and_key(store: RequestStore, clock: FakeClock) -> None:
    """Expiry forgets the held values, the code and the key."""
    req = make(store)
    store.hold(req, held())
    clock.advance(TTL + 1)
    assert store.get(req.id) is req
    assert req.status == "expired"
    assert (req.delivery.pending, req.delivery.code, req.delivery.confirm_key) == (None, None, None)
    assert req.shown_status == "expired"


async def test_a_hold_wakes_a_shown_waiter_but_not_a_plain_one(store: RequestStore) -> None:
    """wait_shown returns `confirm` on a hold; wait goes on until the request closes."""
    req = make(store)
    shown = asyncio.ensure_future(store.wait_shown(req, timeout=5))
    plain = asyncio.ensure_future(store.wait(req, timeout=0.3))
    await asyncio.sleep(0)
    store.hold(req, held())
    assert await asyncio.wait_for(shown, 1) == "confirm"
    assert await plain == "awaiting"
    assert await store.wait_shown(req, timeout=5) == "confirm"  # at once while held
