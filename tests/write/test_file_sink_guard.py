"""DESIGN §12 "Never a name from inside a value", at the write: a file a file sink wrote holds one
value as a whole, so keys are never written into it as a dotenv file, wherever it has been
moved, renamed or linked to (the journal knows it by path and by device and inode). Otherwise
the write's `file_keys` would list names python-dotenv reads inside the value (a padded base64
seed reads as `SEED=`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from offprompt.errors import WriteError
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

SEED = "QUJDREVGR0g="  # base64 with padding: python-dotenv reads `QUJDREVGR0g` as a key


@pytest.fixture
def submitter(tmp_path: Path) -> Submitter:
    store = RequestStore()
    return Submitter(store, Journal(tmp_path / "state" / "journal.jsonl"))


async def write(submitter: Submitter, project: Path, sink: SinkSpec, **values: str) -> list[str]:
    store = submitter._store
    req = store.create([SecretSpec(n) for n in values], sink, project, "Needed", ttl=60, client="t")
    outcome = await submitter.submit(req, values)
    return list(outcome.file_keys)


@pytest.mark.parametrize("move", ["rename", "hard link"])
async def test_keys_are_never_written_into_a_moved_file_sink(
    submitter: Submitter, project: Path, move: str, canary: str
) -> None:
    """The seed written as a file sink, then renamed (or hard-linked) to a dotenv name: a dotenv
    write into it is refused, the file is left as it was, and no name from the seed is listed."""
    await write(submitter, project, SinkSpec(kind="file", path="seed.txt"), SEED_KEY=SEED)
    moved = project / ".env.seed"
    (os.rename if move == "rename" else os.link)(project / "seed.txt", moved)
    with pytest.raises(WriteError) as refused:
        await write(submitter, project, SinkSpec(path=".env.seed"), API_KEY=canary)
    assert "QUJDREVGR0g" not in str(refused.value)
    assert moved.read_text() == SEED
    assert canary not in str(refused.value)


async def test_a_dotenv_file_of_its_own_is_written_as_before(
    submitter: Submitter, project: Path, canary: str
) -> None:
    """A dotenv file no file sink wrote is written as usual."""
    keys = await write(submitter, project, SinkSpec(path=".env.seed"), API_KEY=canary)
    assert keys == ["API_KEY"]
