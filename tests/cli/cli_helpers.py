"""Values and helpers shared by the CLI tests (imported as `cli_helpers`)."""

import os
import stat
from pathlib import Path

from offprompt.hosts import ServerCommand

# What `--command` gives in most tests, so expected configs do not depend on this machine.
COMMAND = "/opt/offprompt/bin/offprompt serve"
SERVER = ServerCommand("/opt/offprompt/bin/offprompt", ("serve",))
FIXTURES = Path(__file__).parent / "fixtures"


def snapshot(*roots: Path) -> dict[str, tuple[str, bytes | str | None, int]]:
    """Every file, folder and link under `roots`: kind, content or target, and mode."""
    seen: dict[str, tuple[str, bytes | str | None, int]] = {}
    for root in roots:
        for path in sorted([root, *root.rglob("*")]):
            st = path.lstat()
            mode = stat.S_IMODE(st.st_mode)
            if path.is_symlink():
                seen[str(path)] = ("link", os.readlink(path), 0)
            elif path.is_dir():
                seen[str(path)] = ("dir", None, mode)
            else:
                seen[str(path)] = ("file", path.read_bytes(), mode)
    return seen
