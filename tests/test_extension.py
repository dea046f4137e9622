"""Adding a destination or an agent host is one module and one registration (issue 31): a
throwaway kind, registered through `destinations.KINDS` alone, reaches the schema, the `also`
parse, the CLI's `--also`, the page and the send; a throwaway host declares, guards and tells
the doctor its waits through the `Agent` interface alone; and no module but a kind's or a
host's own names it."""

from __future__ import annotations

import ast
import asyncio
import importlib
import json
import os
import stat
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner

from offprompt import terminal
from offprompt.cli import cli
from offprompt.collect.request import validate
from offprompt.errors import FieldPath, NotLinked
from offprompt.page import render
from offprompt.sinks import destinations
from offprompt.sinks.destinations.interface import RunCall, Sent
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestStore
from offprompt.tools import listing

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "offprompt"

DEMO = textwrap.dedent(
    '''
    """A destination written by a test: `demo-cli put NAME --site SITE`, the value on stdin."""

    from __future__ import annotations

    from collections.abc import Mapping, Sequence
    from dataclasses import dataclass
    from pathlib import Path
    from typing import Any, ClassVar

    from offprompt.errors import FieldPath, NotLinked
    from offprompt.sinks.destinations import linked
    from offprompt.sinks.destinations.interface import Call, Destination, Link


    @dataclass(frozen=True)
    class DemoSpec:
        kind: ClassVar[str] = "demo"
        region: str | None = None


    class DemoDestination(Destination[DemoSpec]):
        kind = "demo"
        label = "Demo secret"
        linked_by = "demo.json's site"
        cli_form = "demo[:REGION]"
        programs = ("demo-cli",)
        command = "demo-cli put"

        def properties(self) -> dict[str, Any]:
            return {"region": {"type": "string", "description": "demo: a region."}}

        def from_cli(self, option: str | None) -> dict[str, Any] | None:
            return {} if option is None else {"region": option}

        def parse(self, raw: Mapping[str, Any], at: FieldPath) -> DemoSpec:
            return DemoSpec(region=raw.get("region"))

        def link(self, project: Path, spec: DemoSpec, env: Mapping[str, str]) -> Link:
            config = linked.read_config(project, "demo.json")
            if config is None:
                raise NotLinked("the project is not linked to Demo: there is no demo.json.")
            site = str(config["site"])
            return Link(kind=self.kind, ident=site, target=site)

        def calls(self, link: Link, spec: DemoSpec, values: Mapping[str, str]) -> list[Call]:
            return [
                Call(("put", name, "--site", link.ident), value.encode(), name)
                for name, value in values.items()
            ]

        def describe(self, link: Link, spec: DemoSpec, names: Sequence[str]) -> str:
            return f"{self.command} {' '.join(names)} --site {link.ident}"


    DESTINATION = DemoDestination()
    '''
)

