"""Where Codex 0.171.0 takes a `sandbox_mode` that makes it run its older sandbox and ignore the
project's permission profile (DESIGN §15, issue 33), and how the profile's globs and denials hold
for files made, and written in place, after Codex started; each measured in real `codex exec`
with a scripted model, the profile in the trusted project's `.codex/config.toml` as
`offprompt init --mask` writes it, and no guard hook."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import tool_or_skip

from offprompt.collect.parts import mask_keeper
from offprompt.spec import SecretSpec, SinkSpec, WriteOutcome
from offprompt.store import RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

from .conftest import MakeWorld
from .harness import PY, World, run
from .model import ToolScript
from .test_codex_mask import (
    EXACT,
    KEY,
    PROFILE,
    configure,
    managed_prefix_files,
    profile,
    project,
    results,
)

pytestmark = pytest.mark.real_hosts

LEGACY = 'sandbox_mode = "workspace-write"\n'
CAT = ("exec_command", {"cmd": "cat .env"})


def codex(world: World, env: dict[str, str], *flags: str, prefix: list[str] | None = None) -> str:
    argv = [*(prefix or []), tool_or_skip("codex"), "exec", "--skip-git-repo-check", *flags, "Go."]
    done = run(argv, env, world.project, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def came_through(world: World, model: ToolScript) -> bool:
    """Whether `cat .env`, the one call, showed the value to the model."""
    (result,) = results(model, 1)
    return world.canary in result and world.canary.encode() in world.model.raw()


def test_sandbox_mode_in_the_system_config_leaves_the_profile(
    make_world: MakeWorld, canary: str
) -> None:
    """`sandbox_mode` in /etc/codex/config.toml (a layer below the project's): the highest
    layer that chooses wins, so the project's `default_permissions` holds and `.env` is
    denied."""
    model = ToolScript("openai", [CAT])
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "project", profile(EXACT))
    prefix = managed_prefix_files(world, {"config.toml": LEGACY})

    codex(world, env, prefix=prefix)

    assert not came_through(world, model)


def test_sandbox_mode_in_managed_config_drops_the_profile(
    make_world: MakeWorld, canary: str
) -> None:
    """`sandbox_mode` in /etc/codex/managed_config.toml (the legacy managed layer, on top of
    every other): the value comes through, and `offprompt agents` says the files are not
    denied."""
    model = ToolScript("openai", [CAT])
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "project", profile(EXACT))
    prefix = managed_prefix_files(world, {"managed_config.toml": LEGACY})

    codex(world, env, prefix=prefix)

    assert came_through(world, model)
    # `offprompt agents`, seeing the same /etc, says so.
    said = "not denied: Codex ignores the permissions profile that denies the files: sandbox_mode"
    assert agents_why(world, env, prefix).startswith(f"{said} in /etc/codex/managed_config.toml")


def monorepo(world: World, parent_config: str) -> Path:
    """The project made a subfolder `apps/web` of a git repository whose root `.codex/config.toml`
    holds `parent_config`; the root trusted (the subfolder inherits it). The project folder."""
    root = world.project
    sub = root / "apps" / "web"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".codex").mkdir(exist_ok=True)
    (root / ".codex" / "config.toml").write_text(parent_config)
    return sub


@pytest.mark.parametrize("legacy", [True, False])
def test_sandbox_mode_in_a_parent_folders_project_config_leaves_the_profile(
    make_world: MakeWorld, canary: str, legacy: bool
) -> None:
    """Codex run in `apps/web` of a repository: the profile in `apps/web/.codex/config.toml`;
    `sandbox_mode` in the repository root's `.codex/config.toml` (loaded too, from the git root
    down to the working folder, but below the subfolder's): `.env` is denied either way."""
    model = ToolScript("openai", [CAT])
    world = make_world("openai", model=model)
    env = configure(world, "user", "")
    sub = monorepo(world, LEGACY if legacy else "")
    (sub / ".env").write_text(f"{KEY}={canary}\n")
    (sub / ".codex").mkdir()
    (sub / ".codex" / "config.toml").write_text(
        f'default_permissions = "{PROFILE}"\n' + profile(EXACT)
    )
    argv = [tool_or_skip("codex"), "exec", "--skip-git-repo-check", "Go."]

    done = run(argv, env, sub, timeout=180)

    assert done.returncode == 0, done.stdout + done.stderr
    assert not came_through(world, model)


@pytest.mark.parametrize(
    "where",
    ["user top", "user profile not selected", "profile-v2 file"],
)
def test_sandbox_mode_in_the_users_configs_leaves_the_profile(
    make_world: MakeWorld, canary: str, where: str
) -> None:
    """`sandbox_mode` at the user config's top, in a legacy `[profiles.x]`, and in
    `$CODEX_HOME/x.config.toml` chosen with `--profile x` (user layers, below the project's):
    `.env` stays denied. (A legacy `profile = "x"` selector now stops Codex at start.)"""
    model = ToolScript("openai", [CAT])
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "project", profile(EXACT))
    user = world.codex_home / "config.toml"
    text = user.read_text()
    flags: tuple[str, ...] = ()
    if where == "user top":
        text = LEGACY + text
    elif where == "user profile not selected":
        text = text + "\n[profiles.x]\n" + LEGACY
    else:
        (world.codex_home / "x.config.toml").write_text(LEGACY)
        flags = ("--profile", "x")
    user.write_text(text)

    codex(world, env, *flags)

    assert not came_through(world, model)


