"""The one place that builds the process's Submitter hands it the real steps: the write room
keeps no mask of its own (write/steps.py), so a Submitter built here without the mask keeper
would leave a masked project's new values readable without a word."""

from __future__ import annotations

from pathlib import Path

from offprompt.collect.parts import Parts, mask_keeper
from offprompt.spec import SecretSpec, SinkSpec

from .harness import settings


async def test_the_process_submitter_keeps_the_mask(
    tmp_path: Path, project: Path, canary: str
) -> None:
    """A mask record beside the journal that cannot be read: the write stands, and the outcome
    says the mask could not be kept, naming the record, never the value."""
    state = tmp_path / "state"
    state.mkdir()
    (state / "mask.json").write_text("not json")
    parts = Parts.build(settings(state))
    req = parts.store.create(
        (SecretSpec("API_KEY"),), SinkSpec(), project, "r", ttl=300, client="t"
    )
    outcome = await parts.submitter.submit(req, {"API_KEY": canary})
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"
    assert outcome.mask_problem is not None
    assert "mask.json" in outcome.mask_problem
    assert canary not in outcome.mask_problem


def test_an_unmasked_project_is_left_alone(tmp_path: Path, project: Path) -> None:
    """No record and no Codex project config: nothing to keep, and nothing created."""
    record = tmp_path / "state" / "mask.json"
    keep = mask_keeper()
    assert keep(record, project, project / ".env", ("API_KEY",), False, {}) is None
    assert not record.exists()
    assert not (project / ".codex").exists()
