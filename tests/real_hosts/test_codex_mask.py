"""What Codex 0.171.0 (as 0.169.0 before it) offers to keep a file's secret from the commands its
model runs (DESIGN §15), proven in real `codex exec` with a scripted model and the guard hook NOT
installed, so the operating-system layer stands alone.

Codex has one such means: a permissions profile (`default_permissions` naming a
`[permissions.<name>]` table that extends `:workspace`) whose filesystem table gives the file
`"deny"`. Its bubblewrap sandbox then mounts an unreadable empty file over it for every command
the model runs. Codex's credential masking (the network proxy's credential broker) swaps only
environment variables for stand-ins: the same value read from a file comes through (measured
below), so for a `.env` there is denial, never a mask: what init --mask writes
(offprompt/agents/mask/codex.py), tested last below.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

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
from .terminal import Terminal

pytestmark = pytest.mark.real_hosts

KEY = "STRIPE_SECRET_KEY"
README = "mask-readme-marker-5c1e"
PROFILE = "offprompt"
DENIED = "Permission denied"

PATCH_REFUSED = "Failed to read file to update"


def patch(body: str) -> str:
    """A shell call of `apply_patch` updating `.env` with `body`."""
    text = f"*** Begin Patch\n*** Update File: .env\n{body}\n*** End Patch"
    return f"apply_patch <<'EOF'\n{text}\nEOF"


ESCALATE = {"sandbox_permissions": "require_escalated", "justification": "Read the settings."}
# The shell routes to the value: the list, a script the model writes and then runs,
# renames and links, and Codex's own ways round the sandbox (asking to run unsandboxed, and its
# image viewer, which reads the file itself rather than through a command). Each with what it
# answers the model: the sandbox's refusal, or Codex's own.
ATTEMPTS: list[tuple[str, dict[str, str], str]] = [
    ("exec_command", {"cmd": "cat .env"}, "cat: .env: Permission denied"),
    ("exec_command", {"cmd": "python3 -c \"print(open('.env').read())\""}, "PermissionError"),
    ("exec_command", {"cmd": "cp .env x && cat x"}, "cp: cannot open '.env' for reading"),
    ("exec_command", {"cmd": "f=.e; cat ${f}nv"}, "cat: .env: Permission denied"),
    ("exec_command", {"cmd": "base64 .env"}, "base64: .env: Permission denied"),
    ("exec_command", {"cmd": "printf 'print(open(\".env\").read())\\n' > leak.py"}, "code 0"),
    ("exec_command", {"cmd": "python3 leak.py"}, "PermissionError: [Errno 13]"),
    ("exec_command", {"cmd": f"set -a; . ./.env; echo ${KEY}"}, "./.env: Permission denied"),
    ("exec_command", {"cmd": 'cd .. && cat "$OLDPWD/.env"'}, "/project/.env: Permission denied"),
    ("exec_command", {"cmd": "ln -s .env link; cat link"}, "cat: link: Permission denied"),
    # A mount point cannot be renamed: the file stays where it is.
    ("exec_command", {"cmd": "mv .env moved; cat moved"}, "Device or resource busy"),
    ("exec_command", {"cmd": "tar cf - .env | tar xOf -"}, "Cannot open: Permission denied"),
    ("exec_command", {"cmd": "cat .env", **ESCALATE}, "approval policy is Never; reject command"),
    ("view_image", {"path": ".env"}, "Permission denied (os error 13)"),
    # Codex runs `apply_patch` itself: a patch that fails shows context, a move copies the file.
    ("exec_command", {"cmd": patch("@@\n-NOPE\n+X")}, PATCH_REFUSED),
    ("exec_command", {"cmd": patch("*** Move to: moved.txt\n@@\n+# moved")}, PATCH_REFUSED),
]
READ_ME = {"cmd": "cat README.md"}
EVERYDAY = ("exec_command", READ_ME)


def profile(entries: str, glob_depth: int | None = None) -> str:
    """The `[permissions.offprompt]` tables: the `:workspace` built-in (what Codex runs a trusted
    project in) and `entries` under `:workspace_roots` (paths relative to the project). /tmp is
    made read-only here only because the machine's /tmp is shared: a writable /tmp gets the
    sandbox's empty `.git`, `.codex`, `.agents` and `.aws` mount points, and a stray /tmp/.git
    breaks other tests."""
    depth = f"glob_scan_max_depth = {glob_depth}\n" if glob_depth else ""
    return (
        f"[permissions.{PROFILE}]\n"
        'description = "The workspace sandbox; the files offprompt wrote are unreadable"\n'
        'extends = ":workspace"\n'
        f"[permissions.{PROFILE}.filesystem]\n"
        f"{depth}"
        '":slash_tmp" = "read"\n'
        f'[permissions.{PROFILE}.filesystem.":workspace_roots"]\n'
        f"{entries}"
    )


EXACT = '".env" = "deny"\n'


def project(world: World) -> None:
    (world.project / ".env").write_text(f"{KEY}={world.canary}\n")
    (world.project / "README.md").write_text(f"# app\n{README}\n")


def configure(world: World, where: str, tables: str, trust: str = "trusted") -> dict[str, str]:
    """Codex's environment with the scripted model (World.codex) and `tables` in the user
    config or the project's `.codex/config.toml`; `default_permissions` goes before the first
    table (a key after a table header belongs to that table). The person's trust answer for
    the project is `trust` ("" for none)."""
    env = world.codex()
    user = world.codex_home / "config.toml"
    text = user.read_text().replace('trust_level = "trusted"', trust and f'trust_level = "{trust}"')
    # World.codex keeps Codex's built-in workspace-write (the controls below) out of /tmp.
    assert "exclude_slash_tmp = true" in text
    selected = f'default_permissions = "{PROFILE}"\n'
    if where == "user" and tables:
        text = selected + text + "\n" + tables
    elif where == "project" and tables:
        (world.project / ".codex").mkdir(exist_ok=True)  # World.codex made the mount point
        (world.project / ".codex" / "config.toml").write_text(selected + tables)
    user.write_text(text)
    return env


def codex_exec(world: World, env: dict[str, str], *flags: str) -> str:
    """`codex exec` in the project; all it printed (it prints each command's output too)."""
    argv = [tool_or_skip("codex"), "exec", "--skip-git-repo-check", *flags, "Check."]
    done = run(argv, env, world.project, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def results(model: ToolScript, calls: int) -> list[str]:
    out = model.outputs()
    print("RESULTS", json.dumps(out, indent=1))
    assert calls == len(out)
    return out


def assert_kept_out(world: World, printed: str) -> None:
    """The value reached no request to the model and is not in what Codex printed; `.env` is
    where it was, unchanged."""
    assert world.canary.encode() not in world.model.raw()
    assert world.canary not in printed
    assert (world.project / ".env").read_text() == f"{KEY}={world.canary}\n"


@pytest.mark.parametrize("where", ["user", "project"])
def test_a_deny_entry_keeps_the_value_from_every_command(
    make_world: MakeWorld, canary: str, where: str
) -> None:
    """The profile in the user config or in a trusted project's `.codex/config.toml`: every
    route to `.env` (reads, copies, an indirect name, base64, a script the model wrote, a
    link, a rename, a tarball, a request to run unsandboxed, the image viewer, Codex's own
    `apply_patch`) gets a refusal,
    `cat README.md` still runs, and the value is in no request to the model."""
    model = ToolScript("openai", [*[(n, a) for n, a, _ in ATTEMPTS], EVERYDAY])
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, where, profile(EXACT))

    printed = codex_exec(world, env)

    *refused, everyday = results(model, len(ATTEMPTS) + 1)
    assert README in everyday
    answers = zip(ATTEMPTS, refused, strict=True)
    assert [] == [(args, r) for (_, args, said), r in answers if said not in r]
    # The script was written (the workspace stays writable) and could not read the file.
    assert (world.project / "leak.py").exists()
    assert not (world.project / "moved").exists()
    assert not (world.project / "moved.txt").exists()
    # Codex tells the person the sandbox it runs in: workspace-write, from the profile.
    assert "sandbox: workspace-write" in printed
    assert_kept_out(world, printed)


def test_a_glob_entry_denies_every_matching_file(make_world: MakeWorld, canary: str) -> None:
    """`"**/.env*" = "deny"` under `:workspace_roots` (with `glob_scan_max_depth`, which Linux
    needs for `**`): `.env` and a nested `.env.local` are both unreadable, README is not."""
    model = ToolScript(
        "openai",
        [
            ("exec_command", {"cmd": "cat .env"}),
            ("exec_command", {"cmd": "cat app/.env.local"}),
            EVERYDAY,
        ],
    )
    world = make_world("openai", model=model)
    project(world)
    (world.project / "app").mkdir()
    (world.project / "app" / ".env.local").write_text(f"LOCAL_KEY={canary}\n")
    env = configure(world, "user", profile('"**/.env*" = "deny"\n', glob_depth=4))

    printed = codex_exec(world, env)

    top, nested, everyday = results(model, 3)
    assert DENIED in top
    assert DENIED in nested
    assert README in everyday
    assert_kept_out(world, printed)


# Without the profile, or with it overridden, `cat .env` reaches the model: so each test above
# can fail, and these are the cases `offprompt agents` must name.
CONTROLS = {
    "no profile": ("user", "", "trusted", ()),
    "--sandbox workspace-write": ("user", EXACT, "trusted", ("--sandbox", "workspace-write")),
    "--sandbox read-only": ("user", EXACT, "trusted", ("--sandbox", "read-only")),
    "--sandbox danger-full-access": (
        "user",
        EXACT,
        "trusted",
        ("--sandbox", "danger-full-access"),
    ),
    "-c sandbox_mode": ("user", EXACT, "trusted", ("-c", 'sandbox_mode="workspace-write"')),
    "project not trusted": ("project", EXACT, "untrusted", ()),
    "project never asked": ("project", EXACT, "", ()),
}


@pytest.mark.parametrize("case", CONTROLS)
def test_the_value_comes_through_without_the_profile(
    make_world: MakeWorld, canary: str, case: str
) -> None:
    """No profile, a `--sandbox`/`sandbox_mode` flag on the command line (it replaces the
    profile, whatever mode it names), or the profile only in a project the person has not
    trusted: `cat .env` prints the value to the model."""
    where, entries, trust, flags = CONTROLS[case]
    model = ToolScript("openai", [("exec_command", {"cmd": "cat .env"})])
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, where, profile(entries) if entries else "", trust)

    codex_exec(world, env, *flags)

    (result,) = results(model, 1)
    assert canary in result
    assert canary.encode() in world.model.raw()


