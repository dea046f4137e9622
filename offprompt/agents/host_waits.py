"""What the agents' trust files say, read the way each host's `waits` needs (DESIGN §9): a
JSON settings file, and the keys a folder's trust is recorded under. The waits themselves are
each host's own (`Agent.waits`, in its module); the types are interface.py's.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from offprompt.agents import files
from offprompt.agents.interface import SERVER_NAME, Hook, HostWaits, Machine, Wait, WaitKind
from offprompt.configedit import jsonc
from offprompt.errors import ConfigError

__all__ = ["Hook", "HostWaits", "Wait", "WaitKind", "json_file", "names_us", "project_keys"]


def names_us(value: object) -> bool:
    """`value` is a list of server names that holds ours."""
    return isinstance(value, list) and SERVER_NAME in value


def json_file(path: Path, machine: Machine) -> dict[str, Any]:
    """The top-level object of a JSON (or JSONC) settings file; {} when it is absent or empty.
    ConfigError when it is not JSON."""
    shown = machine.shown(path)
    text = files.read_text(path, shown)
    if text is None or not text.strip():
        return {}
    try:
        value = jsonc.parse(text).root.value
    except jsonc.JsoncError as e:
        raise ConfigError(
            f"{shown} is not valid JSON ({e}); fix it, then run this again. Nothing was changed."
        ) from None
    return value if isinstance(value, dict) else {}


def project_keys(folder: Path) -> list[str]:
    """The folder, and the git work tree holding it: where agents record a project's trust."""
    keys = [str(folder)]
    for parent in (folder, *folder.parents):
        if (parent / ".git").exists():
            keys.append(str(parent))
            break
    return _unique(keys)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
