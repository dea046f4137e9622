"""Submitter: the one path from submitted fields to disk, with real sinks on a tmp project."""

import base64
import binascii
import json
import logging
import subprocess
from pathlib import Path

import pytest
from dotenv import dotenv_values

from offprompt.crypto.fingerprint import fingerprint
from offprompt.crypto.tokens import new_fp_key
from offprompt.errors import RequestClosed, TrackedFile, ValidationFailed, WriteError
from offprompt.spec import Encoding, GenerateSpec, SecretSpec, SinkSpec
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import MAX_VALUE_BYTES, Submitter


@pytest.fixture
def store() -> RequestStore:
    return RequestStore()


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "state" / "journal.jsonl")


@pytest.fixture
def submitter(store: RequestStore, journal: Journal) -> Submitter:
    return Submitter(store, journal)


def make(
    store: RequestStore,
    project: Path,
    *secrets: SecretSpec,
    sink: SinkSpec | None = None,
) -> RequestRecord:
    return store.create(
        secrets or (SecretSpec("API_KEY"),),
        sink or SinkSpec(),
        project,
        "The app needs it",
        ttl=300,
        client="Test Agent",
    )


def env(project: Path) -> dict[str, str | None]:
    return dotenv_values(project / ".env")


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


async def test_typed_value_is_written_to_dotenv(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """A typed value lands in .env and the outcome names it as added."""
    req = make(store, project)
    outcome = await submitter.submit(req, {"API_KEY": canary})
    assert env(project) == {"API_KEY": canary}
    assert (outcome.file, outcome.names, outcome.added) == (".env", ("API_KEY",), ("API_KEY",))


async def test_request_is_written_after_submit(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """The store records the request as written, with the outcome."""
    req = make(store, project)
    outcome = await submitter.submit(req, {"API_KEY": canary})
    assert (req.status, req.outcome) == ("written", outcome)


async def test_fingerprint_equals_the_page_computation_under_the_same_key(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """With the page's fp_key, the server's four emoji are the ones the page computed."""
    req = make(store, project, SecretSpec("A"), SecretSpec("B"))
    key = new_fp_key()
    outcome = await submitter.submit(req, {"A": canary, "B": canary + "b"}, fp_key=key)
    assert outcome.fingerprint == str(fingerprint(key, [("A", canary), ("B", canary + "b")]))


async def test_fingerprint_is_made_with_a_server_key_when_the_page_sends_none(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """Without fp_key (no script) the server still reports four emoji."""
    outcome = await submitter.submit(make(store, project), {"API_KEY": canary})
    assert outcome.fingerprint is not None
    assert len(outcome.fingerprint.split(" ")) == 4


@pytest.mark.parametrize(
    "shape",
    ["  {} \n", "\t{}", "{}\n", "\n{}\n\n", "  {}"],
    ids=["spaces-and-newline", "leading-tab", "trailing-newline", "blank-lines", "leading-spaces"],
)
async def test_dotenv_values_are_written_exactly_with_their_surrounding_blanks(
    submitter: Submitter, store: RequestStore, project: Path, canary: str, shape: str
) -> None:
    """Blanks and line breaks around a value are kept, and the fingerprint covers them."""
    value = shape.format(canary)
    key = new_fp_key()
    outcome = await submitter.submit(make(store, project), {"API_KEY": value}, fp_key=key)
    assert env(project) == {"API_KEY": value}
    assert outcome.fingerprint == str(fingerprint(key, [("API_KEY", value)]))


async def test_dotenv_value_with_crlf_is_refused_with_the_file_sink_hint(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """A CRLF line break is not turned into LF: no .env carries it, so nothing is written."""
    with pytest.raises(ValidationFailed) as caught:
        await submitter.submit(make(store, project), {"API_KEY": f"{canary}\r\n"})
    (reason,) = caught.value.errors["API_KEY"]
    assert ("carriage return" in reason, 'sink: {kind: "file"}' in reason) == (True, True)
    assert (project / ".env").exists() is False


async def test_file_sink_writes_the_value_exactly_crlf_included(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """A file sink writes the value byte for byte: CRLF stays CRLF, blanks stay."""
    req = make(store, project, SecretSpec("KEY_PEM"), sink=SinkSpec("file", "key.pem"))
    value = f" -----\r\n{canary}\n-----\r\n\n"
    key = new_fp_key()
    outcome = await submitter.submit(req, {"KEY_PEM": value}, fp_key=key)
    assert (project / "key.pem").read_bytes() == value.encode()
    assert outcome.fingerprint == str(fingerprint(key, [("KEY_PEM", value)]))


@pytest.mark.parametrize("sent", ["", " \n", "\t \r\n"], ids=["empty", "blank", "crlf-blank"])
async def test_empty_required_value_is_refused(
    submitter: Submitter, store: RequestStore, project: Path, sent: str
) -> None:
    """An empty or blank-only non-generated field fails with "Required" under its name."""
    with pytest.raises(ValidationFailed) as caught:
        await submitter.submit(make(store, project), {"API_KEY": sent})
    assert caught.value.errors == {"API_KEY": ["Required"]}


async def test_every_failing_field_is_reported_at_once(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """Errors of all fields come back together, in request order."""
    req = make(store, project, SecretSpec("A"), SecretSpec("B"), SecretSpec("C"))
    with pytest.raises(ValidationFailed) as caught:
        await submitter.submit(req, {"B": canary + "${HOME}"})
    assert list(caught.value.errors) == ["A", "B", "C"]


async def test_failed_validation_leaves_the_request_open_and_the_file_absent(
    submitter: Submitter, store: RequestStore, project: Path
) -> None:
    """After a refusal the claim is released and nothing is written."""
    req = make(store, project)
    with pytest.raises(ValidationFailed):
        await submitter.submit(req, {})
    assert (req.status, req.claimed, (project / ".env").exists()) == ("awaiting", False, False)


async def test_value_over_16_kib_is_refused(
    submitter: Submitter, store: RequestStore, project: Path
) -> None:
    """A value one byte over 16 KiB is refused as too long."""
    with pytest.raises(ValidationFailed) as caught:
        await submitter.submit(make(store, project), {"API_KEY": "a" * (MAX_VALUE_BYTES + 1)})
    assert caught.value.errors == {"API_KEY": ["Too long: at most 16 KiB"]}


async def test_value_of_exactly_16_kib_is_written(
    submitter: Submitter, store: RequestStore, project: Path
) -> None:
    """The limit is inclusive and counted in UTF-8 bytes."""
    value = "é" * (MAX_VALUE_BYTES // 2)
    await submitter.submit(make(store, project), {"API_KEY": value})
    assert env(project) == {"API_KEY": value}


async def test_unsafe_value_is_reported_under_its_field_without_the_value(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """A value no dotenv form carries (`${...}`) fails under its name; the text omits it."""
    with pytest.raises(ValidationFailed) as caught:
        await submitter.submit(make(store, project), {"API_KEY": canary + "${HOME}"})
    assert list(caught.value.errors) == ["API_KEY"]
    assert canary not in str(caught.value) + repr(caught.value.errors)


async def test_unknown_fields_are_ignored(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """Fields that name no requested secret are neither written nor refused."""
    await submitter.submit(make(store, project), {"API_KEY": canary, "OTHER": "x", "nonce": "y"})
    assert env(project) == {"API_KEY": canary}


@pytest.mark.parametrize(
    ("encoding", "decode"),
    [
        ("base64url", lambda s: base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))),
        ("base64", lambda s: base64.b64decode(s, validate=True)),
        ("hex", binascii.unhexlify),
    ],
)
async def test_empty_generated_field_is_generated_by_the_server(
    submitter: Submitter, store: RequestStore, project: Path, encoding: Encoding, decode: object
) -> None:
    """An empty generated field gets `bytes` random bytes in its encoding, marked generated."""
    req = make(store, project, SecretSpec("SESSION_SECRET", generate=GenerateSpec(24, encoding)))
    outcome = await submitter.submit(req, {"SESSION_SECRET": ""})
    value = env(project)["SESSION_SECRET"]
    assert value is not None
    assert callable(decode)
    assert len(decode(value)) == 24
    assert (outcome.generated, outcome.fingerprint) == (("SESSION_SECRET",), None)


async def test_blank_generated_field_is_generated_by_the_server(
    submitter: Submitter, store: RequestStore, project: Path
) -> None:
    """A generated field holding only blanks counts as empty: the server makes the value."""
    req = make(store, project, SecretSpec("SESSION_SECRET", generate=GenerateSpec(16, "hex")))
    outcome = await submitter.submit(req, {"SESSION_SECRET": " \n"})
    value = env(project)["SESSION_SECRET"] or ""
    assert (len(bytes.fromhex(value)), outcome.generated, outcome.fingerprint) == (
        16,
        ("SESSION_SECRET",),
        None,
    )


async def test_base64url_generation_has_no_padding(
    submitter: Submitter, store: RequestStore, project: Path
) -> None:
    """base64url values are written without `=` padding."""
    req = make(store, project, SecretSpec("S", generate=GenerateSpec(32, "base64url")))
    await submitter.submit(req, {})
    assert "=" not in (env(project)["S"] or "=")


async def test_server_generated_key_the_file_holds_is_kept(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """A key the file already sets is kept when its generated field comes back empty."""
    (project / ".env").write_text(f"SESSION_SECRET={canary}\n")
    req = make(store, project, SecretSpec("SESSION_SECRET", generate=GenerateSpec()))
    outcome = await submitter.submit(req, {"SESSION_SECRET": ""})
    assert env(project) == {"SESSION_SECRET": canary}
    assert (outcome.kept, outcome.generated) == (("SESSION_SECRET",), ())


async def test_page_generated_value_counts_as_supplied(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """A generated field filled by the page is written as given and fingerprinted."""
    (project / ".env").write_text("SESSION_SECRET=old\n")
    req = make(store, project, SecretSpec("SESSION_SECRET", generate=GenerateSpec()))
    key = new_fp_key()
    outcome = await submitter.submit(req, {"SESSION_SECRET": canary}, fp_key=key)
    assert env(project) == {"SESSION_SECRET": canary}
    assert (outcome.replaced, outcome.generated, outcome.fingerprint) == (
        ("SESSION_SECRET",),
        (),
        str(fingerprint(key, [("SESSION_SECRET", canary)])),
    )


async def test_fingerprint_covers_only_page_supplied_names_in_request_order(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """Server-generated names stay out of the fingerprint; the rest keep request order."""
    req = make(
        store,
        project,
        SecretSpec("B_KEY"),
        SecretSpec("GEN", generate=GenerateSpec()),
        SecretSpec("A_KEY"),
    )
    key = new_fp_key()
    outcome = await submitter.submit(req, {"A_KEY": canary + "a", "B_KEY": canary}, fp_key=key)
    expected = fingerprint(key, [("B_KEY", canary), ("A_KEY", canary + "a")])
    assert outcome.fingerprint == str(expected)


async def test_second_submit_is_refused_as_closed(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """One request, one write: the second submit raises RequestClosed."""
    req = make(store, project)
    await submitter.submit(req, {"API_KEY": canary})
    with pytest.raises(RequestClosed):
        await submitter.submit(req, {"API_KEY": canary + "2"})
    assert env(project) == {"API_KEY": canary}


async def test_cancelled_request_is_refused_as_closed(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """A cancelled request writes nothing."""
    req = make(store, project)
    store.cancel(req)
    with pytest.raises(RequestClosed):
        await submitter.submit(req, {"API_KEY": canary})
    assert not (project / ".env").exists()


async def test_tracked_file_is_refused_then_written_when_allowed(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """A git-tracked .env raises TrackedFile (request still open); allow_tracked writes it."""
    (project / ".env").write_text("OTHER=1\n")
    git(project, "init", "-q")
    git(project, "add", ".env")
    req = make(store, project)
    with pytest.raises(TrackedFile):
        await submitter.submit(req, {"API_KEY": canary})
    assert (project / ".env").read_text() == "OTHER=1\n"
    await submitter.submit(req, {"API_KEY": canary}, allow_tracked=True)
    assert env(project) == {"OTHER": "1", "API_KEY": canary}


async def test_write_error_leaves_the_request_open_for_a_retry(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """A file offprompt cannot read stops the write; once fixed, the same request succeeds."""
    (project / ".env").write_bytes(b"X=\xff\n")
    req = make(store, project)
    with pytest.raises(WriteError) as caught:
        await submitter.submit(req, {"API_KEY": canary})
    assert canary not in str(caught.value)
    assert (req.status, req.claimed) == ("awaiting", False)
    (project / ".env").write_text("X=1\n")
    await submitter.submit(req, {"API_KEY": canary})
    assert env(project) == {"X": "1", "API_KEY": canary}


async def test_journal_records_names_and_fingerprint_never_the_value(
    submitter: Submitter, store: RequestStore, project: Path, journal: Journal, canary: str
) -> None:
    """The journal line holds names, file, client and fingerprint; the canary is absent."""
    req = make(store, project)
    outcome = await submitter.submit(req, {"API_KEY": canary})
    (entry,) = journal.read()
    assert (entry.names, entry.file, entry.fingerprint, entry.client, entry.request_id) == (
        ("API_KEY",),
        ".env",
        outcome.fingerprint,
        "Test Agent",
        req.id,
    )
    assert canary not in journal.path.read_text()


async def test_canary_is_only_in_the_destination_file(
    submitter: Submitter, store: RequestStore, project: Path, journal: Journal, canary: str
) -> None:
    """Neither the outcome nor the journal nor the request record holds the value."""
    req = make(store, project)
    outcome = await submitter.submit(req, {"API_KEY": canary})
    assert canary in (project / ".env").read_text()
    for text in (repr(outcome), str(outcome), journal.path.read_text(), repr(req)):
        assert canary not in text


async def test_journal_failure_does_not_undo_a_write(
    store: RequestStore,
    project: Path,
    tmp_path: Path,
    canary: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A journal that cannot be appended to is logged; the write still reports success."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    submitter = Submitter(store, Journal(blocker / "journal.jsonl"))
    req = make(store, project)
    with caplog.at_level(logging.WARNING, logger="offprompt"):
        outcome = await submitter.submit(req, {"API_KEY": canary})
    assert (outcome.added, req.status) == (("API_KEY",), "written")
    assert "journal" in caplog.text
    assert canary not in caplog.text


async def test_fp_key_of_the_wrong_length_is_a_programming_error(
    submitter: Submitter, store: RequestStore, project: Path, canary: str
) -> None:
    """fp_key must be 32 bytes; anything else raises before claiming the request."""
    req = make(store, project)
    with pytest.raises(ValueError, match="32 bytes"):
        await submitter.submit(req, {"API_KEY": canary}, fp_key=b"short")
    assert not req.claimed


async def test_a_named_provider_is_enforced_with_its_lines_and_hint(
    submitter: Submitter, store: RequestStore, project: Path
) -> None:
    """With provider stripe/secret_key, a publishable key is refused with the rule and the hint."""
    req = make(store, project, SecretSpec("STRIPE_SECRET_KEY", provider="stripe/secret_key"))
    wrong = "pk_live_" + "a1B2c3D4" * 4
    with pytest.raises(ValidationFailed) as failed:
        await submitter.submit(req, {"STRIPE_SECRET_KEY": wrong})
    reasons = failed.value.errors["STRIPE_SECRET_KEY"]
    assert any("publishable" in r for r in reasons)
    assert all(wrong[8:20] not in r for r in reasons)
    assert not (project / ".env").exists()
    assert req.status == "awaiting"


async def test_a_named_format_is_enforced(
    submitter: Submitter, store: RequestStore, project: Path
) -> None:
    """With format postgres_url, a value that is not one is refused; a real one is written."""
    req = make(store, project, SecretSpec("DATABASE_URL", format="postgres_url"))
    with pytest.raises(ValidationFailed):
        await submitter.submit(req, {"DATABASE_URL": "mysql://u:p@h/db"})
    await submitter.submit(req, {"DATABASE_URL": "postgres://u:p@db.example.com:5432/app"})
    assert env(project) == {"DATABASE_URL": "postgres://u:p@db.example.com:5432/app"}


async def test_a_name_alone_never_blocks_a_value(
    submitter: Submitter, store: RequestStore, project: Path
) -> None:
    """OPENAI_API_KEY without a provider: a key of a compatible service is still written."""
    req = make(store, project, SecretSpec("OPENAI_API_KEY"))
    await submitter.submit(req, {"OPENAI_API_KEY": "or-compatible-proxy-key"})
    assert env(project) == {"OPENAI_API_KEY": "or-compatible-proxy-key"}


async def test_file_sink_write_is_journaled_so_status_names_the_file_alone(
    submitter: Submitter, store: RequestStore, project: Path, journal: Journal
) -> None:
    """A file sink's journal line says so; secret_status then names the file, not `NAME=`
    read from a padded base64 value (DESIGN §12)."""
    from offprompt import status

    value = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3OA=="
    req = make(store, project, SecretSpec("TOKEN"), sink=SinkSpec("file", "token.txt"))
    await submitter.submit(req, {"TOKEN": value})
    (entry,) = journal.read()
    assert entry.sink == "file"
    found = status.report(project, "token.txt", journal=journal.path).to_json()
    assert found["keys"] == [{"name": "token.txt", "status": "set"}]
    assert value[:-2] not in json.dumps(found)
