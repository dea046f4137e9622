"""secret_status over a real `offprompt serve` pipe (DESIGN §12 "Never a name from inside a
value"): a base32 seed written as a file sink through the real Submitter is never a key name
in the answer, after the project folder is renamed, `mv secrets s2`, a hard link `seed.env`,
or with another state dir."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import assert_no_part
from wire import OFFPROMPT, Wire

from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

ENV = {"OFFPROMPT_SANDBOX": "0", "BROWSER": "false"}
_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def seed() -> str:
    return "JB" + "".join(secrets.choice(_B32) for _ in range(30)) + "====="


def write_file_sink(project: Path, path: str, value: str) -> None:
    store = RequestStore()
    req = store.create(
        (SecretSpec("TOTP_SEED"),), SinkSpec(kind="file", path=path), project, "r", ttl=300
    )
    asyncio.run(Submitter(store, Journal()).submit(req, {"TOTP_SEED": value}))


def ask(spawn: Callable[..., Wire], project: Path, path: str, env: dict[str, str]) -> str:
    w = spawn(OFFPROMPT, env={**ENV, **env}, cwd=str(project))
    w.initialize()
    reply = w.request("tools/call", {"name": "secret_status", "arguments": {"path": path}})
    return json.dumps(reply)


@pytest.mark.parametrize("move", ["rename-project", "mv-secrets", "hard-link", "state-dir"])
def test_secret_status_never_names_a_stretch_of_a_moved_file_sink(
    spawn: Callable[..., Wire], tmp_path: Path, move: str
) -> None:
    project = tmp_path / "p"
    (project / "secrets").mkdir(parents=True)
    value = seed()
    env: dict[str, str] = {}
    if move == "rename-project":
        write_file_sink(project, ".env.totp", value)
        project = project.rename(tmp_path / "renamed")
        path = ".env.totp"
    elif move == "mv-secrets":
        write_file_sink(project, "secrets/seed.env", value)
        (project / "secrets").rename(project / "s2")
        path = "s2/seed.env"
    elif move == "hard-link":
        write_file_sink(project, "secrets/seed.txt", value)
        os.link(project / "secrets/seed.txt", project / "seed.env")
        path = "seed.env"
    else:
        write_file_sink(project, "secrets/seed", value)
        env["OFFPROMPT_STATE_DIR"] = str(tmp_path / "other-state")
        path = "secrets/seed"
    out = ask(spawn, project, path, env)
    assert '"status": "set"' in out or '"status":"set"' in out
    assert_no_part(value, out)