PROGRAM = """#!{python}
import json, sys
with open({log!r}, "a") as f:
    f.write(json.dumps([sys.argv[1:], sys.stdin.read()]) + "\\n")
print("stored")
"""


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The throwaway module, in a package of its own, registered in `KINDS` and nowhere else."""
    package = tmp_path / "pkg" / "extdemo"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "demo.py").write_text(DEMO)
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    module = importlib.import_module("extdemo.demo")
    monkeypatch.setitem(destinations.KINDS, "demo", module.DESTINATION)
    yield module
    for name in ("extdemo.demo", "extdemo"):
        sys.modules.pop(name, None)


@pytest.fixture
def site(project: Path) -> Path:
    (project / "demo.json").write_text(json.dumps({"site": "acme-site"}))
    return project


def _program(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A fake `demo-cli` alone on PATH, logging each run's argv and stdin."""
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "demo.log"
    path = folder / "demo-cli"
    path.write_text(PROGRAM.format(python=sys.executable, log=str(log)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": str(folder)}, log


def test_a_new_destination_is_in_the_tool_schema(demo: ModuleType) -> None:
    """The listing's generator gives collect_secret's `also` the new kind and its field, and
    names what links it."""
    collect = next(t for t in listing.generate() if t["name"] == "collect_secret")
    also = collect["inputSchema"]["properties"]["also"]
    assert also["items"]["properties"]["kind"]["enum"][-1] == "demo"
    assert also["items"]["properties"]["region"] == {
        "type": "string",
        "description": "demo: a region.",
    }
    assert "demo.json's site" in also["description"]


def test_a_new_destination_is_parsed_from_also(demo: ModuleType) -> None:
    """An `also` entry of the new kind becomes its module's spec; a field of another kind is
    refused in the words every kind gets."""
    args = {"secrets": [{"name": "API_KEY"}], "reason": "r"}
    request = validate({**args, "also": [{"kind": "demo", "region": "eu"}]})
    assert (demo.DemoSpec(region="eu"),) == request.also
    with pytest.raises(Exception, match=r"also\[0\] \(demo\) takes no environment"):
        validate({**args, "also": [{"kind": "demo", "environment": "x"}]})


def test_a_new_destination_is_parsed_from_the_cli(demo: ModuleType, site: Path) -> None:
    """`--also demo:eu` is the entry an agent would pass, and `collect --help` names the form."""
    asked = terminal.check_usage(terminal.CommandLine(names=("API_KEY",), also=("demo:eu",)), site)
    assert (demo.DemoSpec(region="eu"),) == asked.also
    shown = CliRunner().invoke(cli, ["collect", "--help"]).output
    before = list(destinations.KINDS.values())[-2].cli_form  # the last kind registered before it
    assert f"{before}, demo[:REGION] (repeatable, at most 4)." in " ".join(shown.split())


def test_a_new_destination_is_labelled_on_the_page(demo: ModuleType, site: Path) -> None:
    """The page lists it under its own label, with its target and its command line."""
    planned = destinations.plan(site, [demo.DemoSpec()], ["API_KEY"], env={"PATH": ""})

    async def page() -> str:
        store = RequestStore()
        request = store.create([SecretSpec("API_KEY")], SinkSpec(), site, "r", ttl=60, also=planned)
        return render.render_form(request, None, csp_nonce="n", expires_in=60)

    body = asyncio.run(page())
    assert 'id="also-0" checked> Demo secret in <strong dir="ltr">acme-site</strong>' in body
    assert 'Runs <code dir="ltr">demo-cli put API_KEY --site acme-site</code>' in body
    assert "demo-cli is not installed here" in body


def test_a_new_destination_runs_its_program(demo: ModuleType, site: Path, tmp_path: Path) -> None:
    """The send runs the module's program with its arguments, each value on stdin alone."""
    env, log = _program(tmp_path)
    planned = destinations.plan(site, [demo.DemoSpec()], ["A_KEY", "B_KEY"], env=env)
    sent = destinations.send(site, planned, {"A_KEY": "a1", "B_KEY": "b2"}, {0}, env=env)
    assert [("demo", "acme-site", "sent", "sent A_KEY, B_KEY")] == [
        (r.kind, r.target, r.status, r.detail) for r in sent
    ]
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert [
        [["put", "A_KEY", "--site", "acme-site"], "a1"],
        [["put", "B_KEY", "--site", "acme-site"], "b2"],
    ] == runs


class _NoteSpec:
    """The spec of a kind that runs no program (as the keyring of DESIGN §13.2 does)."""

    kind = "note"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _NoteSpec)

    def __hash__(self) -> int:
        return hash(self.kind)


class _NoteDestination(destinations.Destination[Any]):
    """Linked by a variable of the request's environment; keeps what it is sent in memory."""

    kind = "note"
    label = "Note"
    linked_by = "NOTE_BOOK"
    cli_form = "note"
    programs = ()
    command = "note it"

    def __init__(self) -> None:
        self.kept: dict[str, str] = {}

    def parse(self, raw: Mapping[str, Any], at: FieldPath) -> Any:
        return _NoteSpec()

    def link(self, project: Path, spec: Any, env: Mapping[str, str]) -> destinations.Link:
        book = env.get("NOTE_BOOK")
        if not book:
            raise NotLinked("NOTE_BOOK is not set")
        return destinations.Link(kind=self.kind, ident=book, target=f"book {book}")

    def describe(self, link: destinations.Link, spec: Any, names: Sequence[str]) -> str:
        return f"note it in {link.ident}"

    def send(
        self, link: destinations.Link, spec: Any, values: Mapping[str, str], run: RunCall
    ) -> Sent:
        self.kept.update(values)
        return Sent(tuple(values), done=f" to {link.ident}")


def test_a_kind_linked_by_the_environment_that_runs_no_program_sends_itself(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kind whose link comes from the environment handed in (never os.environ) and whose
    `send` does the work with no program: planned without a "not installed", sent, and
    refused as not linked when the variable is absent from that mapping."""
    note = _NoteDestination()
    monkeypatch.setitem(destinations.KINDS, "note", note)
    monkeypatch.setenv("NOTE_BOOK", "from-the-process")  # must not count
    with pytest.raises(NotLinked, match="NOTE_BOOK is not set"):
        destinations.plan(project, [_NoteSpec()], ["A_KEY"], env={"PATH": ""})
    env = {"PATH": "", "NOTE_BOOK": "blue"}
    planned = destinations.plan(project, [_NoteSpec()], ["A_KEY"], env=env)
    assert planned[0].missing is None
    assert planned[0].link.target == "book blue"
    sent = destinations.send(project, planned, {"A_KEY": "a1"}, {0}, env=env)
    assert [(r.status, r.detail) for r in sent] == [("sent", "sent A_KEY to blue")]
    assert note.kept == {"A_KEY": "a1"}


def test_a_kind_that_runs_no_program_is_shown_in_its_own_words(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page shows a kind that runs no program by its label, the names it keeps, and its own
    note on where (the default one here): no command line, no "not installed"."""
    monkeypatch.setitem(destinations.KINDS, "note", _NoteDestination())
    env = {"PATH": "", "NOTE_BOOK": "blue"}
    planned = destinations.plan(project, [_NoteSpec()], ["A_KEY"], env=env)

    async def page() -> str:
        store = RequestStore()
        request = store.create(
            [SecretSpec("A_KEY")], SinkSpec(), project, "r", ttl=60, also=planned
        )
        return render.render_form(request, None, csp_nonce="n", expires_in=60)

    body = asyncio.run(page())
    assert 'id="also-0" checked> Note as <strong dir="ltr">note it in blue</strong>' in body
    assert "offprompt does this itself, in <strong>book blue</strong>: no program runs." in body
    assert "Runs <code" not in body
    assert "not installed" not in body


def _string_constants(path: Path) -> set[str]:
    """Every string constant of a module, docstrings and f-string parts included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


# The registry names providers by id, some of which are also destinations' kinds (a GitHub
# token, a Fly.io token): a provider, never the destination.
NOT_A_DESTINATION = ("offprompt/registry/",)
# The sealed plaintext's `keyring` field (DESIGN §13.2) lists names to fill from the keyring:
# a field of the seal's format, not the destination.
NOT_A_KIND = frozenset({("offprompt.crypto.seal", "keyring")})


def test_no_module_but_its_own_names_a_destination_kind() -> None:
    """A kind's name is a string only in its own module: everything else reads `KINDS`."""
    own = {kind: type(dest).__module__ for kind, dest in destinations.KINDS.items()}
    found: list[tuple[str, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(NOT_A_DESTINATION):
            continue
        module = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        found += [
            (module, kind)
            for kind in sorted(_string_constants(path) & set(own))
            if own[kind] != module and (module, kind) not in NOT_A_KIND
        ]
    assert [] == found


# Agent hosts --------------------------------------------------------------------------------

HOST = textwrap.dedent(
    '''
    """An agent host written by a test: `.demo/mcp.json`, a PreToolUse hook beside it, and an
    approval it waits for."""

    from __future__ import annotations

    from collections.abc import Mapping
    from pathlib import Path

    from offprompt.agents.interface import (
        GuardFile, Hook, HostWaits, Machine, Presence, Scope, ServerCommand, Wait, found_by,
        guard_file_for,
    )
    from offprompt.agents.json_agent import JsonAgent


    class _Waits(HostWaits):
        def about(self, kind: str, scope: Scope, hook: Hook | None = None):
            return (Wait("approval", f"Demo asks before its {kind} runs"),), None


    class DemoHost(JsonAgent):
        name = "demo-host"
        title = "Demo Host"
        section = "mcpServers"
        project_file = ".demo/mcp.json"
        project_folder = ".demo"

        def waits(self, machine: Machine, folder: Path) -> HostWaits:
            return _Waits()

        def guard_file(self, scope: Scope, machine: Machine, project: Path | None):
            return guard_file_for(
                scope, machine, project, user=self.user_file(machine),
                in_project=".demo/hooks.json", matcher="*", events=("PreToolUse",),
            )

        def user_file(self, machine: Machine) -> Path:
            return machine.home / ".demo" / "mcp.json"

        def presence(self, machine: Machine) -> Presence:
            return found_by(machine, ("demo-host",), (machine.home / ".demo",))

        def entry(self, server: ServerCommand, existing: Mapping[str, object] | None):
            return {"command": server.command, "args": list(server.args)}


    AGENT = DemoHost()
    '''
)


def test_a_new_agent_host_is_one_module(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A throwaway host module declares the server, takes the guard's hook and tells the
    doctor what it waits for, through the `Agent` interface alone."""
    from offprompt.agents import Machine, ServerCommand, doctor, guard_install

    package = tmp_path / "pkg" / "exthost"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "host.py").write_text(HOST)
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    agent = importlib.import_module("exthost.host").AGENT
    try:
        machine = Machine(home=tmp_path / "home", environ=dict(os.environ), platform="linux")
        server = ServerCommand(sys.executable, ("-m", "offprompt", "serve"))
        assert "added" == agent.install("project", machine, project, server).outcome
        hooks = agent.guard_file("project", machine, project)
        assert "added" == guard_install.install(hooks, server)
        (report,) = doctor.examine([agent], machine, project, timeout=10)
        assert [("server", "Demo asks before its server runs")] == [
            (f.kind, w.detail) for f in report.servers for w in f.waits
        ]
        assert [("guard", "Demo asks before its guard runs")] == [
            (f.kind, w.detail) for f in report.guards for w in f.waits
        ]
    finally:
        for name in ("exthost.host", "exthost"):
            sys.modules.pop(name, None)


# Host facts --------------------------------------------------------------------------------

# The throwaway host's facts, as a host module of offprompt/hosts/ holds them.
FACTS = textwrap.dedent(
    """
    HOST = {
        "name": "demo-host",
        "title": "Demo Host",
        "clients": {"demo-mcp-client": "Demo Host"},
        "declines_http": frozenset({"demo-mcp-client"}),
        "tools": {"demo_shell": "shell", "demo_edit": "write", "demo_notes": None},
        "before_tool": ("DemoBeforeTool",),
        "guard_files": ("/.demo/hooks.json",),
        "dialect": {
            "claims": lambda event: "demo_action" in event,
            "normalise": lambda event: {
                "hook_event_name": "DemoBeforeTool",
                "tool_name": "demo_shell",
                "tool_input": {"command": event["demo_action"]},
                "cwd": event.get("demo_cwd"),
            },
            "deny": lambda why: '{"demo": "deny"}',
            "allow": '{"demo": "allow"}',
        },
    }
    """
)


@pytest.fixture
def demo_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Mapping[str, Any]]:
    """The throwaway host's facts module, registered by one line: `hosts.HOSTS` plus it."""
    from offprompt import hosts

    package = tmp_path / "pkg" / "exthostfacts"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "facts.py").write_text(FACTS)
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    facts = importlib.import_module("exthostfacts.facts").HOST
    monkeypatch.setattr(hosts, "HOSTS", (*hosts.HOSTS, facts))
    yield facts
    for name in ("exthostfacts.facts", "exthostfacts"):
        sys.modules.pop(name, None)


def test_a_new_host_s_client_name_is_shown_on_the_page(demo_host: Mapping[str, Any]) -> None:
    """The page shows the host's product name for the client name its module gives."""
    from offprompt.page.clients import display_name

    assert "Demo Host" == display_name("demo-mcp-client")


def test_a_new_host_s_refusal_of_a_plain_link_reaches_the_collect_core(
    demo_host: Mapping[str, Any],
) -> None:
    """A client its module says declines a non-https URL elicitation unseen is not sent one
    (the ladder goes on to the browser), and is sent an https one."""
    from types import SimpleNamespace

    from offprompt.collect.core import Collector

    client: Any = SimpleNamespace(name="demo-mcp-client", url_elicitation=True)
    elicitable: Any = Collector._elicitable
    assert not elicitable(None, client, "http://127.0.0.1:1/r/x")
    assert elicitable(None, client, "https://x.example/r/x")
    other: Any = SimpleNamespace(name="other-client", url_elicitation=True)
    assert elicitable(None, other, "http://127.0.0.1:1/r/x")


def _guard(project: Path, event: dict[str, object]) -> str | None:
    from offprompt.guard.decide import decide
    from offprompt.guard.protected import Protected

    return decide({"cwd": str(project), **event}, Protected(), str(project / "home"))


def test_a_new_host_s_tools_and_events_reach_the_guard(
    demo_host: Mapping[str, Any], project: Path
) -> None:
    """Its own event before a tool is read; its shell tool blocks `cat .env`, its write tool a
    write to the file holding its guard, and its tool said to read no file is let through."""
    (project / ".env").write_text("A=1\n")
    before = {"hook_event_name": "DemoBeforeTool"}
    shell = {**before, "tool_name": "demo_shell", "tool_input": {"command": "cat .env"}}
    assert ".env" == _guard(project, shell)
    edit = {**before, "tool_name": "demo_edit", "tool_input": {"path": ".demo/hooks.json"}}
    assert ".demo/hooks.json" == _guard(project, edit)
    notes = {**before, "tool_name": "demo_notes", "tool_input": {"text": "see .env"}}
    assert None is _guard(project, notes)


def test_a_new_host_s_guard_files_are_kept_from_every_host_s_writes(
    demo_host: Mapping[str, Any], project: Path
) -> None:
    """The file its module says holds its guard cannot be written by another host's write tool
    either (a hook taken out is the guard taken away)."""
    write = {"tool_name": "Write", "tool_input": {"file_path": "sub/.demo/hooks.json"}}
    assert "sub/.demo/hooks.json" == _guard(project, write)


def test_a_new_host_s_dialect_is_read_and_answered_by_the_guard(
    demo_host: Mapping[str, Any],
    project: Path,
    capsys: pytest.CaptureFixture[str],
    canary: str,
) -> None:
    """The hook reads an event its dialect claims, blocks `cat .env` in it and answers in the
    host's words on stdout; a call it lets through gets the host's allow."""
    from offprompt.guard import hook

    (project / ".env").write_text(f"A={canary}\n")
    env = {"HOME": str(project / "home"), "OFFPROMPT_STATE_DIR": str(project / "state")}
    event = {"demo_action": "cat .env", "demo_cwd": str(project)}
    assert 2 == hook.main(json.dumps(event).encode(), env, deadline=None)
    blocked = capsys.readouterr()
    assert '{"demo": "deny"}\n' == blocked.out
    event["demo_action"] = "ls"
    assert 0 == hook.main(json.dumps(event).encode(), env, deadline=None)
    let = capsys.readouterr()
    assert '{"demo": "allow"}\n' == let.out
    assert canary not in blocked.out + blocked.err + let.out + let.err


def test_every_agent_is_a_host() -> None:
    """Each agent `init` sets up has its facts in offprompt/hosts/, and takes its name and
    title from there (one source)."""
    from offprompt import hosts
    from offprompt.agents import AGENTS

    facts = {h["name"]: h for h in hosts.HOSTS}
    assert [(a.name, a.title) for a in AGENTS] == [(a.name, facts[a.name]["title"]) for a in AGENTS]


def test_every_host_s_tools_are_read_by_a_reader_the_guard_has() -> None:
    """Each tool a host names has a kind of reader the guard has (or None), and no two hosts
    read one tool name two ways."""
    from offprompt import hosts
    from offprompt.guard.decide import READERS

    kinds: dict[str, str | None] = {}
    for host in hosts.HOSTS:
        for tool, kind in host.get("tools", {}).items():
            assert kind is None or kind in READERS, (host["name"], tool)
            assert kinds.setdefault(tool, kind) == kind, (host["name"], tool)


# The answers of the guard's shell wrapper (Claude Code's, Cursor's, the Copilot runtime's), the
# shell twin of the hosts' dialects; and the registry's providers, one of which is Google's
# Gemini API, not the host. A host's facts are its own (offprompt/hosts/), its setup its agent's
# and its mask's (offprompt/agents/).
NOT_A_HOST = (
    "offprompt/agents/hook_wrapper.py",
    "offprompt/registry/",
)


def test_no_module_but_its_own_names_an_agent_host() -> None:
    """An agent's name is a string only in its own facts module (and its agent's and its
    mask's): everything else reads `hosts.HOSTS` or `agents.AGENTS`."""
    from offprompt.agents import AGENTS

    own = {a.name: type(a).__module__ for a in AGENTS}
    found: list[tuple[str, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(NOT_A_HOST):
            continue
        module = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        found += [
            (module, name)
            for name in sorted(_string_constants(path) & set(own))
            if module
            not in (
                own[name],
                own[name].replace(".agents.", ".agents.mask."),
                own[name].replace(".agents.", ".hosts."),
            )
        ]
    assert [] == found
