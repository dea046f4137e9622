"""A masked project's undo records and commented-out values in real Claude Code on Linux (DESIGN
§15 "Every process", "Every copy offprompt makes"): a job the agent left running reads no
record a killed write left, wherever records live; and a value the person commented out before
a rotation is masked like the one offprompt wrote after it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from offprompt.disk.walk import KEEP_NAME

from .conftest import MakeWorld
from .harness import PY, World
from .mask_routes import KEY, STAND_IN, Route
from .test_mask import Acting, Watched, _write, bash, claude_run, mask, sandbox_or_skip

pytestmark = pytest.mark.real_hosts

_WRITER = """
import json, sys
from pathlib import Path
from offprompt import sinks
from offprompt.spec import SinkSpec
order = json.loads(sys.stdin.read())
sinks.write(Path(order["project"]), SinkSpec(), order["values"], in_place=True)
"""


def killed_write(project: Path, env: dict[str, str], values: dict[str, str]) -> None:
    """A real write in place of `values`, SIGKILLed (by strace) as it cuts the file to its new
    length: its undo record, the file's old bytes, is left in the state dir."""
    strace = shutil.which("strace")
    if strace is None and os.environ.get("CI") == "true":
        pytest.fail("strace is missing in CI: .ci/run installs it")
    if strace is None:
        pytest.skip("strace not installed")
    done = subprocess.run(
        [strace, "-qq", "-o", "/dev/null", "-e", "trace=ftruncate",
         "-e", "inject=ftruncate:signal=SIGKILL:when=1", PY, "-c", _WRITER],
        input=json.dumps({"project": str(project), "values": values}).encode(),
        env=env, capture_output=True, timeout=60,
    )  # fmt: skip
    assert done.returncode in (-9, 137), done.stderr


def test_a_job_running_before_a_killed_write_reads_no_undo_record(
    make_world: MakeWorld, canary: str
) -> None:
    """The agent leaves a job looping over every place an undo record could be (the state
    dir's `undo` folder, the project's old `.offprompt-keep`) and reading the .env; offprompt's
    write of a shorter key is then killed midway, leaving the old file in a record: the job
    reads neither the old value nor the new one, and the model gets neither."""
    sandbox_or_skip()
    later = f"sk-proj-{canary[::-1][:12]}"
    worlds: list[World] = []

    def kill_a_write() -> None:
        world = worlds[0]
        killed_write(world.project, world.env, {KEY: later})
        records = [p for p in undo.iterdir() if not p.name.endswith(".tmp")]
        assert [] != records, "the killed write left no record"  # the test is not vacuous
        assert any(canary.encode() in p.read_bytes() for p in records)

    model = Acting(1, kill_a_write)
    world = make_world("anthropic", model=model)
    worlds.append(world)
    model.project = world.project
    mask(world, f"{KEY}=\nDEBUG=1\n")
    undo = Path(os.path.realpath(world.state)) / KEEP_NAME
    loop = (
        f"for i in $(seq 40); do cat {undo}/* {KEEP_NAME}/* .env; ls -A {undo}; sleep 0.2;"
        " done > seen.txt 2>&1"
    )
    model.calls = [
        ("Bash", {"command": loop, "description": "Watch", "run_in_background": True}),
        bash(Route("sleep 3; tail -5 seen.txt")),
    ]
    out = claude_run(world, "--allowedTools", "Bash")

    assert later in (world.project / ".env").read_text()  # the killed write's new bytes
    seen = (world.project / "seen.txt").read_text()
    assert STAND_IN in seen  # the job ran and read the .env through the mask
    assert canary not in seen, "the running job read the old value"
    assert later[8:] not in seen, "the running job read the new value"
    for value in (canary, later[8:]):
        assert value.encode() not in model.raw()
        assert value not in out


def test_a_value_commented_out_before_a_rotation_stays_masked(
    make_world: MakeWorld, canary: str
) -> None:
    """The person comments out the line offprompt wrote (`# OPENAI_API_KEY=<old>`) and has
    offprompt write the new key: `cat .env` in the sandbox shows the commented line with a
    stand-in, and neither value reaches the model."""
    sandbox_or_skip()
    model = Watched()
    world = make_world("anthropic", model=model)
    model.project = world.project
    mask(world, f"{KEY}=\nDEBUG=1\n")
    env = world.project / ".env"
    env.write_text(env.read_text().replace(f"{KEY}=sk-proj-", f"# {KEY}=sk-proj-"))
    new = f"sk-proj-{canary[::-1]}"
    asyncio.run(_write(world, {KEY: new}))
    assert f"# {KEY}=sk-proj-{canary}\n" in env.read_text()
    model.calls = [bash(Route("cat .env", (STAND_IN, "DEBUG=1")))]

    out = claude_run(world, "--allowedTools", "Bash")

    (shown,) = model.outputs()
    assert f"# {KEY}={STAND_IN}" in shown, shown.replace(canary, "<canary>")
    assert canary not in shown
    assert canary[::-1] not in shown
    assert canary.encode() not in model.raw()
    assert canary[::-1].encode() not in model.raw()
    assert canary not in out
