"""The mask (DESIGN §15 "Every process") and the guard's masked-project rule (§14) in real
Claude Code on Linux: the project's app, started the usual ways, runs on the stand-ins with the
guard installed; and a job the agent left running from before a write offprompt makes stays on
stand-ins, since a masked file is written in place (a rename would make Linux drop the
sandbox's mount over it and show the job the real file, measured)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from helpers import tool_or_skip

from .conftest import MakeWorld
from .harness import PY, World
from .mask_routes import KEY, STAND_IN, Route
from .test_mask import Watched, _write, assert_kept_out, bash, claude_run, mask, sandbox_or_skip

pytestmark = pytest.mark.real_hosts

APP_JS = (
    "const key = process.env.OPENAI_API_KEY || '';\n"
    f"console.log('app ran, key is', key.startsWith('{STAND_IN}') ? 'the stand-in' : 'real');\n"
)
APP_PY = (
    "import os\nkey = os.environ.get('OPENAI_API_KEY', '')\n"
    f"print('app ran, key is', 'the stand-in' if key.startswith('{STAND_IN}') else 'real')\n"
)


def guarded_world(make_world: MakeWorld, model: Watched) -> World:
    """A project offprompt wrote the canary key into, masked by init with the guard on (its
    hook runs this checkout's offprompt). The `.env` holds only what offprompt wrote: a line
    typed by hand would be outside the mask, so the guard would rightly keep blocking."""
    sandbox_or_skip()
    world = make_world("anthropic", model=model)
    model.project = world.project
    offprompt = world.root / "bin" / "offprompt"
    offprompt.parent.mkdir(exist_ok=True)
    offprompt.write_text(f'#!/bin/sh\nexec {PY} -m offprompt "$@"\n')
    offprompt.chmod(0o755)
    model.written = mask(world, f"{KEY}=\n", guard=str(offprompt))
    return world


def test_the_app_runs_on_the_stand_ins_with_the_guard_on(make_world: MakeWorld) -> None:
    """`node --env-file=.env`, `source .env && python3 app.py` and `set -a; . ./.env` then the
    app: what a masked project is for. The guard lets each through (the sandbox shows the app
    the stand-in) and the app runs; Claude Code's own Read tool is still stopped."""
    node = tool_or_skip("node24")
    model = Watched()
    world = guarded_world(make_world, model)
    (world.project / "app.js").write_text(APP_JS)
    (world.project / "app.py").write_text(APP_PY)
    model.calls = [
        bash(Route(f"{node} --env-file=.env app.js")),
        bash(Route("source .env && export OPENAI_API_KEY && python3 app.py")),
        bash(Route("set -a; . ./.env; set +a; python3 app.py")),
        ("Read", {"file_path": str(world.project / ".env")}),
    ]
    out = claude_run(world, "--allowedTools", "Bash,Read")

    *apps, read = model.outputs()
    assert ["app ran, key is the stand-in"] * 3 == [a.strip() for a in apps], apps
    assert "offprompt guard" in read
    assert_kept_out(world, model, out)


class WriteMidway(Watched):
    """A Watched model that, when the host asks for its second turn (the background job is
    running by then), has offprompt write a new key into the masked `.env`."""

    def __init__(self, world_of: list[World], values: dict[str, str]) -> None:
        super().__init__()
        self.world_of = world_of
        self.values = values
        self.wrote = False

    def _turn(self, body: dict[str, Any]) -> tuple[str, tuple[str, str] | None]:
        if not self.wrote and self._offers_tool(body) and len(self.outputs(body)) == 1:
            self.wrote = True
            # In a thread of its own: the model's server runs an event loop in this one.
            writer = threading.Thread(target=asyncio.run, args=(self._write(),))
            writer.start()
            writer.join(30)
        return super()._turn(body)

    async def _write(self) -> None:
        await _write(self.world_of[0], self.values)


def test_a_job_started_before_a_write_stays_on_stand_ins(
    make_world: MakeWorld, canary: str
) -> None:
    """The agent leaves a job running in the background (a watcher reading `.env` every 0.2 s
    into a file, for 8 s); offprompt then writes a second key; what the job read afterwards,
    and what the agent reads of it, hold no value: the file kept its inode, so the job's
    masked copy stayed."""
    later = canary[::-1] + "-later"
    worlds: list[World] = []
    model = WriteMidway(worlds, {"ANTHROPIC_API_KEY": f"sk-ant-api03-{later}"})
    world = guarded_world(make_world, model)
    worlds.append(world)
    env = world.project / ".env"
    inode = env.stat().st_ino
    model.calls = [
        (
            "Bash",
            {
                # Bounded: `claude -p` waits for its background jobs before it ends.
                "command": "for i in $(seq 40); do cat .env > seen.txt; sleep 0.2; done",
                "description": "Watch the settings",
                "run_in_background": True,
            },
        ),
        bash(Route("sleep 3; cat seen.txt")),
    ]
    out = claude_run(world, "--allowedTools", "Bash")

    assert model.wrote
    assert later in env.read_text()
    seen = (world.project / "seen.txt").read_text()
    assert later not in seen, "the running job read the new value"
    assert canary not in seen, "the running job read the first value"
    assert env.stat().st_ino == inode
    assert STAND_IN in seen
    _, shown = model.outputs()
    assert STAND_IN in shown
    for value in (canary, later):
        assert value.encode() not in model.raw()
        assert value not in out