def test_sandbox_mode_beside_the_profile_leaves_it(make_world: MakeWorld, canary: str) -> None:
    """`sandbox_mode` beside `default_permissions` in the project's own config: within one
    layer `default_permissions` wins, `.env` stays denied."""
    model = ToolScript("openai", [CAT])
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "project", profile(EXACT))
    config = world.project / ".codex" / "config.toml"
    config.write_text(LEGACY + config.read_text())

    codex(world, env)

    assert not came_through(world, model)


def test_bypassing_the_sandbox_drops_the_profile(make_world: MakeWorld, canary: str) -> None:
    """`--dangerously-bypass-approvals-and-sandbox`: the value comes through."""
    model = ToolScript("openai", [CAT])
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "project", profile(EXACT))

    codex(world, env, "--dangerously-bypass-approvals-and-sandbox")

    assert came_through(world, model)


# -- files made or written after Codex started -----------------------------------------------


class Staged(ToolScript):
    """A ToolScript that runs `before[i]` (in the test's process, outside Codex's sandbox) just
    before it hands Codex call i."""

    def __init__(
        self, calls: list[tuple[str, dict[str, Any]]], before: dict[int, Callable[[], None]]
    ) -> None:
        super().__init__("openai", calls)
        self.before = before
        self.ran: set[int] = set()

    def _turn(self, body: dict[str, Any]) -> tuple[str, tuple[str, str] | None]:
        done = len(self.outputs(body)) if self._offers_tool(body) else -1
        if done in self.before and done not in self.ran:
            self.ran.add(done)
            self.before[done]()
        return super()._turn(body)


GLOB_PROFILE = (
    '[permissions.offprompt.filesystem.":workspace_roots"]\n'
    '"**/.env" = "deny"\n"**/.offprompt-*" = "deny"\n"**/.offprompt-*/**" = "deny"\n'
)


def glob_profile() -> str:
    """The test profile with the globs init writes (depth 6) in place of the exact entry."""
    tables = profile("", glob_depth=6)
    return tables.replace(f'[permissions.{PROFILE}.filesystem.":workspace_roots"]\n', "") + (
        GLOB_PROFILE
    )


def test_a_glob_denies_a_file_made_after_codex_started(make_world: MakeWorld, canary: str) -> None:
    """`apps/web/.env` and `.offprompt-keep/x`, made by the test after Codex's first command (no
    such files when it started): is a later `cat` of each denied?"""
    later = f"{canary}-later"

    def make() -> None:
        (world.project / "apps" / "web").mkdir(parents=True)
        (world.project / "apps" / "web" / ".env").write_text(f"{KEY}={canary}\n")
        (world.project / ".offprompt-keep").mkdir()
        (world.project / ".offprompt-keep" / "x").write_text(f"{KEY}={later}\n")

    calls = [
        ("exec_command", {"cmd": "true"}),
        ("exec_command", {"cmd": "cat apps/web/.env"}),
        ("exec_command", {"cmd": "cat .offprompt-keep/x"}),
    ]
    model = Staged(calls, {1: make})
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "project", glob_profile())

    printed = codex(world, env)

    _, nested, staged = results(model, 3)
    print("NESTED", nested, "STAGED", staged, sep="\n")
    assert canary not in printed
    assert "Permission denied" in nested
    assert "Permission denied" in staged
    assert canary.encode() not in world.model.raw()


def in_place(path: Path, text: str) -> None:
    """Write `text` over `path` keeping its inode (no O_TRUNC; write, ftruncate, fsync)."""
    data = text.encode()
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)


def replaced(path: Path, text: str) -> None:
    tmp = path.with_name(".env.tmp-replace")
    tmp.write_text(text)
    os.replace(tmp, path)


LOOP = "while :; do cat .env >> seen.log 2>&1; sleep 0.2; done"


