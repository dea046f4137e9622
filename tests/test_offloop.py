"""File work off the event loop (offprompt/offloop.py): real threads, at most MAX_WORKERS of them
at once, and work stuck for good turns a later call away after SLOT_WAIT instead of holding it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from offprompt import offloop
from offprompt.errors import ProjectError
from offprompt.offloop import MAX_WORKERS, run_off_loop

SETTLE = 10.0  # seconds a step below may take on a loaded machine before the test fails


def workers() -> int:
    return sum(t.name == "offprompt-file-work" for t in threading.enumerate())


async def until(check: object, what: str) -> None:
    deadline = time.monotonic() + SETTLE
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)


class Stuck:
    """Work that waits, in its thread, until the test lets it go (as a hung read would)."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.gates: dict[int, threading.Event] = {}
        self.over = False
        self._lock = threading.Lock()

    def __call__(self, i: int) -> int:
        with self._lock:
            self.started.append(i)
            gate = self.gates.setdefault(i, threading.Event())
            if self.over:
                gate.set()
        gate.wait(60)
        return i

    def end(self) -> None:
        """Let every read go, those still to come too."""
        with self._lock:
            self.over = True
            for gate in self.gates.values():
                gate.set()

    def release(self, *which: int) -> None:
        with self._lock:
            for i in which:
                self.gates.setdefault(i, threading.Event()).set()


@pytest.fixture
def stuck() -> Iterator[Stuck]:
    work = Stuck()
    yield work
    work.end()  # never leave a thread holding a worker behind a failed test


async def test_no_more_than_max_workers_threads_at_once(stuck: Stuck) -> None:
    """MAX_WORKERS + 3 calls whose work waits: MAX_WORKERS threads run, the rest wait for one
    (no thread of theirs yet); let go, every call gets its own answer."""
    before = workers()
    calls = [asyncio.create_task(run_off_loop(stuck, i)) for i in range(MAX_WORKERS + 3)]
    await until(lambda: len(stuck.started) == MAX_WORKERS, "the first workers did not start")
    await asyncio.sleep(0.2)  # room for any further thread to show up
    assert (MAX_WORKERS, MAX_WORKERS) == (len(stuck.started), workers() - before)
    stuck.release(*range(MAX_WORKERS + 3))
    assert list(range(MAX_WORKERS + 3)) == await asyncio.wait_for(asyncio.gather(*calls), SETTLE)
    assert offloop._SLOTS.taken == 0


async def test_a_worker_that_ends_goes_to_the_first_call_waiting(stuck: Stuck) -> None:
    """One stuck read ending frees its worker for the call that waited longest, at once."""
    calls = [asyncio.create_task(run_off_loop(stuck, i)) for i in range(MAX_WORKERS)]
    await until(lambda: len(stuck.started) == MAX_WORKERS, "the workers did not start")
    later = [asyncio.create_task(run_off_loop(stuck, i)) for i in (100, 101)]
    await asyncio.sleep(0.1)
    stuck.release(0)
    assert 0 == await asyncio.wait_for(calls[0], SETTLE)
    await until(lambda: 100 in stuck.started, "the first call waiting did not get the worker")
    await asyncio.sleep(0.1)
    assert 101 not in stuck.started  # still waiting: every worker is stuck again
    stuck.release(*range(MAX_WORKERS), 100, 101)
    await asyncio.wait_for(asyncio.gather(*calls, *later), SETTLE)
    assert offloop._SLOTS.taken == 0


async def test_stuck_work_turns_a_later_call_away_in_time(
    stuck: Stuck, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every worker stuck, a further call waits SLOT_WAIT, then is refused (ProjectError,
    saying what to check) without running its work; once the reads end, calls run again."""
    monkeypatch.setattr(offloop, "SLOT_WAIT", 0.3)
    calls = [asyncio.create_task(run_off_loop(stuck, i)) for i in range(MAX_WORKERS)]
    await until(lambda: len(stuck.started) == MAX_WORKERS, "the workers did not start")
    start = time.monotonic()
    with pytest.raises(ProjectError, match=r"file readers are all still waiting .* 0\.3 s"):
        await run_off_loop(stuck, 100)
    assert 0.3 <= time.monotonic() - start < SETTLE
    assert 100 not in stuck.started
    stuck.release(*range(MAX_WORKERS), 101)
    await asyncio.wait_for(asyncio.gather(*calls), SETTLE)
    assert 101 == await asyncio.wait_for(run_off_loop(stuck, 101), SETTLE)


async def test_a_call_cancelled_while_waiting_keeps_no_worker(stuck: Stuck) -> None:
    """A waiting call that is cancelled (its client went away) leaves the bound whole: after
    the stuck reads end, MAX_WORKERS new reads still run at once."""
    calls = [asyncio.create_task(run_off_loop(stuck, i)) for i in range(MAX_WORKERS)]
    await until(lambda: len(stuck.started) == MAX_WORKERS, "the workers did not start")
    waiting = asyncio.create_task(run_off_loop(stuck, 100))
    await asyncio.sleep(0.1)
    waiting.cancel()
    stuck.release(*range(MAX_WORKERS))  # frees workers while the cancel is under way
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await asyncio.wait_for(asyncio.gather(*calls), SETTLE)
    assert 100 not in stuck.started
    again = [asyncio.create_task(run_off_loop(stuck, i)) for i in range(200, 200 + MAX_WORKERS)]
    await until(lambda: len(stuck.started) == 2 * MAX_WORKERS, "the bound lost a worker")
    stuck.release(*range(200, 200 + MAX_WORKERS))
    await asyncio.wait_for(asyncio.gather(*again), SETTLE)
    assert offloop._SLOTS.taken == 0


async def test_an_error_in_the_work_is_the_call_s_and_frees_its_worker() -> None:
    """What the work raises reaches the caller as it was, and its worker is free again."""

    def broken() -> None:
        raise ValueError("the file could not be read")

    with pytest.raises(ValueError, match="could not be read"):
        await run_off_loop(broken)
    assert offloop._SLOTS.taken == 0
