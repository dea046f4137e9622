"""The Submitter in two halves (DESIGN §17): `prepare` validates and asks the providers but
writes nothing and holds no claim; `commit` writes exactly what was prepared, with its
verdicts, and asks no provider again. `submit` is the two in one."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from dotenv import dotenv_values

from offprompt.crypto.fingerprint import fingerprint
from offprompt.errors import CheckRejected, RequestClosed, TrackedFile, ValidationFailed
from offprompt.spec import GenerateSpec, SecretSpec, SinkSpec, Verdict
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter


class CountingChecker:
    """A provider that answers `status` for every key, and counts how often it was asked."""

    def __init__(self, status: str = "ok") -> None:
        self.status = status
        self.asked = 0

    def enabled(self, env: Mapping[str, str]) -> bool:
        return True

    async def verdicts(
        self,
        secrets: Sequence[SecretSpec],
        values: Mapping[str, str],
        names: Sequence[str],
        env: Mapping[str, str],
    ) -> Mapping[str, Verdict]:
        self.asked += 1
        return {name: Verdict(self.status, "Acme said so") for name in names}  # type: ignore[arg-type]


@pytest.fixture
def store() -> RequestStore:
    return RequestStore()


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "state" / "journal.jsonl")


def make(store: RequestStore, project: Path, *secrets: SecretSpec) -> RequestRecord:
    return store.create(
        secrets or (SecretSpec("API_KEY"),),
        SinkSpec(),
        project,
        "The app needs it",
        ttl=300,
        remote=True,
    )


async def test_prepare_writes_nothing_and_leaves_the_request_open(
    store: RequestStore, journal: Journal, project: Path, canary: str
) -> None:
    """After prepare: no file, no journal, the request awaiting and unclaimed."""
    req = make(store, project)
    prepared = await Submitter(store, journal).prepare(req, {"API_KEY": canary})
    assert not (project / ".env").exists()
    assert not journal.path.exists()
    assert (req.status, req.claimed) == ("awaiting", False)
    assert prepared.supplied == ("API_KEY",)
    assert dict(prepared.values) == {"API_KEY": canary}
    assert canary not in repr(prepared)


async def test_commit_writes_what_was_prepared(
    store: RequestStore, journal: Journal, project: Path, canary: str
) -> None:
    """commit writes the prepared value, fingerprints it with the page's key, closes and
    journals the request, and the value is nowhere but the file."""
    req = make(store, project)
    submitter = Submitter(store, journal)
    key = bytes(range(32))
    prepared = await submitter.prepare(req, {"API_KEY": canary}, fp_key=key)
    outcome = await submitter.commit(req, prepared)
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    assert outcome.fingerprint == str(fingerprint(key, [("API_KEY", canary)]))
    assert (req.status, req.outcome) == ("written", outcome)
    assert canary not in journal.path.read_text()


async def test_commit_keeps_the_verdicts_and_asks_no_provider_again(
    store: RequestStore, journal: Journal, project: Path, canary: str
) -> None:
    """The provider is asked once, in prepare; the outcome's `checked` is what it said then."""
    checker = CountingChecker("unreachable")
    submitter = Submitter(store, journal, checker=checker)
    req = make(store, project)
    prepared = await submitter.prepare(req, {"API_KEY": canary}, check=True)
    outcome = await submitter.commit(req, prepared)
    assert checker.asked == 1
    assert outcome.checked == (("API_KEY", "unreachable"),)


async def test_prepare_raises_as_submit_does(
    store: RequestStore, journal: Journal, project: Path, canary: str
) -> None:
    """A missing value is ValidationFailed, a refused key CheckRejected; neither leaves a claim."""
    req = make(store, project, SecretSpec("API_KEY"), SecretSpec("OTHER"))
    submitter = Submitter(store, journal, checker=CountingChecker("rejected"))
    with pytest.raises(ValidationFailed) as failed:
        await submitter.prepare(req, {"API_KEY": canary})
    assert failed.value.errors == {"OTHER": ["Required"]}
    with pytest.raises(CheckRejected):
        await submitter.prepare(req, {"API_KEY": canary, "OTHER": canary + "2"}, check=True)
    prepared = await submitter.prepare(
        req, {"API_KEY": canary, "OTHER": canary + "2"}, check=True, anyway=True
    )
    assert prepared.checked == (("API_KEY", "rejected"), ("OTHER", "rejected"))
    assert (req.status, req.claimed) == ("awaiting", False)


async def test_generated_values_are_made_in_prepare_and_written_as_made(
    store: RequestStore, journal: Journal, project: Path, canary: str
) -> None:
    """An empty generated field is made once, in prepare: the held digest covers it, and
    commit writes that very value."""
    req = make(store, project, SecretSpec("API_KEY"), SecretSpec("SESSION", GenerateSpec()))
    submitter = Submitter(store, journal)
    prepared = await submitter.prepare(req, {"API_KEY": canary})
    assert prepared.server_made == ("SESSION",)
    await submitter.commit(req, prepared)
    assert dotenv_values(project / ".env")["SESSION"] == prepared.values["SESSION"]


async def test_commit_of_a_closed_request_writes_nothing(
    store: RequestStore, journal: Journal, project: Path, canary: str
) -> None:
    """A request cancelled after prepare: commit raises RequestClosed and writes nothing."""
    req = make(store, project)
    submitter = Submitter(store, journal)
    prepared = await submitter.prepare(req, {"API_KEY": canary})
    store.cancel(req)
    with pytest.raises(RequestClosed):
        await submitter.commit(req, prepared)
    assert not (project / ".env").exists()


@pytest.fixture
def tracked(project: Path) -> Path:
    """A project whose .env is tracked by git."""
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".env").write_text("OTHER=1\n")
    subprocess.run(["git", "add", ".env"], cwd=project, check=True)
    return project


async def test_a_failed_commit_leaves_the_request_open(
    store: RequestStore, journal: Journal, tracked: Path, canary: str
) -> None:
    """A tracked file without the person's leave: the sink refuses, nothing is written, and
    the request stays open and unclaimed for a new submission."""
    project = tracked
    req = make(store, project)
    submitter = Submitter(store, journal)
    prepared = await submitter.prepare(req, {"API_KEY": canary})
    with pytest.raises(TrackedFile):
        await submitter.commit(req, prepared)
    assert (req.status, req.claimed) == ("awaiting", False)
    assert canary not in (project / ".env").read_text()