@pytest.mark.parametrize("how", ["in place", "rename"])
def test_a_running_command_across_a_write(make_world: MakeWorld, canary: str, how: str) -> None:
    """A command left running (unified exec) reads `.env` in a loop into `seen.log`; the test
    writes a new value into `.env` (in place, same inode; or by rename) while it runs: the new
    value stays out of `seen.log` after an in-place write and shows up after a rename."""
    new = f"{canary}-new"
    write = in_place if how == "in place" else replaced

    def change() -> None:
        before = (world.project / ".env").stat().st_ino
        write(world.project / ".env", f"{KEY}={new}\n")
        assert ((world.project / ".env").stat().st_ino == before) is (how == "in place")

    calls = [
        ("exec_command", {"cmd": LOOP, "yield_time_ms": 500}),
        ("exec_command", {"cmd": "sleep 3; echo waited"}),
    ]
    model = Staged(calls, {1: change})
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "project", profile(EXACT))

    codex(world, env)

    results(model, 2)
    seen = (world.project / "seen.log").read_text()
    print("SEEN", seen[-400:])
    assert "Permission denied" in seen
    assert canary not in seen.replace(new, "")
    assert (new in seen) is (how == "rename")


# What `cat ../../.env` (the project's) and `cat .env` (the working folder's) show, Codex started in
# `apps/web` of the masked project: True where the value came through.
SUBFOLDER = {
    "sandbox_mode below": (True, True),
    "default_permissions below": (True, True),
    "nothing below": (True, False),
    "no git": (True, True),
}


@pytest.mark.parametrize("case", SUBFOLDER)
def test_codex_started_in_a_subfolder_of_the_masked_project(
    make_world: MakeWorld, canary: str, case: str
) -> None:
    """The profile (with `**/.env` too) in the project's config, where init puts it; Codex
    started in `apps/web`, which has its own `.env`. `:workspace_roots` entries are relative
    to the folder Codex starts in, so the project's `.env` two folders up is open in every
    case; the working folder's `.env` is denied only when the project's profile is loaded
    (a git repository: Codex loads each `.codex/config.toml` from the git root down) and no
    `.codex/config.toml` below it (a higher layer) sets `sandbox_mode` or another
    `default_permissions`."""
    other = f"{canary}-web"
    calls = [("exec_command", {"cmd": "cat ../../.env"}), CAT]
    model = ToolScript("openai", calls)
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "project", profile(EXACT + '"**/.env" = "deny"\n', glob_depth=6))
    sub = world.project / "apps" / "web"
    sub.mkdir(parents=True)
    (sub / ".env").write_text(f"{KEY}={other}\n")
    if case != "no git":
        subprocess.run(["git", "init", "-q", str(world.project)], check=True)
    below = {
        "sandbox_mode below": LEGACY,
        "default_permissions below": 'default_permissions = ":workspace"\n',
    }.get(case)
    if below:
        (sub / ".codex").mkdir()
        (sub / ".codex" / "config.toml").write_text(below)
    argv = [tool_or_skip("codex"), "exec", "--skip-git-repo-check", "Go."]

    done = run(argv, env, sub, timeout=180)

    assert done.returncode == 0, done.stdout + done.stderr
    top, here = results(model, 2)
    assert ((world.canary in top), (other in here)) == SUBFOLDER[case]


@pytest.mark.parametrize(
    "flags",
    [("-c", 'default_permissions=":workspace"'), ("-c", 'sandbox_mode="read-only"')],
)
def test_a_session_flag_drops_the_profile(
    make_world: MakeWorld, canary: str, flags: tuple[str, ...]
) -> None:
    """`-c default_permissions=…` naming another profile, or `-c sandbox_mode=…` (read-only
    too): the value comes through."""
    model = ToolScript("openai", [CAT])
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "project", profile(EXACT))

    codex(world, env, *flags)

    assert came_through(world, model)


# -- a file sink written while Codex runs, in a project `init --mask` masked ------------------


