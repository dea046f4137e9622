"""Claude Code's mask (DESIGN §15): its sandbox shows the commands it runs a stand-in for each value
offprompt wrote, through entries in the user settings and the sandbox on in the project's
personal settings (the edits: claude_settings.py; one file's entry: claude_entry.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import ClassVar

from offprompt.agents import gitignore
from offprompt.agents.machine import Machine
from offprompt.agents.mask import claude_settings
from offprompt.agents.mask.claude_settings import (
    Mask,
    local_settings,
    missing_programs,
    user_settings,
)
from offprompt.agents.mask.interface import HostMask, MaskKind, MaskPlace, MaskState, Said, Written
from offprompt.configedit import jsonc
from offprompt.errors import ConfigError

__all__ = ["ClaudeCodeMask"]

# The package each program Claude Code's sandbox needs on Linux comes in.
_INSTALL = {
    "bwrap": "bubblewrap",
    "socat": "socat",
}


class ClaudeCodeMask(HostMask):
    agent: ClassVar[str] = "claude-code"
    kind: ClassVar[MaskKind] = "masked"

    def unready(self, machine: Machine) -> str | None:
        missing = missing_programs(machine.which, machine.platform)
        if not missing:
            return None
        packages = " ".join(_INSTALL[m] for m in missing)
        return (
            f"the mask needs Claude Code's sandbox, which on Linux runs through bwrap and socat,"
            f" and this machine lacks {' and '.join(missing)}: install it (`sudo apt-get install"
            f" {packages}`) and run this again. Nothing was changed."
        )

    def install(
        self, place: MaskPlace, written: Callable[[], Written], no_guard: bool = False
    ) -> Said:
        project, machine = place.project, place.machine
        settings = user_settings(machine.home, machine.environ)
        shown = machine.shown(settings)
        local = local_settings(project)
        local_shown = machine.shown(local)
        try:
            gitignore.ensure_ignored(project, local, local_shown)
            files = written()
            Mask(place.record, settings, shown).turn_on(project, files)
        except (ConfigError, OSError) as e:
            return Said(False, (f"claude-code: failed: the mask: {e}",))
        lines = [
            f"claude-code: note: {rule} makes Claude Code's sandbox deny that file instead of"
            " masking it (your app cannot read it there); take the rule out to let it"
            for rule in _overriding_rules(project, machine)
        ]
        count = f"{len(files)} file{'s' if len(files) != 1 else ''} offprompt wrote"
        lines.append(
            f"claude-code: masked: {count} here, and every later write, in {shown} (TLS"
            " termination, one entry per file); the sandbox is on for this project in"
            f" {local_shown}"
        )
        if no_guard:
            lines.append(
                "claude-code: note: without the guard nothing stops Claude Code's own Read and"
                " Grep tools, which its sandbox does not cover: they read the real values"
            )
        return Said(True, tuple(lines))

    def remove(self, place: MaskPlace) -> Said:
        project, machine = place.project, place.machine
        settings = user_settings(machine.home, machine.environ)
        shown = machine.shown(settings)
        local = local_settings(project)
        try:
            done = Mask(place.record, settings, shown).turn_off(project)
            if done and not local.exists():
                gitignore.release(project, local, machine.shown(local))
        except (ConfigError, OSError) as e:
            return Said(False, (f"claude-code: failed: the mask: {e}",))
        if done:
            return Said(
                True, (f"claude-code: took the mask out of {shown} and {machine.shown(local)}",)
            )
        return Said(True, ("claude-code: no mask for this project",))

    def might_cover(self, place: MaskPlace) -> bool:
        # What init added for each project is in the record (mask.json): no record, no mask.
        return place.record.exists()

    def keep(self, place: MaskPlace, file: Path, names: Iterable[str], whole: bool) -> None:
        claude_settings.keep_entry(place.record, place.project, file, names, whole)

    def check(self, place: MaskPlace) -> MaskState | None:
        machine = place.machine
        found = claude_settings.check(
            place.record, place.project, machine.which, machine.platform, machine.shown
        )
        return None if found is None else MaskState(self.kind, *found)


def _overriding_rules(project: Path, machine: Machine) -> list[str]:
    """`Read(...)` deny rules (ours taken out by now) in the settings that apply here: Claude
    Code makes each a sandbox denial that overrides a mask of the same file."""
    out = []
    for path in (
        user_settings(machine.home, machine.environ),
        project / ".claude" / "settings.json",
        local_settings(project),
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