@pytest.mark.parametrize("with_profile", [False, True])
def test_a_user_level_profile_loosens_a_folder_never_trusted(
    make_world: MakeWorld, canary: str, with_profile: bool
) -> None:
    """A folder the person never trusted runs read-only (`touch` fails); the same folder with
    the profile in the user config runs it writable: a user-level `default_permissions` applies
    to every folder, which is why init writes the project's config instead."""
    model = ToolScript("openai", [("exec_command", {"cmd": "touch written"})])
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "user", profile(EXACT) if with_profile else "", trust="")

    printed = codex_exec(world, env)

    (result,) = results(model, 1)
    assert (world.project / "written").exists() is with_profile
    assert ("Read-only file system" in result) is not with_profile
    assert ("sandbox: read-only" in printed) is not with_profile


# Codex's credential masking, on: the network proxy, its credential broker and the
# under-development `credential_masking` feature, with network access so the proxy runs.
MASKING = """
[shell_environment_policy]
ignore_default_excludes = true
[features]
credential_masking = true
[features.network_proxy]
enabled = true
credential_broker = true
"""


def test_credential_masking_swaps_the_variable_but_not_the_file(
    make_world: MakeWorld, canary: str
) -> None:
    """With masking on and OPENAI_API_KEY (a key kind the broker knows) in Codex's
    environment, the command sees a `sk-proj-masked…` stand-in for the variable, while the
    same value in `.env` comes through `cat` unchanged: masking covers variables, not files."""
    value = "sk-proj-" + canary.replace("-", "") + "T3BlbkFJ" + "x" * 24
    model = ToolScript(
        "openai",
        [
            ("exec_command", {"cmd": "echo variable=$OPENAI_API_KEY"}),
            ("exec_command", {"cmd": "cat .env"}),
        ],
    )
    world = make_world("openai", model=model)
    (world.project / ".env").write_text(f"OPENAI_API_KEY={value}\n")
    env = configure(world, "user", "")
    user = world.codex_home / "config.toml"
    user.write_text(user.read_text() + "network_access = true\n" + MASKING)
    env["OPENAI_API_KEY"] = value

    printed = codex_exec(world, env)

    variable, file = results(model, 2)
    assert "variable=sk-proj-masked" in variable
    assert value not in variable
    assert f"OPENAI_API_KEY={value}" in file
    assert "Under-development features enabled: credential_masking" in printed


