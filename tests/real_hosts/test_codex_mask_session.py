"""What "masked" (denied) means per Codex session (DESIGN §15, issue 43), in real Codex 0.171.0
driven by a scripted model, with the guard `offprompt init` installs: a session started above a
project `init --agent codex --mask` denied never loads that project's profile, and one started
with `--approve-for-me` replaces it; the guard keeps blocking reads of its files by name."""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers import tool_or_skip

from offprompt.collect.parts import mask_keeper
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

from .conftest import MakeWorld
from .harness import PY, World, run
from .model import ToolScript

pytestmark = pytest.mark.real_hosts

KEY = "STRIPE_SECRET_KEY"
BLOCKED = "offprompt guard: blocked"
# Codex runs a hook only once the person trusted it (/hooks); print mode skips that question.
TRUST = ["--dangerously-bypass-hook-trust"]


async def _write(world: World, project_dir: str, values: dict[str, str]) -> None:
    store = RequestStore()
    secrets = tuple(SecretSpec(n) for n in values)
    project = world.project / project_dir
    request = store.create(secrets, SinkSpec(), project, "the app", ttl=60)
    journal = Journal(world.state / "journal.jsonl")
    await Submitter(store, journal, mask=mask_keeper()).submit(request, values)


def guarded(world: World, web: str) -> dict[str, str]:
    """The guard at the project's root (`init --agent codex`, Codex's user hooks) and
    `init --agent codex --mask` in the subfolder `web`, whose `.env` offprompt wrote; the
    environment Codex runs in."""
    offprompt = world.root / "bin" / "offprompt"
    offprompt.parent.mkdir(exist_ok=True)
    offprompt.write_text(f'#!/bin/sh\nexec {PY} -m offprompt "$@"\n')
    offprompt.chmod(0o755)
    env = world.codex()
    (world.project / web).mkdir(parents=True, exist_ok=True)
    asyncio.run(_write(world, web, {KEY: f"sk_live_{world.canary}"}))
    for folder, flags in ((world.project, []), (world.project / web, ["--mask"])):
        argv = [PY, "-m", "offprompt", "init", "--agent", "codex", *flags]
        argv += ["--project", str(folder), "--command", f"{offprompt} serve"]
        done = run(argv, env, folder, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
    return env


def codex_exec(world: World, env: dict[str, str], *flags: str) -> str:
    argv = [tool_or_skip("codex"), "exec", "--skip-git-repo-check", *TRUST, *flags, "Check."]
    done = run(argv, env, world.project, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_a_codex_session_started_above_a_denied_subfolder_gets_no_value(
    make_world: MakeWorld, canary: str
) -> None:
    """Codex started at the monorepo's root loads no profile of `apps/web` (its denial is not
    in force there): `cat apps/web/.env`, and the same after `cd`, are blocked by the guard."""
    model = ToolScript("openai", [])
    world = make_world("openai", model=model)
    env = guarded(world, "apps/web")
    model.calls = [
        ("exec_command", {"cmd": "cat apps/web/.env"}),
        ("exec_command", {"cmd": "cd apps/web && cat .env"}),
        ("exec_command", {"cmd": "cat README.md 2>&1; echo everyday"}),
    ]
    printed = codex_exec(world, env)

    out = model.outputs()
    print("RESULTS", json.dumps(out, indent=1).replace(canary, "<canary>"))
    assert len(out) == 3
    assert BLOCKED in out[0]
    assert BLOCKED in out[1]
    assert "everyday" in out[2]
    assert canary.encode() not in model.raw()
    assert canary not in printed


def test_a_codex_session_that_replaces_the_profile_keeps_the_guard(
    make_world: MakeWorld, canary: str
) -> None:
    """`codex exec --approve-for-me` (new in 0.171) runs commands in the built-in
    workspace-write sandbox instead of the project's denying profile (measured: a read whose
    name the guard cannot see, `open('.e'+'nv')`, then printed the value). The guard never
    leaves a Codex read to the profile, so `cat .env` and `source .env` are still blocked;
    what remains open (a name hidden from the command) is in THREAT_MODEL, and `agents` lists
    the switch."""
    model = ToolScript("openai", [])
    world = make_world("openai", model=model)
    env = guarded(world, "app")
    model.calls = [
        ("exec_command", {"cmd": "cd app && cat .env", "workdir": str(world.project)}),
        ("exec_command", {"cmd": f"cd app && . ./.env && echo ${KEY}"}),
    ]
    printed = codex_exec(world, env, "--approve-for-me")

    out = model.outputs()
    print("RESULTS", json.dumps(out, indent=1).replace(canary, "<canary>"))
    assert len(out) == 2
    assert [] == [r for r in out if BLOCKED not in r]
    assert canary.encode() not in model.raw()
    assert canary not in printed
