"""File work off the protocol's event loop, in threads that never hold up the process's exit,
and never more than `MAX_WORKERS` of them at once.

`asyncio.to_thread` uses the loop's executor, whose threads `asyncio.run` and the interpreter
wait for at exit: one stuck on a FIFO named like a project file kept the server from exiting.
A read of a hung file system cannot be interrupted, so its thread is left behind; the bound
keeps an agent that calls again and again from piling up such threads without end. When every
worker is busy, a call waits `SLOT_WAIT` seconds for one, then is refused (a ProjectError).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Final, TypeVar

from offprompt.errors import ProjectError

__all__ = ["MAX_WORKERS", "SLOT_WAIT", "run_off_loop"]

T = TypeVar("T")

MAX_WORKERS: Final = 8
"""File-work threads at once, process-wide: a few calls of one session at a time, with room."""
SLOT_WAIT: Final = 10.0
"""Seconds a call waits for a worker: past the longest a read that ends takes (status's 16 MiB
budget, 9 s), so only work that is stuck, not slow, turns a later call away."""


class _Slots:
    """At most `size` taken at once, process-wide; a caller waits on its own event loop, in
    turn, for one to come free."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._free = size
        self._lock = threading.Lock()
        self._waiting: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    @property
    def taken(self) -> int:
        with self._lock:
            return self.size - self._free

    async def take(self, wait: float) -> None:
        """One slot, within `wait` seconds; ProjectError when none comes free by then."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                return
            handed: asyncio.Future[None] = loop.create_future()
            entry = (loop, handed)
            self._waiting.append(entry)
        try:
            await asyncio.wait_for(handed, wait)
        except BaseException as e:
            with self._lock:
                queued = entry in self._waiting
                if queued:
                    self._waiting.remove(entry)
            if not queued and handed.done() and not handed.cancelled():
                # Handed to us just as the wait ended (`_hand` and this run on one loop).
                if isinstance(e, TimeoutError):
                    return
                self.give()
            # Otherwise, if one is on its way, `_hand` finds `handed` cancelled and passes it on.
            if isinstance(e, TimeoutError):
                raise ProjectError(
                    f"offprompt's {self.size} file readers are all still waiting on files that "
                    f"have not answered, none within {wait:g} s (a hung network or removable "
                    "disk?), so nothing was read; check the project's file system, then call "
                    "again."
                ) from None
            raise

    def give(self) -> None:
        """Free a slot: to the first waiter still waiting, else back to the pool. Any thread."""
        with self._lock:
            while self._waiting:
                loop, handed = self._waiting.popleft()
                with contextlib.suppress(RuntimeError):  # that loop closed: the next waiter
                    loop.call_soon_threadsafe(self._hand, handed)
                    return
            self._free += 1

    def _hand(self, handed: asyncio.Future[None]) -> None:
        if handed.done():  # its caller gave up or was cancelled before this ran
            self.give()
        else:
            handed.set_result(None)


_SLOTS: Final = _Slots(MAX_WORKERS)


async def run_off_loop(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a daemon thread (with this task's context), awaited here; a
    ProjectError, before `fn` runs, when no worker came free within `SLOT_WAIT` seconds."""
    await _SLOTS.take(SLOT_WAIT)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        try:
            result: T | None = context.run(fn, *args, **kwargs)
            error: BaseException | None = None
        except BaseException as e:  # handed to the awaiting task, which decides
            result, error = None, e
        finally:
            _SLOTS.give()  # as soon as the work ends, whoever still waits for its answer
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:  # the loop closed meanwhile: nobody waits for this any more
            pass

    try:
        threading.Thread(target=work, name="offprompt-file-work", daemon=True).start()
    except BaseException:
        _SLOTS.give()
        raise
    return await done
