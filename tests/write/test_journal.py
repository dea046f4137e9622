"""The journal: private JSON lines, newest first, corrupt lines skipped, never a value."""

import dataclasses
import json
import os
import stat
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from offprompt.spec import SecretSpec, SinkSpec, WriteOutcome
from offprompt.store import RequestStore
from offprompt.write.journal import Journal, JournalEntry, default_path

FIELDS = ["at", "project", "file", "names", "kept", "fingerprint", "client", "request_id"]


def entry(n: int = 0, **changes: object) -> JournalEntry:
    """A plausible entry, numbered so order can be checked."""
    base = JournalEntry(
        at=f"2026-11-30T02:41:{n:02d}Z",
        project="/home/ada/shop",
        file=".env",
        names=("STRIPE_SECRET_KEY", "SESSION_SECRET"),
        kept=("SESSION_SECRET",),
        fingerprint="🍋 🥝 🌮 🧀",
        client="Claude Code",
        request_id=f"req{n:09d}",
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_zero() -> Iterator[None]:
    """Run with umask 0, so any private bits must come from the journal itself."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_default_path_is_in_offprompt_state_dir(isolated_env: Path) -> None:
    """OFFPROMPT_STATE_DIR decides where the journal lives."""
    assert isolated_env / "state" / "journal.jsonl" == default_path()
    assert default_path() == Journal().path


def test_default_path_falls_back_to_user_state_dir(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without OFFPROMPT_STATE_DIR the journal goes to the platform's user state dir."""
    monkeypatch.delenv("OFFPROMPT_STATE_DIR")
    expected = isolated_env / ".local" / "state" / "offprompt" / "journal.jsonl"
    assert expected == default_path()


def test_append_creates_a_0600_file_in_0700_folders(tmp_path: Path, umask_zero: None) -> None:
    """A new journal file is 0600 and the folders made for it are 0700, whatever the umask."""
    path = tmp_path / "a" / "b" / "journal.jsonl"
    Journal(path).append(entry())
    assert 0o600 == mode(path)
    assert 0o700 == mode(tmp_path / "a")
    assert 0o700 == mode(tmp_path / "a" / "b")


def test_append_leaves_existing_folders_alone(tmp_path: Path) -> None:
    """A folder that already existed (say, a shared parent) keeps its mode."""
    tmp_path.chmod(0o755)
    Journal(tmp_path / "journal.jsonl").append(entry())
    assert 0o755 == mode(tmp_path)


def test_append_tightens_a_loose_existing_file(tmp_path: Path) -> None:
    """An existing journal readable by others is made 0600 on the next append."""
    path = tmp_path / "journal.jsonl"
    path.write_text(entry(1).to_json() + "\n")
    path.chmod(0o644)
    Journal(path).append(entry(2))
    assert 0o600 == mode(path)
    assert [entry(2), entry(1)] == Journal(path).read()


def test_append_writes_one_line_per_entry(tmp_path: Path) -> None:
    """Each entry is one newline-terminated line of JSON."""
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    for n in range(3):
        journal.append(entry(n))
    lines = path.read_bytes().split(b"\n")
    assert 4 == len(lines)
    assert b"" == lines[-1]
    assert [entry(n) for n in range(3)] == [JournalEntry.from_json(x.decode()) for x in lines[:3]]


def test_read_is_newest_first(tmp_path: Path) -> None:
    """read() returns the last appended entry first."""
    journal = Journal(tmp_path / "journal.jsonl")
    for n in range(5):
        journal.append(entry(n))
    assert [entry(n) for n in reversed(range(5))] == journal.read()


def test_read_without_a_journal_is_empty(tmp_path: Path) -> None:
    """No journal file yet means no entries, not an error."""
    assert [] == Journal(tmp_path / "missing" / "journal.jsonl").read()


@pytest.mark.parametrize(
    "bad",
    [
        b"not json",
        b'{"at": "2026-11-30T02:41:07Z"',
        b"[1, 2, 3]",
        b"null",
        json.dumps({k: v for k, v in entry().to_dict().items() if k != "request_id"}).encode(),
        json.dumps({**entry().to_dict(), "names": "STRIPE_SECRET_KEY"}).encode(),
        json.dumps({**entry().to_dict(), "names": [1]}).encode(),
        json.dumps({**entry().to_dict(), "fingerprint": 7}).encode(),
        json.dumps({**entry().to_dict(), "at": None}).encode(),
        b"\xff\xfe\x00garbage",
        b"   ",
    ],
)
def test_read_skips_a_corrupt_line(tmp_path: Path, bad: bytes) -> None:
    """A line that is not a well-formed entry is skipped; the others are read."""
    path = tmp_path / "journal.jsonl"
    path.write_bytes(
        entry(1).to_json().encode() + b"\n" + bad + b"\n" + entry(2).to_json().encode()
    )
    assert [entry(2), entry(1)] == Journal(path).read()


def test_read_ignores_unknown_keys(tmp_path: Path) -> None:
    """A line written by a newer version with more keys still reads."""
    path = tmp_path / "journal.jsonl"
    path.write_text(json.dumps({**entry().to_dict(), "sink": "dotenv"}) + "\n")
    assert [entry()] == Journal(path).read()


def test_entry_has_exactly_the_contract_fields() -> None:
    """An entry carries the eight fields `offprompt fingerprints --json` documents, in order,
    `destinations` (DESIGN §13) and `checked` (§16) only when the write had some, and `sink`
    only for a file sink's write (DESIGN §12 names such a file alone), with its `inode` in the
    line (not in `fingerprints --json`) so the file is known wherever it goes."""
    fields = [*FIELDS, "destinations", "checked", "sink", "inode"]
    assert fields == [f.name for f in dataclasses.fields(JournalEntry)]
    assert FIELDS == list(json.loads(entry().to_json()))
    sent = entry(destinations=(("github", "acme/web", "sent"),))
    assert [*FIELDS, "destinations"] == list(json.loads(sent.to_json()))
    whole = entry(sink="file")
    assert [*FIELDS, "sink"] == list(json.loads(whole.to_json()))
    assert whole == JournalEntry.from_json(whole.to_json())
    known = entry(sink="file", inode=(64769, 1234567))
    assert [*FIELDS, "sink", "inode"] == list(json.loads(known.to_json()))
    assert [*FIELDS, "sink"] == list(known.to_dict())
    assert known == JournalEntry.from_json(known.to_json())
    checked = entry(checked=(("STRIPE_KEY", "rejected"), ("OPENAI_API_KEY", "ok")))
    line = json.loads(checked.to_json())
    assert [*FIELDS, "checked"] == list(line)
    assert {"STRIPE_KEY": "rejected", "OPENAI_API_KEY": "ok"} == line["checked"]
    assert checked == JournalEntry.from_json(checked.to_json())


@pytest.mark.parametrize("bad", [[], {"A": "fine"}, {"A": 1}])
def test_a_checked_field_that_is_not_names_to_statuses_is_a_corrupt_line(bad: object) -> None:
    """`checked` holds only the four §16 statuses: anything else makes the line unreadable."""
    with pytest.raises(ValueError, match="checked"):
        JournalEntry.from_json(json.dumps({**entry().to_dict(), "checked": bad}))


def test_destinations_round_trip_with_kind_target_and_status_only() -> None:
    """The journal keeps each destination's kind, target and status, never its detail."""
    e = entry(destinations=(("github", "acme/web", "sent"), ("fly", "app", "failed")))
    assert json.loads(e.to_json())["destinations"] == [
        {"kind": "github", "target": "acme/web", "status": "sent"},
        {"kind": "fly", "target": "app", "status": "failed"},
    ]
    assert e == JournalEntry.from_json(e.to_json())


def test_json_round_trips() -> None:
    """to_json() and from_json() are inverse, None fields and empty tuples included."""
    for e in (entry(), entry(fingerprint=None, client=None, kept=())):
        assert e == JournalEntry.from_json(e.to_json())


def test_json_is_one_ascii_line_even_for_odd_paths() -> None:
    """Non-ASCII and undecodable path characters are escaped, so a line never breaks."""
    e = entry(project="/home/zoë/项目\n/x\udcff", file="conf/.env\u2028")
    line = e.to_json()
    assert line.isascii()
    assert "\n" not in line
    assert e == JournalEntry.from_json(line)


def test_frozen() -> None:
    """An entry cannot be changed after it is made."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry().file = "other"  # type: ignore[misc]


def test_from_outcome_takes_names_file_and_fingerprint() -> None:
    """from_outcome() fills each field from the request and its outcome."""
    store = RequestStore()
    request = store.create(
        (SecretSpec("STRIPE_SECRET_KEY"), SecretSpec("SESSION_SECRET")),
        SinkSpec(),
        Path("/home/ada/shop"),
        "Payments need Stripe.",
        ttl=300,
        client="Codex",
    )
    outcome = WriteOutcome(
        file="config/.env",
        names=("STRIPE_SECRET_KEY", "SESSION_SECRET"),
        added=("STRIPE_SECRET_KEY",),
        kept=("SESSION_SECRET",),
        file_keys=("A", "STRIPE_SECRET_KEY", "SESSION_SECRET"),
        fingerprint="🍋 🥝 🌮 🧀",
    )
    at = datetime(2026, 11, 30, 2, 41, 7, 999, tzinfo=UTC)
    expected = JournalEntry(
        at="2026-11-30T02:41:07Z",
        project="/home/ada/shop",
        file="config/.env",
        names=("STRIPE_SECRET_KEY", "SESSION_SECRET"),
        kept=("SESSION_SECRET",),
        fingerprint="🍋 🥝 🌮 🧀",
        client="Codex",
        request_id=request.id,
    )
    assert expected == JournalEntry.from_outcome(request, outcome, at=at)


def test_from_outcome_writes_utc() -> None:
    """A time in another zone is recorded in UTC; the default is now, in UTC."""
    store = RequestStore()
    request = store.create((SecretSpec("A"),), SinkSpec(), Path("/p"), "r", ttl=300)
    outcome = WriteOutcome(file=".env", names=("A",))
    at = datetime(2026, 11, 30, 3, 41, 7, tzinfo=timezone(timedelta(hours=1)))
    assert "2026-11-30T02:41:07Z" == JournalEntry.from_outcome(request, outcome, at=at).at
    now = JournalEntry.from_outcome(request, outcome).at
    parsed = datetime.strptime(now, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert abs((datetime.now(UTC) - parsed).total_seconds()) < 5


def test_from_outcome_refuses_a_naive_time() -> None:
    """A time without a zone could be anything; it is refused."""
    store = RequestStore()
    request = store.create((SecretSpec("A"),), SinkSpec(), Path("/p"), "r", ttl=300)
    with pytest.raises(ValueError, match="timezone"):
        JournalEntry.from_outcome(
            request, WriteOutcome(file=".env", names=("A",)), at=datetime(2026, 1, 1)
        )


def test_nothing_but_names_reaches_the_journal(tmp_path: Path, canary: str) -> None:
    """Reason, token, nonce and the delivery state (link, seal key) never reach the file."""
    store = RequestStore()
    request = store.create(
        (SecretSpec("STRIPE_SECRET_KEY"),),
        SinkSpec(),
        Path("/home/ada/shop"),
        f"The agent claims {canary}",
        ttl=300,
        client="Codex",
    )
    request.delivery.url = f"http://127.0.0.1:1/r/{request.token}#k={canary}"
    assert store.claim(request)
    outcome = WriteOutcome(file=".env", names=("STRIPE_SECRET_KEY",), fingerprint="🍋 🥝 🌮 🧀")
    journal = Journal(tmp_path / "journal.jsonl")
    # The journal entry is made while the request still holds everything, to be strict.
    e = JournalEntry.from_outcome(request, outcome)
    store.complete(request, outcome)
    journal.append(e)
    text = (tmp_path / "journal.jsonl").read_text()
    for secret in (canary, request.token, request.nonce, "The agent claims"):
        assert secret not in text
        assert secret not in repr(journal.read())
    assert [e] == journal.read()


def test_concurrent_appends_keep_every_line(tmp_path: Path) -> None:
    """Many writers appending at once (one per server) leave only whole, parseable lines."""
    path = tmp_path / "journal.jsonl"

    def write(t: int) -> None:
        journal = Journal(path)
        for n in range(25):
            journal.append(entry(n, request_id=f"t{t}n{n}"))

    threads = [threading.Thread(target=write, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = {e.request_id for e in Journal(path).read()}
    assert {f"t{t}n{n}" for t in range(8) for n in range(25)} == ids
    assert 200 == len(path.read_text().splitlines())