def submit(term: Terminal, line: str, shown: Callable[[], bool], timeout: float = 20) -> str:
    """The person types `line` and presses Enter, again (after clearing the box) if the TUI,
    still settling on a busy machine, dropped the keys; the screen once `shown()` holds."""
    for _attempt in range(3):
        term.press("\x15")  # Ctrl-U: an empty input box
        term.child.send(line)
        time.sleep(0.5)
        term.press("enter")
        deadline = time.monotonic() + timeout / 3
        while time.monotonic() < deadline:
            if shown():
                return term.screen()
            time.sleep(0.1)
    raise TimeoutError(f"the TUI never took {line!r}; screen:\n{term.screen()}")


def test_the_tui_keeps_the_file_denied_after_the_person_approves(
    make_world: MakeWorld, canary: str
) -> None:
    """Codex's TUI with the profile in the user config: `/status` names it, the model asks
    to run `cat .env` unsandboxed, the person answers "Yes, proceed", and the command still
    gets `Permission denied` (the profile's deny outlives an approved escalation); then
    `cat README.md` runs and the value is in no request to the model nor on the screen."""
    model = ToolScript(
        "openai", [("exec_command", {"cmd": "cat .env", **ESCALATE}), ("exec_command", READ_ME)]
    )
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "user", profile(EXACT))
    term = Terminal([tool_or_skip("codex")], env, world.project)
    try:
        term.wait("Ask Codex to do anything", 60)
        status = submit(term, "/status", lambda: f"Profile {PROFILE}" in term.screen())
        asked = submit(term, "Check.", lambda: "Would you like to run" in term.screen())
        term.child.send("y")
        screen = term.wait("Finished", 60)
    finally:
        term.close()
    print("STATUS", status, "ASKED", asked, "SCREEN", screen, sep="\n")
    assert f"Profile {PROFILE} (workspace, Ask for approval)" in status
    assert "Reason: Read the settings." in asked
    escalated, everyday = results(model, 2)
    assert "cat: .env: Permission denied" in escalated
    assert README in everyday
    assert_kept_out(world, term.raw.decode(errors="replace"))


