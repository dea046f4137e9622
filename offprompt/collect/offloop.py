"""File work off the protocol's event loop, in threads that never hold up the process's exit.

`asyncio.to_thread` uses the loop's executor, whose threads `asyncio.run` and the interpreter
wait for at exit: one stuck on a FIFO named like a project file kept the server from exiting.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["run_off_loop"]

T = TypeVar("T")


async def run_off_loop(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a daemon thread (with this task's context), awaited here."""
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
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:  # the loop closed meanwhile: nobody waits for this any more
            pass

    threading.Thread(target=work, name="offprompt-file-work", daemon=True).start()
    return await done
