"""What makes Codex run without the permissions profile offprompt puts in a project's
`.codex/config.toml` (the mask, mask/codex.py), from the files offprompt can read.

Measured in real Codex 0.169.0 and 0.171.0 (tests/real_hosts/test_codex_sandbox_sources.py) and
read in its source (`resolve_permission_config_syntax`): Codex uses its older sandbox instead of
the profile when the highest config layer that chooses one sets `sandbox_mode` rather than
`default_permissions` (one layer setting both keeps the profile), and any layer above the project's
may name another profile. The layers below the project's (`/etc/codex/config.toml`, the user's
config and its `--profile` file, the `.codex` of folders above) never undo it. Above it are only:
`/etc/codex/managed_config.toml`, the `.codex/config.toml` of a subfolder Codex is started in,
and Codex's command line (`-s`/`--sandbox`, `-c sandbox_mode=…`, `-c default_permissions=…`,
`--dangerously-bypass-approvals-and-sandbox`), which no file shows. An administrator's
`[allowed_permission_profiles]` in `/etc/codex/requirements.toml` that leaves the profile out
makes Codex fall back to the required one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from offprompt.agents import files
from offprompt.agents.machine import Machine
from offprompt.errors import ConfigError

__all__ = [
    "COMMAND_LINE",
    "MANAGED_CONFIG",
    "REQUIREMENTS",
    "from_managed",
    "from_requirements",
    "from_subfolders",
]

# Codex's legacy managed layer on Linux and macOS: above every other config file; and the
# administrator's requirements, whose profile allow-list refuses any profile it leaves out.
MANAGED_CONFIG = Path("/etc/codex/managed_config.toml")
REQUIREMENTS = Path("/etc/codex/requirements.toml")
# How deep subfolders are looked through for a `.codex/config.toml`, and what is never a
# folder a person starts Codex in.
_DEPTH = 6
_SKIP = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "target", "dist"})

COMMAND_LINE = (
    "Codex's command line can undo the mask, and offprompt cannot see it: -s/--sandbox,"
    " -c sandbox_mode=…, -c default_permissions=…, -p/--profile picking another sandbox,"
    " --approve-for-me (its workspace-write sandbox) or"
    " --dangerously-bypass-approvals-and-sandbox make Codex ignore the profile that denies the"
    " files, and -C/--cd into another folder starts it where the profile does not apply (its"
    " commands can then read them; the guard still blocks a read that names them); start Codex"
    " in this folder without them"
)


def choices(data: dict[str, Any], profile: str) -> list[str]:
    """What in one config layer makes Codex leave `profile`: its `sandbox_mode` when the layer
    does not also choose a profile, or a `default_permissions` naming another one."""
    chosen = data.get("default_permissions")
    if chosen is not None:
        return [] if chosen == profile else [f"default_permissions = {chosen!r}"]
    return ["sandbox_mode"] if "sandbox_mode" in data else []


def from_managed(machine: Machine, profile: str, path: Path = MANAGED_CONFIG) -> list[str]:
    """`/etc/codex/managed_config.toml`'s choices, as `<what> in <file>`; none when it cannot
    be read (said by Codex itself when it starts)."""
    return [f"{c} in {machine.shown(path)}" for c in _choices_in(path, machine, profile)]


def from_requirements(machine: Machine, profile: str, path: Path = REQUIREMENTS) -> list[str]:
    """The administrator's `[allowed_permission_profiles]` when it does not allow `profile`:
    Codex then says "disallowed by requirements" and runs the required profile instead."""
    shown = machine.shown(path)
    try:
        data = files.toml_object(files.read_text(path, shown) or "", shown)
    except ConfigError:
        return []
    allowed = data.get("allowed_permission_profiles")
    if not isinstance(allowed, dict) or allowed.get(profile) is True:
        return []
    return [f"[allowed_permission_profiles] in {shown} (without {profile!r})"]


def from_subfolders(project: Path, machine: Machine, profile: str) -> list[str]:
    """Each subfolder of `project` (up to a few folders deep) whose `.codex/config.toml`
    chooses otherwise, as `<what> in <file>`: Codex started there loads it above the project's."""
    found = []
    for folder in _subfolders(project):
        path = folder / ".codex" / "config.toml"
        found += [f"{c} in {machine.shown(path)}" for c in _choices_in(path, machine, profile)]
    return found


def _choices_in(path: Path, machine: Machine, profile: str) -> list[str]:
    shown = machine.shown(path)
    try:
        text = files.read_text(path, shown)
        return choices(files.toml_object(text or "", shown), profile)
    except ConfigError:
        return []


def _subfolders(project: Path) -> list[Path]:
    """The folders below `project` that hold a `.codex` folder, nearest first."""
    found = []
    top = len(project.parts)
    for here, dirs, _ in os.walk(project):
        depth = len(Path(here).parts) - top
        if depth and ".codex" in dirs:
            found.append(Path(here))
        keep = [d for d in dirs if d not in _SKIP and not d.startswith(".")]
        dirs[:] = sorted(keep) if depth < _DEPTH else []
    return found