# -- the managed layer: `[permissions.filesystem] deny_read` in /etc/codex/requirements.toml ----


def managed_prefix(world: World, deny_read: list[str]) -> list[str]:
    """The argv prefix that runs Codex with /etc/codex/requirements.toml holding `deny_read`,
    seen only by that process tree: a private mount namespace with an overlay on /etc (root
    only), so the machine's /etc is never touched. Skips where that cannot be made."""
    rules = ", ".join(json.dumps(p) for p in deny_read)
    return managed_prefix_files(
        world, {"requirements.toml": f"[permissions.filesystem]\ndeny_read = [{rules}]\n"}
    )


def managed_prefix_files(world: World, files: dict[str, str]) -> list[str]:
    """The argv prefix that runs Codex with `files` (name: text) in /etc/codex, as
    managed_prefix does."""
    upper, work = world.root / "etc-upper", world.root / "etc-work"
    (upper / "codex").mkdir(parents=True)
    work.mkdir()
    for name, text in files.items():
        (upper / "codex" / name).write_text(text)
    overlay = f"lowerdir=/etc,upperdir={upper},workdir={work}"
    script = f'mount -t overlay overlay -o {overlay} /etc && exec "$@"'
    prefix = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh"]
    probe = run([*prefix, "cat", f"/etc/codex/{next(iter(files))}"], world.env, world.root, 30)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here (needs root): {probe.stderr.strip()}")
    return prefix


