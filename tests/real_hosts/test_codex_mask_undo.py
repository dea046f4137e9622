"""Codex 0.171 and the undo records of masked writes (DESIGN §15 "Every copy offprompt makes"):
a record (a file's old bytes) lives in offprompt's state dir, outside every workspace root, where
the profile's relative entries and globs never reach. Proven in real `codex exec` with a
scripted model and the guard hook NOT installed, so the sandbox stands alone: the absolute
entry `init --mask` puts in the profile's filesystem table keeps a record made before Codex
started, and one made while a command of its was running, from every command.

Measured besides, last: the same entry for a folder not there when a command starts does not
reach into that command once the folder is made (later commands are denied), which is why init
makes the folder (0700) before any Codex reads the profile.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from .conftest import MakeWorld
from .harness import PY, World, run
from .model import ToolScript
from .test_codex_mask import EVERYDAY, PROFILE, README, codex_exec, configure, results

pytestmark = pytest.mark.real_hosts

RECORDS = ".offprompt-keep"
EARLY = "0" * 32
LATE = "f" * 32


def config(world: World) -> Path:
    return world.project / ".codex" / "config.toml"


def _init(world: World, env: dict[str, str]) -> None:
    argv = [PY, "-m", "offprompt", "init", "--agent", "codex", "--mask", "--no-guard"]
    argv += ["--project", str(world.project), "--command", "offprompt serve"]
    done = run(argv, env, world.project, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "codex: denied, not masked" in done.stdout
    assert f'"{world.state / RECORDS}" = "deny"' in config(world).read_text()


def _record_later(world: World, folder: str) -> threading.Thread:
    """A record made once Codex is running a command (the model has had its first turn); the
    folder too when it is not there."""

    def make() -> None:
        deadline = time.monotonic() + 120
        while not world.model.conversation() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.5)  # well inside the first command's sleep
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with open(f"{folder}/{LATE}", "x") as f:
            f.write(f"late {world.canary}\n")

    thread = threading.Thread(target=make, daemon=True)
    thread.start()
    return thread


def test_init_mask_denies_the_undo_records_to_codex(make_world: MakeWorld, canary: str) -> None:
    """After `init --agent codex --mask`, a command Codex runs reads no undo record in the state
    dir: not one made before Codex started, not one made while that command ran, not one made
    before the next command; the folder cannot be listed and README still reads."""
    model = ToolScript("openai", [])
    world = make_world("openai", model=model)
    (world.project / "README.md").write_text(f"# app\n{README}\n")
    (world.project / ".env").write_text("KEY=\n")
    env = configure(world, "project", "")
    _init(world, env)
    folder = world.state / RECORDS
    folder.mkdir(mode=0o700, exist_ok=True)  # a write's record beside an unchanged init, too
    (folder / EARLY).write_text(f"early {canary}\n")
    # /tmp kept read-only as the other Codex tests do (this machine's /tmp is shared).
    table = f"[permissions.{PROFILE}.filesystem]\n"
    text = config(world).read_text()
    config(world).write_text(text.replace(table, table + '":slash_tmp" = "read"\n', 1))
    where = str(folder)
    model.calls[:] = [
        ("exec_command", {"cmd": f"sleep 5; cat {where}/{LATE}; cat {where}/{EARLY}"}),
        ("exec_command", {"cmd": f"cat {where}/{EARLY}"}),
        ("exec_command", {"cmd": f"cat {where}/{LATE}"}),
        ("exec_command", {"cmd": f"ls {where}"}),
        EVERYDAY,
    ]
    later = _record_later(world, where)

    printed = codex_exec(world, env)

    later.join(5)
    assert (folder / LATE).exists()
    *refused, everyday = results(model, 5)
    assert README in everyday
    assert [] == [r for r in refused if "Permission denied" not in r]
    assert canary.encode() not in world.model.raw()
    assert canary not in printed


def test_a_command_started_before_the_folder_existed_reads_into_it(
    make_world: MakeWorld, canary: str
) -> None:
    """Why init makes the records' folder: with the profile's entry in place but the folder
    gone when Codex starts, the command running when the folder and a record are made reads
    the record; the next command is denied it."""
    model = ToolScript("openai", [])
    world = make_world("openai", model=model)
    (world.project / "README.md").write_text(f"# app\n{README}\n")
    env = configure(world, "project", "")
    _init(world, env)
    folder = world.state / RECORDS
    folder.rmdir()
    table = f"[permissions.{PROFILE}.filesystem]\n"
    text = config(world).read_text()
    config(world).write_text(text.replace(table, table + '":slash_tmp" = "read"\n', 1))
    where = str(folder)
    model.calls[:] = [
        ("exec_command", {"cmd": f"sleep 5; cat {where}/{LATE}"}),
        ("exec_command", {"cmd": f"cat {where}/{LATE}"}),
    ]
    later = _record_later(world, where)

    codex_exec(world, env)

    later.join(5)
    running, after = results(model, 2)
    assert f"late {canary}" in running
    assert "Permission denied" in after
    assert canary not in after
