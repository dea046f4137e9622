"""Where offprompt keeps its own files: the journal and, beside it, the mask's record.

A leaf (the standard library, and platformdirs only when no folder is set): the write, the
agents' installers, the doctor and the guard all find the same place without importing one
another.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

__all__ = ["JOURNAL_NAME", "MASK_RECORD", "journal_path"]

JOURNAL_NAME: Final = "journal.jsonl"
MASK_RECORD: Final = "mask.json"
"""Beside the journal: what `init --mask` and the writes added to the agents' settings."""


def journal_path(env: Mapping[str, str] | None = None) -> Path:
    """`$OFFPROMPT_STATE_DIR/journal.jsonl` in `env` (default: the process environment), else
    the platform's user state dir for offprompt."""
    state_dir = (os.environ if env is None else env).get("OFFPROMPT_STATE_DIR", "").strip()
    if state_dir:
        return Path(state_dir).expanduser() / JOURNAL_NAME
    import platformdirs

    return Path(platformdirs.user_state_dir("offprompt", appauthor=False)) / JOURNAL_NAME
