"""The dotenv files of a masked project whose values the mask does not hide (DESIGN §15 "Every
dotenv file in the project"): one another tool wrote (`vercel env pull`), or one holding a key
typed by hand beside offprompt's. `offprompt agents` names each as open.

The covered files are the guard's own answer (guard.masked.covered), so what `agents` says and
what the guard lets a sandboxed command read never differ.
"""

from __future__ import annotations

import json
import os

from offprompt.agents.mask.interface import MaskPlace
from offprompt.guard import disk, masked, protected

__all__ = ["open_dotenv", "open_line"]


def open_dotenv(place: MaskPlace) -> tuple[str, ...]:
    """The usual dotenv files under the project (as `/`-separated paths relative to it) that
    the mask does not show as stand-ins whole; none when the project has no mask record."""
    try:
        record = json.loads(place.record.read_bytes())
    except (OSError, ValueError):
        return ()
    projects = record.get("projects") if isinstance(record, dict) else None
    mine = projects.get(os.path.realpath(place.project)) if isinstance(projects, dict) else None
    if mine is None:
        return ()
    environ = {**place.machine.environ, "HOME": str(place.machine.home)}
    hidden = masked.covered(mine, environ)
    root = os.path.realpath(place.project)
    found = disk.dotenv_under(root, protected.is_dotenv, lambda _name: False)
    return tuple(
        sorted(
            os.path.relpath(path, root).replace(os.sep, "/")
            for path in found
            if os.path.realpath(path) not in hidden
        )
    )


def open_line(file: str, host: str) -> str:
    """What `agents` warns for one open file."""
    return (
        f"{file} holds values offprompt did not write: {host}'s sandbox shows them to the"
        " agent's commands as they are (the guard still blocks reading it by name); write them"
        " with offprompt, or move them out of the project"
    )
