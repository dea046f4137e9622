"""`init --mask` and `remove --mask` (DESIGN §15): glue between cli_agents.py and the mask's
edits in agents/mask.py, with what each agent can and cannot mask said plainly.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from offprompt.agents import Agent, ConfigError, Machine, codex_mask, gitignore, mask
from offprompt.cli_base import fatal
from offprompt.configedit import jsonc
from offprompt.journal import Journal, default_path

__all__ = ["MASKABLE", "check_machine", "record_path", "turn_off", "turn_on", "unmasked_line"]

# The agents whose own sandbox offprompt can point at the values it writes (Codex's can only
# deny them: agents/codex_mask.py).
MASKABLE = ("claude-code", "codex")

_INSTALL = {
    "bwrap": "bubblewrap",
    "socat": "socat",
}


def record_path(machine: Machine) -> Path:
    """mask.json, beside the journal (OFFPROMPT_STATE_DIR or the user state dir)."""
    return default_path(machine.environ).parent / mask.RECORD_NAME


def check_machine(machine: Machine) -> None:
    """Exit 1, before anything is changed, when Claude Code's sandbox cannot run here."""
    missing = mask.missing_programs(machine.which, machine.platform)
    if missing:
        packages = " ".join(_INSTALL[m] for m in missing)
        fatal(
            f"the mask needs Claude Code's sandbox, which on Linux runs through bwrap and socat,"
            f" and this machine lacks {' and '.join(missing)}: install it (`sudo apt-get install"
            f" {packages}`) and run this again. Nothing was changed."
        )


def unmasked_line(agent: Agent) -> str:
    """What `init --mask` says for an agent it cannot mask."""
    return f"{agent.name}: not masked: offprompt cannot point its sandbox at the values yet"


def _written(machine: Machine, project: Path) -> dict[str, tuple[str, ...] | None]:
    """Every file the journal says offprompt wrote in `project` that is still there: the keys it
    wrote in each, None for a file sink's file."""
    here = os.path.realpath(project)
    out: dict[str, tuple[str, ...] | None] = {}
    for item in reversed(Journal(default_path(machine.environ)).read()):
        if os.path.realpath(item.project) != here or not item.file:
            continue
        path = os.path.realpath(os.path.join(here, item.file))
        if not os.path.isfile(path):
            continue
        if item.sink == "file":
            out[path] = None
        elif out.get(path, ()) is not None:
            out[path] = tuple(sorted({*(out.get(path) or ()), *item.names}))
    return out


def _overriding_rules(project: Path, machine: Machine) -> list[str]:
    """`Read(...)` deny rules (ours taken out by now) in the settings that apply here: Claude
    Code makes each a sandbox denial that overrides a mask of the same file."""
    out = []
    for path in (
        mask.user_settings(machine.home, machine.environ),
        project / ".claude" / "settings.json",
        mask.local_settings(project),
    ):
        try:
            root = jsonc.parse(path.read_text(encoding="utf-8")).root.value
        except (OSError, UnicodeDecodeError, jsonc.JsoncError):
            continue
        perms = root.get("permissions") if isinstance(root, dict) else None
        deny = perms.get("deny") if isinstance(perms, dict) else None
        for rule in deny if isinstance(deny, list) else []:
            if isinstance(rule, str) and rule.startswith("Read(") and ".env" in rule:
                out.append(f"{rule} in {machine.shown(path)}")
    return out


def turn_on(agent: str, project: Path, machine: Machine, no_guard: bool = False) -> bool:
    """Mask `project` for `agent`; one line said either way. False when it failed."""
    if agent == "codex":
        return _codex_on(project, machine)
    settings = mask.user_settings(machine.home, machine.environ)
    shown = machine.shown(settings)
    local = mask.local_settings(project)
    local_shown = machine.shown(local)
    try:
        gitignore.ensure_ignored(project, local, local_shown)
        written = _written(machine, project)
        mask.Mask(record_path(machine), settings, shown).turn_on(project, written)
    except (ConfigError, OSError) as e:
        click.echo(f"claude-code: failed: the mask: {e}")
        return False
    for rule in _overriding_rules(project, machine):
        click.echo(
            f"claude-code: note: {rule} makes Claude Code's sandbox deny that file instead of"
            " masking it (your app cannot read it there); take the rule out to let it"
        )
    count = f"{len(written)} file{'s' if len(written) != 1 else ''} offprompt wrote"
    click.echo(
        f"claude-code: masked: {count} here, and every later write, in {shown} (TLS termination"
        f" and one entry per file); the sandbox is on for this project in {local_shown}"
    )
    if no_guard:
        click.echo(
            "claude-code: note: without the guard nothing stops Claude Code's own Read and Grep"
            " tools, which its sandbox does not cover: they read the real values"
        )
    return True


def _codex_home(machine: Machine) -> Path:
    return machine.env_path("CODEX_HOME") or machine.home / ".codex"


def _codex_on(project: Path, machine: Machine) -> bool:
    path = codex_mask.config_path(project)
    shown = machine.shown(path)
    here = os.path.realpath(project)
    written = [Path(p).relative_to(here).as_posix() for p in _written(machine, project)]
    try:
        network = codex_mask.network_on(project, _codex_home(machine))
        codex_mask.turn_on(project, written, network, shown)
    except (ConfigError, OSError) as e:
        click.echo(f"codex: failed: the mask: {e}")
        return False
    click.echo(
        f"codex: denied, not masked (Codex 0.169 masks no file): .env, the other usual dotenv"
        f" names and every file offprompt writes here are unreadable to the commands its"
        f" sandbox runs, your app's included, through a permissions profile in {shown}, once"
        " you trust this project in Codex (a --sandbox given on Codex's command line replaces"
        " it)"
    )
    return True


def turn_off(agent: str, project: Path, machine: Machine) -> bool:
    """Take the mask out of `project`; one line when there was one. False when it failed."""
    if agent == "codex":
        path = codex_mask.config_path(project)
        try:
            done = codex_mask.turn_off(project, machine.shown(path))
        except (ConfigError, OSError) as e:
            click.echo(f"codex: failed: the mask: {e}")
            return False
        if done:
            click.echo(f"codex: took the denial out of {machine.shown(path)}")
        return True
    settings = mask.user_settings(machine.home, machine.environ)
    shown = machine.shown(settings)
    local = mask.local_settings(project)
    try:
        done = mask.Mask(record_path(machine), settings, shown).turn_off(project)
        if done and not local.exists():
            gitignore.release(project, local, machine.shown(local))
    except (ConfigError, OSError) as e:
        click.echo(f"claude-code: failed: the mask: {e}")
        return False
    if done:
        click.echo(f"claude-code: took the mask out of {shown} and {machine.shown(local)}")
    else:
        click.echo("claude-code: no mask for this project")
    return True
