"""`offprompt` whose remote requests get a held submit as soon as their link is out, as the
person's page makes one (DESIGN §17), for tests of `offprompt collect` asking for the code.

CONFIRM_VALUES (JSON `{NAME: value}`) is what the person submits; the code their page would
show is written to the file named by CONFIRM_CODE, for the test (the person) to read.
"""

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from offprompt.__main__ import main
from offprompt.collect import core
from offprompt.collect.steps import Client, Step
from offprompt.store import RequestRecord

_deliver = core.Collector.deliver
_tasks: set[asyncio.Task[None]] = set()


def _show(code: str) -> None:
    out = Path(os.environ["CONFIRM_CODE"])
    part = out.with_suffix(".part")
    part.write_text(code)
    part.replace(out)


async def _hold(collector: core.Collector, request: RequestRecord) -> None:
    await asyncio.sleep(0.2)
    values: dict[str, Any] = json.loads(os.environ["CONFIRM_VALUES"])
    prepared = await collector.parts.submitter.prepare(request, values)
    _show(collector.store.hold(request, prepared))


async def _deliver_and_hold(self: core.Collector, request: RequestRecord, client: Client) -> Step:
    step = await _deliver(self, request, client)
    if request.remote:
        task = asyncio.get_running_loop().create_task(_hold(self, request))
        _tasks.add(task)
    return step


core.Collector.deliver = _deliver_and_hold  # type: ignore[method-assign]
sys.argv = ["offprompt", *sys.argv[1:]]
main()