def init_mask(world: World, env: dict[str, str]) -> None:
    """`offprompt init --agent codex --mask --no-guard` in the project, and /tmp kept read-only
    in the profile (this machine's /tmp is shared; see test_codex_mask.profile)."""
    argv = [PY, "-m", "offprompt", "init", "--agent", "codex", "--mask", "--no-guard"]
    argv += ["--project", str(world.project), "--command", "offprompt serve"]
    done = run(argv, env, world.project, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    config = world.project / ".codex" / "config.toml"
    table = f"[permissions.{PROFILE}.filesystem]\n"
    config.write_text(config.read_text().replace(table, table + '":slash_tmp" = "read"\n', 1))


def write_file_sink(world: World, path: str, value: str) -> WriteOutcome:
    """offprompt's write of `value` to the file sink `path` (what the page's submit does), on
    a thread of its own: the scripted model's loop is the caller's."""
    box: list[WriteOutcome] = []

    async def go() -> None:
        store = RequestStore()
        request = store.create(
            (SecretSpec("CERT"),), SinkSpec("file", path), world.project, "the app", ttl=60
        )
        journal = Journal(world.state / "journal.jsonl")
        box.append(
            await Submitter(store, journal, mask=mask_keeper()).submit(request, {"CERT": value})
        )

    thread = threading.Thread(target=lambda: asyncio.run(go()))
    thread.start()
    thread.join(60)
    (outcome,) = box
    return outcome


def test_a_file_sink_written_while_codex_runs_is_denied_once_it_restarts(
    make_world: MakeWorld, canary: str
) -> None:
    """A masked project; while `codex exec` runs, offprompt writes a file sink `config/key.pem`
    (no glob covers it): the write adds it to the profile and its result says Codex denies it
    only once it restarts, which is true: the running Codex's next command reads it, and a
    Codex started afterwards gets `Permission denied`."""
    outcomes: list[WriteOutcome] = []
    cat = ("exec_command", {"cmd": "cat config/key.pem"})
    model = Staged([("exec_command", {"cmd": "true"}), cat], {})
    world = make_world("openai", model=model)
    project(world)
    model.before[1] = lambda: outcomes.append(write_file_sink(world, "config/key.pem", canary))
    env = configure(world, "project", "")
    init_mask(world, env)

    codex(world, env)

    (outcome,) = outcomes
    said = outcome.mask_problem or ""
    assert said.startswith("Codex denies config/key.pem to its commands only once it restarts")
    assert canary not in said
    _, running = results(model, 2)
    assert canary in running  # what the note warns of
    user = world.codex_home / "config.toml"
    with ToolScript("openai", [cat]) as again:
        user.write_text(user.read_text().replace(world.model.base_url, again.base_url))
        codex(world, env)
        (restarted,) = again.outputs()
        assert "Permission denied" in restarted
        assert canary.encode() not in again.raw()


ALLOW_LIST = (
    'default_permissions = ":workspace"\n'
    '[allowed_permission_profiles]\n":workspace" = true\n":read-only" = true\n'
)


@pytest.mark.parametrize("allowed", [False, True])
def test_an_administrators_profile_allow_list(
    make_world: MakeWorld, canary: str, allowed: bool
) -> None:
    """/etc/codex/requirements.toml's `[allowed_permission_profiles]` (an administrator's list;
    any profile it omits is refused): without `offprompt` in it, Codex runs the requirements'
    `default_permissions` and the value comes through; with it, `.env` stays denied."""
    model = ToolScript("openai", [CAT])
    world = make_world("openai", model=model)
    project(world)
    # With the undo records' folder denied as init denies it, else `agents` says it is not.
    records = f'"{world.state / ".offprompt-keep"}" = "deny"\n'
    slash_tmp = '":slash_tmp" = "read"\n'
    env = configure(world, "project", profile(EXACT).replace(slash_tmp, slash_tmp + records))
    text = ALLOW_LIST + (f"{PROFILE} = true\n" if allowed else "")
    prefix = managed_prefix_files(world, {"requirements.toml": text})

    printed = codex(world, env, prefix=prefix)

    assert came_through(world, model) is not allowed
    refused = "falling back from `offprompt` to required value `:workspace`"
    assert (refused in printed) is not allowed
    # `offprompt agents`, seeing the same /etc, says which.
    why = agents_why(world, env, prefix)
    assert why.startswith("denied, not masked:") is allowed
    assert why.startswith("not denied: Codex ignores") is not allowed


def agents_why(world: World, env: dict[str, str], prefix: list[str]) -> str:
    """What `offprompt agents` says of Codex's protection in the project, run in `prefix`."""
    argv = [*prefix, PY, "-m", "offprompt", "agents", "--project", str(world.project), "--json"]
    done = run(argv, env, world.project, timeout=60)
    (report,) = [r for r in json.loads(done.stdout) if r["name"] == "codex"]
    return str(report["protection_why"])


def test_an_absolute_entry_holds_for_codex_started_in_a_subfolder(
    make_world: MakeWorld, canary: str
) -> None:
    """The profile (in the repository root's config) denying `.env` by its absolute path, not
    under `:workspace_roots`: Codex started in `apps/web` cannot read the project's `.env`."""
    model = ToolScript("openai", [("exec_command", {"cmd": "cat ../../.env"})])
    world = make_world("openai", model=model)
    project(world)
    absolute = f'"{world.project / ".env"}" = "deny"\n'
    tables = profile(EXACT).replace('":slash_tmp" = "read"\n', '":slash_tmp" = "read"\n' + absolute)
    env = configure(world, "project", tables)
    sub = world.project / "apps" / "web"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(world.project)], check=True)
    argv = [tool_or_skip("codex"), "exec", "--skip-git-repo-check", "Go."]

    done = run(argv, env, sub, timeout=180)

    assert done.returncode == 0, done.stdout + done.stderr
    (result,) = results(model, 1)
    assert "Permission denied" in result
    assert canary.encode() not in world.model.raw()
