"""The mask (DESIGN §15) in real Claude Code 2.1.337 on Linux (bubblewrap, socat): with the
settings `offprompt init --mask` writes, a scripted model set on a `.env`'s value tries some
thirty routes through Claude Code's Bash tool and reads only the sandbox's stand-in, and a
program the agent runs sends the real key to its provider, which the sandbox's proxy puts back
on the way out. The offprompt guard is not installed here: the operating system's layer alone
(Claude Code's own Read tool, which the sandbox does not cover, is the guard's part, §15)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import tool_or_skip

from offprompt.collect.parts import mask_keeper
from offprompt.disk.walk import KEEP_NAME
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

from .conftest import MakeWorld
from .harness import PY, World, run
from .mask_routes import KEY, ROUTES, STAND_IN, Route, readings
from .model import ToolScript
from .upstream import Upstream

pytestmark = pytest.mark.real_hosts

# What Claude Code's sandbox binds (/dev/null) over paths a command must not create in the
# project, seen inside the sandbox (`ls -la` there lists them); none may appear on the machine.
STUBS = {
    ".bash_profile",
    ".bashrc",
    ".gitconfig",
    ".gitmodules",
    ".idea",
    ".mcp.json",
    ".profile",
    ".ripgreprc",
    ".vscode",
    ".zprofile",
    ".zshrc",
}


def mask(world: World, before: str, guard: str | None = None) -> str:
    """The project's `.env` holding the person's own lines (`before`), then the key written by
    offprompt itself (the Submitter, into this run's journal), then `offprompt init --agent
    claude-code --mask`: what the test runs against is exactly what init and the write made.
    The guard is left out (`--no-guard`, the operating system's layer alone) unless `guard`
    names the offprompt its hook runs. Returns `.env`."""
    env = world.project / ".env"
    env.write_text(before)
    asyncio.run(_write(world, {KEY: f"sk-proj-{world.canary}"}))
    argv = [PY, "-m", "offprompt", "init", "--agent", "claude-code", "--mask"]
    argv += ["--no-guard"] if guard is None else []
    argv += ["--project", str(world.project), "--command", f"{guard or 'offprompt'} serve"]
    done = run(argv, world.env, world.project, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "claude-code: masked: 1 file offprompt wrote here" in done.stdout
    return env.read_text()


async def _write(world: World, values: dict[str, str], path: str = ".env") -> None:
    store = RequestStore()
    secrets = tuple(SecretSpec(n) for n in values)
    request = store.create(secrets, SinkSpec(path=path), world.project, "the app", ttl=60)
    await Submitter(store, Journal(world.state / "journal.jsonl"), mask=mask_keeper()).submit(
        request, values
    )


def retarget(world: World, hosts: list[str], allowed: list[str]) -> None:
    """The injection tests' provider is this machine under its own name, not the registry's
    host: the entry init wrote gets that name as its `injectHosts`, and the sandbox's network
    the name and its address (the proxy refuses a name resolving to one of this machine's
    addresses unless the address is allowed too), as a person would edit them."""
    path = world.home / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    (entry,) = [e for e in data["sandbox"]["credentials"]["files"] if e["mode"] == "mask"]
    entry["injectHosts"] = hosts
    data["sandbox"]["network"]["allowedDomains"] = allowed
    path.write_text(json.dumps(data, indent=2) + "\n")


def sandbox_or_skip() -> None:
    missing = [n for n in ("bwrap", "socat") if shutil.which(n) is None]
    if missing and os.environ.get("CI") == "true":
        pytest.fail(f"{missing} missing in CI: Claude Code's sandbox needs them")
    if missing:
        pytest.skip(f"Claude Code's sandbox needs {missing}")


class Watched(ToolScript):
    """A ToolScript that, at each turn (Claude Code running, its sandbox set up), lists what
    this machine, outside the sandbox, sees in the project and at the top of /tmp."""

    def __init__(self) -> None:
        super().__init__("anthropic", [])
        self.project: Path | None = None
        self.seen: set[str] = set()
        self.tmp: set[str] = set()
        self.written = ""  # the project's .env as the test wrote it

    def _turn(self, body: dict[str, Any]) -> tuple[str, tuple[str, str] | None]:
        if self.project is not None:
            self.seen |= {str(p.relative_to(self.project)) for p in self.project.rglob("*")}
            self.tmp |= set(os.listdir("/tmp"))
        return super()._turn(body)


def bash(route: Route) -> tuple[str, dict[str, Any]]:
    arguments: dict[str, Any] = {"command": route.command, "description": "Check the settings"}
    if route.escape:
        arguments["dangerouslyDisableSandbox"] = True
    return "Bash", arguments


def claude_run(world: World, *flags: str, env: dict[str, str] | None = None) -> str:
    """`claude -p` in the project; all it printed. Its TMPDIR is a short folder of its own: the
    sandbox's socat bridges are Unix sockets there, whose paths may not pass 108 bytes, and
    under pytest-xdist the run's own tmp is longer ("Failed to create bridge sockets after 5
    attempts", measured; the sandbox then failed to start)."""
    host_env, config = world.claude()
    argv = [tool_or_skip("claude"), "-p", "Check the project's keys.", "--mcp-config"]
    argv += [str(config), "--strict-mcp-config", *flags]
    with tempfile.TemporaryDirectory(prefix="om-", dir="/tmp") as short:
        extra = {"TMPDIR": short, **(env or {})}
        done = run(argv, {**host_env, **extra}, world.project, timeout=80)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def masked_world(make_world: MakeWorld, text: str = "") -> tuple[World, Watched]:
    """A run whose project's `.env` offprompt wrote the canary key into (its first line, over
    a placeholder the person had; `text` and `DEBUG=1` after it), masked by init."""
    sandbox_or_skip()
    model = Watched()
    world = make_world("anthropic", model=model)
    model.project = world.project
    model.written = mask(world, f"{KEY}=\n{text}DEBUG=1\n")
    assert model.written.startswith(f"{KEY}=sk-proj-{world.canary}\n")
    return world, model


def assert_kept_out(world: World, model: Watched, out: str) -> None:
    """The canary is in no request the model received, read plainly or decoded, nor in what
    Claude Code printed; `.env` is as written."""
    canary = world.canary
    assert canary.encode() not in model.raw()
    assert canary[::-1].encode() not in model.raw()
    assert [] == [r for r in model.outputs() if any(canary in x for x in readings(r))]
    assert canary not in out
    assert (world.project / ".env").read_text() == model.written


def outcome(route: Route, result: str) -> str:
    if STAND_IN in route.decode(result):
        return "stand-in shown"
    return " ".join(result.split())[:100]


def test_a_model_set_on_the_value_reads_only_the_stand_in(
    make_world: MakeWorld, canary: str
) -> None:
    """Every route (cat, grep, sourcing, quoting tricks, encodings, interpreters, a script,
    copies, links, raw reads, unmounting, a search of HOME/TMPDIR/environ, a call asking to
    leave the sandbox), each Bash call allowed as a person saying yes to each would: each ran
    and showed the stand-in with the file's other lines, or was refused by the OS; the value
    is in no request to the model; nothing the sandbox mounts appears in the project or /tmp."""
    world, model = masked_world(make_world)
    model.calls = [bash(r) for r in ROUTES]
    tmp_before = set(os.listdir("/tmp"))
    try:
        out = claude_run(world, "--allowedTools", "Bash")
    finally:
        Path("/tmp/offprompt-mask-copy").unlink(missing_ok=True)

    results = model.outputs()
    table = [[r.command, outcome(r, x)] for r, x in zip(ROUTES, results, strict=False)]
    print("ROUTES", json.dumps(table, indent=1))
    assert len(ROUTES) == len(results)
    wrong = [
        (r.command, x)
        for r, x in zip(ROUTES, results, strict=True)
        if not all(e in r.decode(x) for e in r.expect) or (r.alone and x.strip() != r.expect[0])
    ]
    assert wrong == []
    assert_kept_out(world, model, out)
    print("PROJECT", sorted(model.seen))
    assert model.seen, "the project was never listed during the run"
    assert [] == sorted(n for n in model.seen if Path(n).name in STUBS)
    assert [] == sorted((model.tmp - tmp_before) & STUBS)


def test_a_call_asking_to_leave_the_sandbox_stays_in_it(make_world: MakeWorld) -> None:
    """Claude Code run with every permission skipped (`--dangerously-skip-permissions`, the
    person who lets every call through; IS_SANDBOX=1 lets it run so as root here), the model
    asking for `cat .env` and `source .env && echo` outside the sandbox
    (`dangerouslyDisableSandbox`): with allowUnsandboxedCommands false the calls run in the
    sandbox and show the stand-in."""
    world, model = masked_world(make_world)
    routes = [Route("cat .env", escape=True), Route(f"source .env && echo ${KEY}", escape=True)]
    model.calls = [bash(r) for r in routes]
    out = claude_run(world, "--dangerously-skip-permissions", env={"IS_SANDBOX": "1"})
    results = model.outputs()
    assert len(routes) == len(results)
    assert_kept_out(world, model, out)
    assert [] == [x for x in results if STAND_IN not in x]


# -- the real value put back on the way to the provider ----------------------------------------


def machine_name() -> tuple[str, str]:
    """This machine's name and the address it resolves to, where the test's provider listens:
    a name (unlike `localhost`, which NO_PROXY sends around the proxy) that a sandboxed program
    sends through Claude Code's proxy, and that the proxy resolves with this machine's resolver
    (/etc/hosts), so no line needs adding there."""
    name = socket.gethostname()
    try:
        address = socket.gethostbyname(name)
        with socket.socket() as probe:
            probe.bind((address, 0))
    except OSError as e:
        pytest.skip(f"this machine's name {name!r} is not an address of its own here: {e}")
    return name, address


APP = """import json, urllib.request
env = dict(line.split("=", 1) for line in open(".env").read().split())
request = urllib.request.Request(
    env["OPENAI_BASE_URL"] + "/models",
    headers={"Authorization": "Bearer " + env["OPENAI_API_KEY"]},
)
print("model:", json.load(urllib.request.urlopen(request, timeout=10))["data"][0]["id"])
"""


def provider_world(
    make_world: MakeWorld, canary: str, upstream: Upstream, name: str, address: str
) -> tuple[World, Watched, dict[str, str]]:
    """A masked project whose key's injectHosts is this machine's name, where `upstream` (the
    provider) listens; `.env` names the provider's base URL; the project's app (app.py) calls
    it. Returns the world, its model and Claude Code's extra environment: the provider's CA in
    NODE_EXTRA_CA_CERTS, the store the proxy checks the provider's certificate against
    (without it the program got "Bad Gateway", measured)."""
    base = f"https://{name}:{upstream.port}/v1"
    world, model = masked_world(make_world, f"OPENAI_BASE_URL={base}\n")
    # The proxy refuses a name that resolves to a loopback address or one of this machine's
    # ("Connection to NAME blocked: resolved to a loopback address") unless the address itself
    # is allowed too.
    retarget(world, [name], [name, address])
    (world.project / "app.py").write_text(APP)
    return world, model, {"NODE_EXTRA_CA_CERTS": str(upstream.ca)}


def bearer(headers: str) -> str:
    found = re.search(r"(?im)^authorization: bearer (\S+)$", headers)
    return found.group(1) if found else ""


def test_a_program_the_agent_runs_sends_the_real_key_to_its_provider(
    make_world: MakeWorld, canary: str, tmp_path: Path
) -> None:
    """The agent runs curl with the key from `.env` and the project's app: the provider (an
    HTTPS server on this machine under its name, an injectHosts host) receives the real key in
    the Authorization header, the model's requests hold only the stand-in and the provider's
    answers; the same server by its address (allowed, but not an injectHosts host) receives
    the stand-in."""
    name, address = machine_name()
    with Upstream(tmp_path / "provider", [name, address], address) as upstream:
        world, model, env = provider_world(make_world, canary, upstream, name, address)
        curl = 'set -a; . ./.env; curl -sS -m 10 -H "Authorization: Bearer $OPENAI_API_KEY"'
        # `--noproxy ''`: through the proxy, which NO_PROXY (loopback, private ranges) skips.
        other = f"https://{address}:{upstream.port}/v1/models"
        model.calls = [
            bash(Route(f'{curl} "$OPENAI_BASE_URL/models"')),
            bash(Route("python3 app.py")),
            bash(Route(f"{curl} --noproxy '' {other}")),
        ]
        out = claude_run(world, "--allowedTools", "Bash", env=env)

    results = model.outputs()
    print("RESULTS", json.dumps(results, indent=1))
    seen = json.dumps(upstream.seen, indent=1).replace(canary, "<canary>")
    print("PROVIDER", seen)
    assert len(results) == 3
    assert "upstream-model" in results[0]
    assert "model: upstream-model" in results[1]
    assert "upstream-model" in results[2]
    sent = [bearer(headers) for _, _, headers in upstream.seen]
    assert sent[:2] == [f"sk-proj-{canary}"] * 2
    assert len(sent) == 3
    assert sent[2].startswith(STAND_IN)
    assert_kept_out(world, model, out)


@pytest.mark.xfail(
    raises=AssertionError,
    strict=True,
    reason="the proxy puts the real value back in any header and the body sent to an "
    "injectHosts host and does not mask the answer: a provider that returns what it was "
    "sent (an echo, a stored file read back) hands the value to the model (measured)",
)
def test_a_provider_that_echoes_what_it_is_sent_does_not_return_the_value(
    make_world: MakeWorld, canary: str, tmp_path: Path
) -> None:
    """The agent sends the stand-in in a header and a body to the injectHosts host's /echo,
    which answers with what it received; the model must still see only the stand-in."""
    name, address = machine_name()
    with Upstream(tmp_path / "provider", [name], address) as upstream:
        world, model, env = provider_world(make_world, canary, upstream, name, address)
        echo = f'-H "X-Key: ${KEY}" -d "key=${KEY}" "https://{name}:{upstream.port}/echo"'
        model.calls = [bash(Route(f"set -a; . ./.env; curl -sS -m 10 {echo}"))]
        out = claude_run(world, "--allowedTools", "Bash", env=env)
    assert len(upstream.seen) == 1
    assert_kept_out(world, model, out)


def test_with_the_guard_both_layers_hold(make_world: MakeWorld) -> None:
    """init --mask with the guard: Claude Code's own Read tool, which its sandbox does not
    cover, is stopped by the hook (no deny rule is there to do it), a name the guard cannot see
    built at run time reads the stand-in, and the project's app still runs."""
    sandbox_or_skip()
    model = Watched()
    world = make_world("anthropic", model=model)
    offprompt = world.root / "bin" / "offprompt"
    offprompt.parent.mkdir(exist_ok=True)
    offprompt.write_text(f'#!/bin/sh\nexec {PY} -m offprompt "$@"\n')
    offprompt.chmod(0o755)
    model.written = mask(world, f"{KEY}=\nDEBUG=1\n", guard=str(offprompt))
    (world.project / "app.py").write_text(
        "import os\nkey = dict(l.split('=', 1) for l in open('.' + 'env').read().split())\n"
        f"print('app ran, key is', 'the stand-in' if key['{KEY}'].startswith('{STAND_IN}')"
        " else 'real')\n"
    )
    model.calls = [
        ("Read", {"file_path": str(world.project / ".env")}),
        bash(Route("python3 -c \"print(open('.' + 'env').read())\"")),
        bash(Route("python3 app.py")),
    ]
    out = claude_run(world, "--allowedTools", "Bash,Read")

    read, built, app = model.outputs()
    assert "offprompt guard" in read
    assert STAND_IN in built
    assert "DEBUG=1" in built
    assert "app ran, key is the stand-in" in app
    assert_kept_out(world, model, out)
    settings = json.loads((world.project / ".claude" / "settings.local.json").read_text())
    assert "permissions" not in settings


def test_a_sandbox_that_cannot_start_refuses_commands(make_world: MakeWorld) -> None:
    """A TMPDIR too long for the sandbox's Unix sockets, so it cannot start: with what init
    wrote (`failIfUnavailable`), Claude Code refuses the commands instead of running them
    unsandboxed (measured without it: "Sandboxing is disabled for the rest of this session",
    and `cat .env` printed the value)."""
    world, model = masked_world(make_world)
    long = world.root / ("t" * 120)
    long.mkdir()
    routes = [Route("cat .env"), Route(f"source .env && echo ${KEY}")]
    model.calls = [bash(r) for r in routes]
    out = claude_run(world, "--allowedTools", "Bash", env={"TMPDIR": str(long)})
    results = model.outputs()
    assert len(routes) == len(results)
    assert [] == [x for x in results if "Sandbox is required but failed to initialize" not in x]
    assert_kept_out(world, model, out)


# -- each key only to its own provider ---------------------------------------------------------

# The registry's hosts, pointed at this machine: OpenAI's at its name, GitHub's at its address.
OPENAI_HOSTS = {"api.openai.com"}
GITHUB_HOSTS = {"api.github.com", "github.com", "uploads.github.com"}


def point_hosts(world: World, name: str, address: str) -> list[dict[str, Any]]:
    """Each mask entry's registry hosts replaced by where this test's providers listen (the
    OpenAI host by this machine's name, GitHub's by its address), the rest of the entry as init
    and the writes made it; both allowed on the sandbox's network. Returns the mask entries as
    they were before."""
    path = world.home / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    entries = data["sandbox"]["credentials"]["files"]
    before = json.loads(json.dumps([e for e in entries if e["mode"] == "mask"]))
    for e in entries:
        hosts = set(e.get("injectHosts", ()))
        e["injectHosts"] = [name] * bool(hosts & OPENAI_HOSTS) + [address] * bool(
            hosts & GITHUB_HOSTS
        )
    data["sandbox"]["network"]["allowedDomains"] = [name, address]
    path.write_text(json.dumps(data, indent=2) + "\n")
    return before


def test_each_key_is_put_back_only_on_its_own_providers_hosts(
    make_world: MakeWorld, canary: str, tmp_path: Path
) -> None:
    """`.env` holds an OpenAI key, a GitHub token and SESSION_SECRET (no provider), written in
    one write; `.env.local` an OpenAI key alone and `.env.development` a GitHub token alone.
    A program sends every key of each file to both providers: each provider receives the real
    value only of its own key from the file that holds that key alone; from `.env` (Claude Code
    cannot keep one file's keys apart) and SESSION_SECRET, nothing but stand-ins, anywhere."""
    sandbox_or_skip()
    name, address = machine_name()
    model = Watched()
    world = make_world("anthropic", model=model)
    model.project = world.project
    mixed = {KEY: f"sk-proj-{canary}-m", "GITHUB_TOKEN": f"ghp_{canary}m", "SESSION_SECRET": canary}
    asyncio.run(_write(world, mixed))
    asyncio.run(_write(world, {KEY: f"sk-proj-{canary}-o"}, ".env.local"))
    asyncio.run(_write(world, {"GITHUB_TOKEN": f"ghp_{canary}g"}, ".env.development"))
    argv = [PY, "-m", "offprompt", "init", "--agent", "claude-code", "--mask", "--no-guard"]
    argv += ["--project", str(world.project), "--command", "offprompt serve"]
    done = run(argv, world.env, world.project, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    with Upstream(tmp_path / "provider", [name, address], address) as upstream:
        before = point_hosts(world, name, address)
        send = '-H "X-O: $OPENAI_API_KEY" -H "X-G: $GITHUB_TOKEN" -H "X-S: $SESSION_SECRET"'
        model.calls = [
            bash(
                Route(
                    f"set -a; . ./{f}; curl -sS -m 10 --noproxy '' {send} https://{h}:{upstream.port}/{f}"
                )
            )
            for f in (".env", ".env.local", ".env.development")
            for h in (name, address)
        ]
        model.written = (world.project / ".env").read_text()
        out = claude_run(
            world, "--allowedTools", "Bash", env={"NODE_EXTRA_CA_CERTS": str(upstream.ca)}
        )

    hosts = {Path(e["path"]).name: sorted(e["injectHosts"]) for e in before}
    assert {
        ".env": [],
        ".env.local": ["api.openai.com"],
        ".env.development": sorted(GITHUB_HOSTS),
    } == hosts
    real = {
        (path, host_of(headers)): sorted(
            k.upper() for k, v in re.findall(r"(?im)^(x-[ogs]): (\S+)$", headers) if canary in v
        )
        for _, path, headers in upstream.seen
    }
    print("REAL VALUES RECEIVED", json.dumps({f"{p} at {h}": v for (p, h), v in real.items()}))
    assert len(upstream.seen) == 6
    expected = {
        ("/.env", name): [], ("/.env", address): [],
        ("/.env.local", name): ["X-O"], ("/.env.local", address): [],
        ("/.env.development", name): [], ("/.env.development", address): ["X-G"],
    }  # fmt: skip
    assert {(p, h.lower()): v for (p, h), v in expected.items()} == real
    from_env = [h for _, path, h in upstream.seen if path == "/.env"]
    assert [3, 3] == [len(re.findall(rf"(?im)^x-[ogs]: {STAND_IN}", h)) for h in from_env]
    assert_kept_out(world, model, out)


def host_of(headers: str) -> str:
    found = re.search(r"(?im)^host: ([^:\s]+)", headers)
    return found.group(1).lower() if found else ""


# -- the folder a masked file's undo record is kept in while it is written -----------------------


class Acting(Watched):
    """A Watched model that, at the turn after `at` tool results (Claude Code running, the
    background job started), does `action` once on this machine, outside the sandbox."""

    def __init__(self, at: int, action: Callable[[], None]) -> None:
        super().__init__()
        self.at, self.action, self.done = at, action, False

    def _turn(self, body: dict[str, Any]) -> tuple[str, tuple[str, str] | None]:
        if not self.done and self._offers_tool(body) and len(self.outputs(body)) == self.at:
            self.done = True
            self.action()
        return super()._turn(body)


def test_the_undo_records_folder_is_empty_to_every_sandboxed_command(
    make_world: MakeWorld, canary: str
) -> None:
    """The state dir's `undo` folder (made by `init --mask`, before Claude Code starts) holds
    a masked file's old bytes while it is written in place, and after a write killed midway:
    with the deny entry init wrote, a sandboxed command sees the folder empty, and so does a
    background job that was already running when a record appeared in it; the value is in no
    request to the model."""
    sandbox_or_skip()
    keep = None

    def copy_appears() -> None:
        assert keep is not None
        (keep / "late").write_text(f"{KEY}=sk-proj-{canary}\n")
        (world.project / "GO").write_text("")

    model = Acting(2, copy_appears)
    world = make_world("anthropic", model=model)
    model.project = world.project
    model.written = mask(world, f"{KEY}=\nDEBUG=1\n")
    keep = Path(os.path.realpath(world.state)) / KEEP_NAME
    assert keep.is_dir()  # made by init --mask, before any sandboxed command
    assert not (world.project / KEEP_NAME).exists()
    (keep / "early").write_text(f"{KEY}=sk-proj-{canary}\n")
    listed = f"echo listed:$(ls -A {keep} | tr '\\n' ,)"
    wait = "until [ -e GO ]; do sleep 0.2; done"
    job = f"{wait}; {{ {listed}; cat {keep}/late; }} > seen 2>&1"
    model.calls = [
        bash(Route(f"{listed}; cat {keep}/early", ("No such file",))),
        ("Bash", {"command": job, "description": "Watch", "run_in_background": True}),
        bash(Route("sleep 1; echo waited", ("waited",))),
        bash(Route("for i in $(seq 50); do [ -s seen ] && break; sleep 0.2; done; cat seen")),
    ]
    out = claude_run(world, "--allowedTools", "Bash")

    early, _, _, late = model.outputs()
    print("SEEN", json.dumps([early, late]).replace(canary, "<canary>"))
    assert "listed:\n" in early
    assert f"cat: {keep}/early: No such file or directory" in early
    # The job, running before `late` appeared, lists the folder empty and cannot read it.
    assert f"listed:\ncat: {keep}/late: No such file or directory" in late
    assert_kept_out(world, model, out)