MODES = {
    "default": (),
    "--sandbox read-only": ("--sandbox", "read-only"),
    "-c sandbox_mode": ("-c", 'sandbox_mode="workspace-write"'),
}


@pytest.mark.parametrize("mode", MODES)
def test_managed_deny_read_holds_whatever_sandbox_is_asked_for(
    make_world: MakeWorld, canary: str, mode: str
) -> None:
    """The administrator's form, `deny_read` with the file's absolute path in
    requirements.toml, no profile in any config.toml: `cat .env` is refused in the default
    mode and under the `--sandbox`/`sandbox_mode` flags that drop a profile; README reads."""
    model = ToolScript("openai", [("exec_command", {"cmd": "cat .env"}), EVERYDAY])
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "user", "")
    prefix = managed_prefix(world, [str(world.project / ".env")])
    argv = [*prefix, tool_or_skip("codex"), "exec", "--skip-git-repo-check", *MODES[mode], "Go."]

    done = run(argv, env, world.project, timeout=180)

    assert done.returncode == 0, done.stdout + done.stderr
    denied, everyday = results(model, 2)
    assert "cat: .env: Permission denied" in denied
    assert README in everyday
    assert_kept_out(world, done.stdout + done.stderr)


def test_managed_deny_read_refuses_to_start_without_a_sandbox(
    make_world: MakeWorld, canary: str
) -> None:
    """With that requirement, `codex exec --sandbox danger-full-access` does not start: it
    says the requirements do not allow it, and the model is never asked."""
    model = ToolScript("openai", [("exec_command", {"cmd": "cat .env"})])
    world = make_world("openai", model=model)
    project(world)
    env = configure(world, "user", "")
    prefix = managed_prefix(world, [str(world.project / ".env")])
    codex = tool_or_skip("codex")
    argv = [
        *prefix,
        codex,
        "exec",
        "--skip-git-repo-check",
        "--sandbox",
        "danger-full-access",
        "Go.",
    ]

    done = run(argv, env, world.project, timeout=180)

    assert done.returncode == 1
    said = 'requirements do not allow `sandbox_mode = "danger-full-access"`'
    assert said in done.stderr
    assert model.conversation() == []
    assert_kept_out(world, done.stdout + done.stderr)


def test_what_init_mask_writes_denies_what_offprompt_wrote(
    make_world: MakeWorld, canary: str
) -> None:
    """The key written by offprompt itself, then `offprompt init --agent codex --mask`: in the
    trusted project, with nothing else of the test's in the profile but /tmp kept read-only
    (this machine's /tmp is shared), the usual routes are refused and README still reads."""
    calls = [ATTEMPTS[0][:2], ATTEMPTS[1][:2], ATTEMPTS[3][:2], EVERYDAY]
    model = ToolScript("openai", calls)
    world = make_world("openai", model=model)
    (world.project / "README.md").write_text(f"# app\n{README}\n")
    (world.project / ".env").write_text(f"{KEY}=\n")
    asyncio.run(_write(world, {KEY: canary}))
    env = configure(world, "project", "")
    argv = [PY, "-m", "offprompt", "init", "--agent", "codex", "--mask", "--no-guard"]
    argv += ["--project", str(world.project), "--command", "offprompt serve"]
    done = run(argv, env, world.project, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "codex: denied, not masked" in done.stdout
    config = world.project / ".codex" / "config.toml"
    # Into the profile's own filesystem table (init writes one): TOML takes a table once.
    table = f"[permissions.{PROFILE}.filesystem]\n"
    text = config.read_text()
    assert table in text
    config.write_text(text.replace(table, table + '":slash_tmp" = "read"\n', 1))

    printed = codex_exec(world, env)

    *refused, everyday = results(model, len(calls))
    assert README in everyday
    assert [] == [r for r in refused if DENIED not in r and "denied" not in r.lower()]
    assert_kept_out(world, printed)


async def _write(world: World, values: dict[str, str]) -> None:
    store = RequestStore()
    secrets = tuple(SecretSpec(n) for n in values)
    request = store.create(secrets, SinkSpec(), world.project, "the app", ttl=60)
    await Submitter(store, Journal(world.state / "journal.jsonl"), mask=mask_keeper()).submit(
        request, values
    )
