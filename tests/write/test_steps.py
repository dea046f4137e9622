"""The Submitter runs the steps it is handed (write/steps.py): a provider checker, a destination
sender, a mask keeper and a journal. Each fake here fails in its own way, and the write must then
do what DESIGN says of that step: refuse before a byte is written, or write and say what did not
happen, never leave the request claimed, and never put the value where it does not belong."""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import pytest
from fake_programs import FakePrograms

from offprompt.errors import CheckRejected, ValidationFailed
from offprompt.sinks import destinations
from offprompt.sinks.destinations import Planned
from offprompt.sinks.destinations.github import GithubSpec
from offprompt.spec import DestinationResult, SecretSpec, SinkSpec, Verdict
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import Journal, JournalEntry
from offprompt.write.steps import DestinationSender, JournalStep, MaskKeeper, ProviderChecker
from offprompt.write.submit import Submitter


class RefusingChecker:
    """A provider that refuses every key it is asked about."""

    def __init__(self, on: bool = True) -> None:
        self.on = on
        self.asked: list[str] = []

    def enabled(self, env: Mapping[str, str]) -> bool:
        return self.on

    async def verdicts(
        self,
        secrets: Sequence[SecretSpec],
        values: Mapping[str, str],
        names: Sequence[str],
        env: Mapping[str, str],
    ) -> Mapping[str, Verdict]:
        self.asked += names
        return {name: Verdict("rejected", "Acme refused this key (401)") for name in names}


class TroubledMask:
    """A masked project whose mask cannot be brought up to date."""

    def __init__(self) -> None:
        self.kept: list[tuple[Path, Path, Path, tuple[str, ...], bool, Mapping[str, str]]] = []
        self.asked: list[Mapping[str, str]] = []

    def __call__(
        self,
        record: Path,
        project: Path,
        file: Path,
        names: tuple[str, ...],
        whole: bool,
        env: Mapping[str, str],
    ) -> str | None:
        self.kept.append((record, project, file, names, whole, env))
        return "The values are written, but the mask could not be brought up to date"

    def covers(self, record: Path, project: Path, env: Mapping[str, str]) -> bool:
        self.asked.append(env)
        return True


class BrokenMask:
    """A keeper that fails outright, both when asked whether the project is masked and after."""

    def covers(self, record: Path, project: Path, env: Mapping[str, str]) -> bool:
        raise RuntimeError(f"a keeper that fails outright, in {project}")

    def __call__(
        self,
        record: Path,
        project: Path,
        file: Path,
        names: tuple[str, ...],
        whole: bool,
        env: Mapping[str, str],
    ) -> str | None:
        raise RuntimeError(f"a keeper that fails outright, in {file}")


broken_mask = BrokenMask()


class FailingJournal:
    """A journal on a full disk."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, entry: JournalEntry) -> None:
        raise OSError(28, "No space left on device")

    def records_file_sink(self, path: Path) -> bool:
        return False  # an empty journal: nothing recorded yet


class RefusingSender:
    """Destinations whose programs would not take any value as it is, and could not run."""

    def check_values(
        self, planned: Sequence[Planned], values: Mapping[str, str], ticked: Collection[int]
    ) -> Mapping[str, str]:
        return {name: "gh would change this value" for name in values}

    def send(
        self,
        project: Path,
        planned: Sequence[Planned],
        values: Mapping[str, str],
        ticked: Collection[int],
        *,
        env: Mapping[str, str] | None = None,
    ) -> tuple[DestinationResult, ...]:
        raise RuntimeError("could not start gh")


class CrashingSender(RefusingSender):
    def check_values(
        self, planned: Sequence[Planned], values: Mapping[str, str], ticked: Collection[int]
    ) -> Mapping[str, str]:
        return {}


def test_the_fakes_are_the_steps_the_submitter_takes() -> None:
    """mypy holds each fake to its interface; this says so where a reader looks first."""
    steps: tuple[ProviderChecker, MaskKeeper, MaskKeeper, DestinationSender, JournalStep] = (
        RefusingChecker(),
        TroubledMask(),
        broken_mask,
        RefusingSender(),
        FailingJournal(Path("j")),
    )
    assert len(steps) == 5


def make(
    store: RequestStore,
    project: Path,
    *,
    sink: SinkSpec | None = None,
    also: tuple[Planned, ...] = (),
) -> RequestRecord:
    return store.create(
        (SecretSpec("API_KEY"),),
        sink or SinkSpec(),
        project,
        "The app needs it",
        ttl=300,
        client="Test Agent",
        also=also,
    )


def journal_lines(journal: Journal) -> list[str]:
    return journal.path.read_text().splitlines() if journal.path.exists() else []


async def test_a_refusing_checker_stops_the_write_before_a_byte(
    tmp_path: Path, project: Path, canary: str
) -> None:
    """The checker handed in is the one asked; its refusal raises CheckRejected with nothing
    written nor journaled, the request left open for another try; `anyway` then writes and
    records the refusal in `checked`."""
    store = RequestStore()
    journal = Journal(tmp_path / "state" / "journal.jsonl")
    checker = RefusingChecker()
    submitter = Submitter(store, journal, checker=checker)
    req = make(store, project)
    with pytest.raises(CheckRejected) as caught:
        await submitter.submit(req, {"API_KEY": canary}, check=True)
    assert {"API_KEY": "rejected"} == {n: v.status for n, v in caught.value.verdicts.items()}
    assert canary not in str(caught.value)
    assert not (project / ".env").exists()
    assert [] == journal_lines(journal)
    assert "awaiting" == req.status
    outcome = await submitter.submit(req, {"API_KEY": canary}, check=True, anyway=True)
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"
    assert (("API_KEY", "rejected"),) == outcome.checked
    assert ["API_KEY", "API_KEY"] == checker.asked


async def test_a_checker_that_is_off_is_never_asked(tmp_path: Path, project: Path) -> None:
    """`enabled` False (OFFPROMPT_CHECK=off): the write goes ahead and every name is skipped,
    however the checker would have answered; the page is told no box is offered."""
    store = RequestStore()
    checker = RefusingChecker(on=False)
    submitter = Submitter(store, Journal(tmp_path / "j.jsonl"), checker=checker)
    assert not submitter.checks_on
    outcome = await submitter.submit(make(store, project), {"API_KEY": "v"}, check=True)
    assert (("API_KEY", "skipped"),) == outcome.checked
    assert [] == checker.asked


@pytest.mark.parametrize(
    ("sink", "file", "whole"),
    [(SinkSpec(), ".env", False), (SinkSpec("file", "key.txt"), "key.txt", True)],
)
async def test_a_mask_problem_is_reported_and_the_write_stands(
    tmp_path: Path, project: Path, canary: str, sink: SinkSpec, file: str, whole: bool
) -> None:
    """The keeper is asked about the file just written, with the record beside the journal and
    the environment the write was handed; its problem goes into the outcome, the write stays
    and the request is closed and journaled."""
    store = RequestStore()
    journal = Journal(tmp_path / "state" / "journal.jsonl")
    mask = TroubledMask()
    req = make(store, project, sink=sink)
    env = {"HOME": str(tmp_path / "another-home"), "OFFPROMPT_CHECK": "off"}
    outcome = await Submitter(store, journal, env, mask=mask).submit(req, {"API_KEY": canary})
    assert outcome.mask_problem is not None
    assert "mask could not" in outcome.mask_problem
    assert canary in (project / file).read_text()
    assert ("written", outcome) == (req.status, req.outcome)
    assert 1 == len(journal_lines(journal))
    record = tmp_path / "state" / "mask.json"
    assert [(record, project, project / file, ("API_KEY",), whole, env)] == mask.kept
    assert [env] == mask.asked


async def test_a_keeper_that_fails_outright_is_a_mask_problem_not_a_stuck_request(
    tmp_path: Path, project: Path, canary: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A keeper that raises (its message naming the file) leaves the value written and the
    request closed as written, and says the mask is not up to date by the error's class only."""
    caplog.set_level(logging.DEBUG, logger="offprompt")
    store = RequestStore()
    req = make(store, project)
    submitter = Submitter(store, Journal(tmp_path / "j.jsonl"), mask=broken_mask)
    outcome = await submitter.submit(req, {"API_KEY": canary})
    assert outcome.mask_problem is not None
    assert "RuntimeError" in outcome.mask_problem
    assert "outright" not in outcome.mask_problem
    assert "written" == req.status
    assert "outright" not in caplog.text
    assert canary not in caplog.text


