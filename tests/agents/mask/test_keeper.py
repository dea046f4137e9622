"""The mask keeper a write is handed (agents/mask/keeper.py, DESIGN §15): it keeps each host's mask
on the machine the write's environment shows (HOME, CODEX_HOME, the state dir), never the
process's own; and it is the agents' alone, so no module outside them names a host's file."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import sys
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from offprompt.agents.codex import Codex
from offprompt.agents.machine import Machine
from offprompt.agents.mask import (
    MASK_RECORD,
    HostMask,
    MaskKind,
    MaskPlace,
    MaskState,
    Said,
    Written,
)
from offprompt.agents.mask.claude_code import ClaudeCodeMask
from offprompt.agents.mask.keeper import Keeper, machine_of
from offprompt.collect.parts import Parts
from offprompt.collect.settings import Settings
from offprompt.disk import undo
from offprompt.spec import SecretSpec, SinkSpec

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "offprompt"


def test_the_keeper_keeps_the_mask_where_the_writes_environment_says(
    tmp_path: Path, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch, canary: str
) -> None:
    """A write handed an environment whose HOME, CODEX_HOME and state dir are not the process's:
    Codex's denial is kept with that environment's Codex settings (its network stays as that
    person has it, not as the process's CODEX_HOME says), it denies that state dir's undo
    records, and Claude Code's entry goes to that HOME's settings, through that state dir's
    record; nothing lands in the process's HOME."""
    # The process's own Codex lets sandboxed commands reach the network; the handed one not.
    process_codex = home / "process-codex"
    process_codex.mkdir()
    (process_codex / "config.toml").write_text("[sandbox_workspace_write]\nnetwork_access = true\n")
    monkeypatch.setenv("CODEX_HOME", str(process_codex))
    handed_home, handed_state = tmp_path / "handed-home", tmp_path / "handed-state"
    (handed_home / ".codex").mkdir(parents=True)
    handed_state.mkdir()
    env = {
        "HOME": str(handed_home),
        "CODEX_HOME": str(handed_home / ".codex"),
        "OFFPROMPT_STATE_DIR": str(handed_state),
        "OFFPROMPT_SANDBOX": "0",
        "OFFPROMPT_CHECK": "off",
        "PATH": os.environ.get("PATH", ""),
    }
    assert env["HOME"] != os.environ["HOME"]
    project = Path(os.path.realpath(project))
    handed = Machine(home=handed_home, environ=env, platform=sys.platform)
    place = MaskPlace(project, handed, handed_state / MASK_RECORD)
    codex = Codex.mask
    assert codex is not None
    for mask in (codex, ClaudeCodeMask()):
        said = mask.install(place, dict)
        assert said.ok, said.lines
    config = project / ".codex" / "config.toml"
    assert "network" not in tomllib.loads(config.read_text())["permissions"]["offprompt"]

    parts = Parts.build(Settings.read(env))
    request = parts.store.create(
        (SecretSpec("APP_TOKEN"),), SinkSpec(path="app.env"), project, "the app", ttl=60
    )
    outcome = asyncio.run(parts.submitter.submit(request, {"APP_TOKEN": canary}))

    assert outcome.mask_problem is None or canary not in outcome.mask_problem
    profile = tomllib.loads(config.read_text())["permissions"]["offprompt"]
    assert profile["filesystem"][":workspace_roots"]["app.env"] == "deny"
    assert "network" not in profile, "the process's CODEX_HOME was read, not the write's"
    records = os.path.join(os.path.realpath(handed_state), undo.RECORDS)
    assert profile["filesystem"][records] == "deny"
    settings = json.loads((handed_home / ".claude" / "settings.json").read_text())
    paths = [e["path"] for e in settings["sandbox"]["credentials"]["files"]]
    assert str(project / "app.env") in paths
    assert not (home / ".claude").exists()
    assert not (home / "state" / MASK_RECORD).exists()
    for path in (config, handed_home / ".claude" / "settings.json", handed_state / MASK_RECORD):
        assert canary not in path.read_text()


def test_the_machine_of_an_environment_is_its_home() -> None:
    """HOME of the mapping handed in, and its variables; a relative or missing one falls back
    to this user's home, never a folder relative to the working one."""
    here = machine_of({"HOME": "/somewhere/else", "CODEX_HOME": "/c"}, "linux")
    assert (Path("/somewhere/else"), "/c") == (here.home, here.environ["CODEX_HOME"])
    assert Path.home() == machine_of({"HOME": "relative"}, "linux").home
    assert Path.home() == machine_of({}, "linux").home


class _SaysMasked(HostMask):
    """A new host's mask that does not say where to look first: only its check."""

    agent = "zed"
    kind: MaskKind = "denied"

    def install(
        self, place: MaskPlace, written: Callable[[], Written], no_guard: bool = False
    ) -> Said:
        return Said(True, ())

    def remove(self, place: MaskPlace) -> Said:
        return Said(True, ())

    def keep(self, place: MaskPlace, file: Path, names: Iterable[str], whole: bool) -> str:
        return "kept"

    def check(self, place: MaskPlace) -> MaskState | None:
        return MaskState(self.kind, True, "denied by the test")


def test_a_host_that_names_no_file_to_look_at_is_asked_all_the_same(
    tmp_path: Path, project: Path
) -> None:
    """A host's mask without `might_cover` may mask any project (fail closed): its file is
    written in place and its mask kept."""
    keeper = Keeper([_SaysMasked()])
    record = tmp_path / "state" / MASK_RECORD
    assert keeper.covers(record, project, {})
    assert "kept" == keeper(record, project, project / ".env", ("K",), False, {})


# A host's files, as the masks name them: its project config, its settings, the variables that
# move its home. Only the agents (agents/, its masks in agents/mask/) may name them.
HOST_FILE = re.compile(
    r"(^|/)\.(codex|claude)(/|$)|(^|/)config\.toml$|(^|/)settings(\.local)?\.json$"
    r"|^(CODEX_HOME|CLAUDE_CONFIG_DIR)$"
)
# Not the keeper's: the guard reads the hosts' settings itself, as the hook may import no agent
# (tests/test_extension.py names it among the modules that speak the hosts' dialects), and the
# hosts' room of facts that it reads them from.
NOT_THE_KEEPER = ("offprompt/agents/", "offprompt/guard/", "offprompt/hosts/")


def _paths_named(source: str) -> set[str]:
    """The string constants of a module that are a path or a name of one (no blank in them):
    prose that mentions a file (a command's help) is not a place the code looks."""
    tree = ast.parse(source)
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and not re.search(r"\s", n.value)
    }


def test_no_module_but_the_agents_names_a_hosts_file() -> None:
    """Whether a project may be masked is each host's mask's to say: no module outside the agents
    (the write, the collect core that builds the keeper) names `.codex/config.toml`, Claude
    Code's settings or the variables that move them."""
    found = [
        (path.relative_to(ROOT).as_posix(), name)
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.relative_to(ROOT).as_posix().startswith(NOT_THE_KEEPER)
        for name in sorted(_paths_named(path.read_text(encoding="utf-8")))
        if HOST_FILE.search(name)
    ]
    assert [] == found


@pytest.mark.parametrize(
    ("source", "named"),
    [
        ('codex = project / ".codex" / "config.toml"\n', True),
        ('p = os.path.join(home, ".claude", "settings.json")\n', True),
        ('p = "/.codex/config.toml"\n', True),
        ('home = env.get("CODEX_HOME")\n', True),
        ('"""Writes .claude/settings.local.json for the person."""\n', False),
        ('p = project / ".env"\n', False),
    ],
)
def test_a_hosts_file_named_in_code_is_caught(source: str, named: bool) -> None:
    """The check above fires on each way code names a host's file, and lets prose be."""
    assert named == any(HOST_FILE.search(s) for s in _paths_named(source))
