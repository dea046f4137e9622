"""`offprompt serve` with a stand-in for the page's held submit (DESIGN §17), for tests that
drive the real server over stdio while the page's own hold is built elsewhere.

When the file named by CONFIRM_HOLD appears, holding `{"request_id": ..., "values": {...}}`,
the server deletes it, prepares that submission (`Submitter.prepare`) and holds it
(`RequestStore.hold`) as the page does, and writes the code the page would show to the file
named by CONFIRM_CODE: the test plays the person who reads it off their page.
"""

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from offprompt.__main__ import main
from offprompt.tools import service as service_module

HOLD = Path(os.environ["CONFIRM_HOLD"])
CODE = Path(os.environ["CONFIRM_CODE"])
_init = service_module.Service.__init__


def _taken() -> dict[str, Any] | None:
    """The submission the test asked to hold, once; None while there is none."""
    if not HOLD.exists():
        return None
    asked: dict[str, Any] = json.loads(HOLD.read_text())
    HOLD.unlink()
    return asked


def _show(code: str) -> None:
    """What the person's page would show, for the test to read."""
    part = CODE.with_suffix(".part")
    part.write_text(code)
    part.replace(CODE)


async def _watch(service: service_module.Service) -> None:
    while True:
        await asyncio.sleep(0.05)
        asked = _taken()
        if asked is None:
            continue
        request = service.store.get(asked["request_id"])
        assert request is not None
        prepared = await service.core.parts.submitter.prepare(request, asked["values"])
        _show(service.store.hold(request, prepared))


def _init_and_watch(self: service_module.Service, *args: Any, **kwargs: Any) -> None:
    _init(self, *args, **kwargs)
    task = asyncio.get_running_loop().create_task(_watch(self))
    self.__dict__["_watcher"] = task  # kept alive while the service lives


service_module.Service.__init__ = _init_and_watch  # type: ignore[method-assign]
sys.argv = ["offprompt", "serve"]
main()
