"""The Submitter's mask step (DESIGN §15), through the keeper it was handed (write.steps): whether
a project is masked, so its file is written in place, and the mask kept after the write, with
what a failure of each means. The keeper runs on the environment the write was handed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from offprompt.spec import WriteOutcome
    from offprompt.store import RequestRecord
    from offprompt.write.steps import MaskKeeper

__all__ = ["MASK_FAILED", "MaskStep"]

MASK_FAILED: Final = (
    "The values are written, but the mask could not be brought up to date for them ({why}):"
    " until `offprompt init --mask` runs again, the agent's sandboxed commands may read them."
)  # when the mask keeper itself failed (it reports its own problems)

_log = logging.getLogger("offprompt")


@dataclass(frozen=True)
class MaskStep:
    """`keeper` (None: no mask is kept), the mask's `record` beside the journal, and `env`, the
    environment the write was handed (None: the process's, when the step runs)."""

    keeper: MaskKeeper | None
    record: Path
    env: Mapping[str, str] | None

    def in_place(self, request: RequestRecord) -> bool:
        """Whether the project is masked, so its file is written in place; when the keeper
        cannot tell, yes: a write in place is all or nothing too."""
        if self.keeper is None or request.sink.kind == "none":
            return False
        try:
            return self.keeper.covers(self.record, request.project, self._environ())
        except Exception as exc:
            _log.warning("request %s: masked? (%s)", request.id, type(exc).__name__)
            return True

    def keep(self, request: RequestRecord, outcome: WriteOutcome) -> str | None:
        """The written file's mask entry made exact: None when done or not masked (the
        keeper's to say; a `none` sink wrote no file), else what the result tells the person."""
        if self.keeper is None or not outcome.file:
            return None
        file, whole = request.project / outcome.file, request.sink.kind == "file"
        try:
            return self.keeper(
                self.record, request.project, file, outcome.names, whole, self._environ()
            )
        except Exception as exc:  # the file is written: say the mask is not, by its class only
            _log.error("request %s: the mask keeper failed (%s)", request.id, type(exc).__name__)
            return MASK_FAILED.format(why=type(exc).__name__)

    def _environ(self) -> Mapping[str, str]:
        return self.env if self.env is not None else os.environ