async def test_without_a_keeper_no_mask_is_kept(tmp_path: Path, project: Path) -> None:
    """A Submitter built without a mask keeper (the page's own tests) keeps none, even beside a
    mask record: the agents' code is never reached from this room."""
    (tmp_path / "mask.json").write_text("{}")
    store = RequestStore()
    outcome = await Submitter(store, Journal(tmp_path / "j.jsonl")).submit(
        make(store, project), {"API_KEY": "v"}
    )
    assert outcome.mask_problem is None


async def test_a_failing_journal_leaves_the_write_done(
    tmp_path: Path, project: Path, canary: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A journal that cannot be appended to is logged, by its class, never turned into a failed
    write the person would retry: the file holds the value, the request is written."""
    caplog.set_level(logging.DEBUG, logger="offprompt")
    store = RequestStore()
    req = make(store, project)
    journal = FailingJournal(tmp_path / "state" / "journal.jsonl")
    outcome = await Submitter(store, journal).submit(req, {"API_KEY": canary})
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"
    assert ("written", outcome) == (req.status, req.outcome)
    assert "journal: could not record" in caplog.text
    assert "OSError" in caplog.text
    assert canary not in caplog.text


@pytest.fixture
def planned(linked: Path, fakes: FakePrograms) -> tuple[Planned, ...]:
    return destinations.plan(linked, [GithubSpec()], ["API_KEY"], env=fakes.env())


async def test_a_sender_that_refuses_a_value_stops_the_write(
    tmp_path: Path, linked: Path, planned: tuple[Planned, ...], canary: str
) -> None:
    """The sender's own check runs before anything is written: its reason is the field's."""
    store = RequestStore()
    req = make(store, linked, also=planned)
    submitter = Submitter(store, Journal(tmp_path / "j.jsonl"), sender=RefusingSender())
    with pytest.raises(ValidationFailed) as caught:
        await submitter.submit(req, {"API_KEY": canary}, also=[0])
    assert {"API_KEY": ["gh would change this value"]} == caught.value.errors
    assert not (linked / ".env").exists()
    assert "awaiting" == req.status


async def test_a_sender_that_crashes_is_a_failed_destination_not_an_undone_write(
    tmp_path: Path, linked: Path, planned: tuple[Planned, ...], canary: str
) -> None:
    """The write stands; each destination says `failed`, without the value."""
    store = RequestStore()
    req = make(store, linked, also=planned)
    submitter = Submitter(store, Journal(tmp_path / "j.jsonl"), sender=CrashingSender())
    outcome = await submitter.submit(req, {"API_KEY": canary}, also=[0])
    assert (linked / ".env").read_text() == f"API_KEY={canary}\n"
    assert [("github", "failed")] == [(d.kind, d.status) for d in outcome.destinations]
    assert canary not in repr(outcome.destinations)
    assert "written" == req.status
