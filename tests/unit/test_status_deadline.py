"""DESIGN §12: one deadline per call. A status call that reads the target and the example file
ends both reads by one deadline counted from the call's start, so a slow target leaves the
example less time rather than the call twice the budget."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from offprompt import status
from offprompt.sinks import dotenv_read


def test_the_target_and_the_example_share_the_calls_deadline(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same size, so the same budget: both reads get the very same deadline, however long
    the first one took."""
    (project / ".env").write_text("API_KEY=1\n")
    (project / ".env.example").write_text("API_KEY=2\n")
    seen: list[float] = []
    real = dotenv_read.read

    def slow_read(text: str, *, deadline: float) -> Any:
        seen.append(deadline)
        time.sleep(0.2)  # a read that takes its time: a per-read deadline would move by this
        return real(text, deadline=deadline)

    monkeypatch.setattr(dotenv_read, "read", slow_read)
    status.report(project, ".env", journal=project / "no-journal.jsonl")
    assert len(seen) == 2
    assert seen[1] - seen[0] == pytest.approx(0, abs=0.05)
