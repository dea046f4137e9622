"""Never a name from inside a value (DESIGN §12): file sinks and non-dotenv content are reported
by their file alone in secret_status, `offprompt status`, `offprompt keys` and `file_keys`."""

import base64
import json
import re
import secrets
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import assert_no_part
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from offprompt import status
from offprompt.cli import cli
from offprompt.errors import Unreadable
from offprompt.sinks import dotenv
from offprompt.write.journal import Journal, JournalEntry


def record_file_sink(project: Path, file: str, name: str = "TOTP_SEED") -> None:
    """The journal line a `{kind: file}` write of `file` leaves."""
    Journal().append(
        JournalEntry(
            at="2026-12-01T20:00:00Z",
            project=str(project),
            file=file,
            names=(name,),
            kept=(),
            fingerprint="🍋 🥝 🌮 🧀",
            client="claude-code",
            request_id="r1",
            sink="file",
        )
    )


def outputs(project: Path, file: str, *, file_sink: bool = False) -> list[str]:
    """Everything the four doors say of `file`: the tool's JSON, `status` (table and --json),
    `keys` (lines and --json) and a result's `file_keys`."""
    found = status.report(project, file).to_json()
    said = [json.dumps(found, ensure_ascii=False)]
    runner = CliRunner()
    for args in (
        ["status", file],
        ["status", file, "--json"],
        ["keys", file],
        ["keys", file, "--json"],
    ):
        with _cwd(project):
            res = runner.invoke(cli, args, prog_name="offprompt")
        assert res.exception is None or isinstance(res.exception, SystemExit), res.output
        said.append(res.stdout + res.stderr)
    if not file_sink:  # a file sink's write has no file_keys (sinks/file_sink.py)
        said.append(json.dumps(list(dotenv.Parsed((project / file).read_text()).keys)))
    return said


class _cwd:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        import os

        self.old = os.getcwd()
        os.chdir(self.path)

    def __exit__(self, *exc: object) -> None:
        import os

        os.chdir(self.old)


def by_file(project: Path, file: str) -> list[dict[str, str]]:
    return status.report(project, file).to_json()["keys"]  # type: ignore[no-any-return]


def keys_printed(project: Path, file: str) -> str:
    with _cwd(project):
        return CliRunner().invoke(cli, ["keys", file], prog_name="offprompt").stdout


def test_file_sink_of_padded_base64_is_reported_by_file(project: Path) -> None:
    """A file sink's `abcd…==` reads as `NAME=` to python-dotenv: only the file is named."""
    # All capitals and digits: a file python-dotenv reads as one §3.1 name, so only the
    # journal's file-sink record keeps it from being listed.
    value = "QUJD" + base64.b32encode(secrets.token_bytes(20)).decode().rstrip("=") + "RA=="
    (project / "token.txt").write_text(value)
    record_file_sink(project, "token.txt")

    assert by_file(project, "token.txt") == [{"name": "token.txt", "status": "set"}]
    assert keys_printed(project, "token.txt") == ""
    assert_no_part(value, *outputs(project, "token.txt", file_sink=True))


def test_file_sink_of_base32_seed_is_reported_by_file(project: Path) -> None:
    """A padded base32 TOTP seed is all capitals: a §3.1 name to the eye, still only the file."""
    # A letter first (base32 may start with a digit, which no name does): a §3.1 name to
    # python-dotenv, so only the file-sink rule keeps it unlisted.
    value = "J" + base64.b32encode(secrets.token_bytes(13)).decode()[1:]
    assert value.endswith("=")
    (project / "seed").write_text(value + "\n")
    record_file_sink(project, "seed")

    assert by_file(project, "seed") == [{"name": "seed", "status": "set"}]
    assert_no_part(value, *outputs(project, "seed", file_sink=True))


def test_an_unreadable_journal_closes_a_file_sink_to_its_name(
    project: Path, isolated_env: Path
) -> None:
    """A journal that exists but cannot be read cannot rule a file sink out: a base32 seed (a
    §3.1 name to the eye) is still shown by its file alone, in status and in keys."""
    # A letter first (base32 may start with a digit, which no name does): a §3.1 name to
    # python-dotenv, so only the file-sink rule keeps it unlisted.
    value = "J" + base64.b32encode(secrets.token_bytes(13)).decode()[1:]
    (project / "seed").write_text(value + "\n")
    journal = Journal().path
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.mkdir()  # reading it fails with IsADirectoryError, not FileNotFoundError

    assert by_file(project, "seed") == [{"name": "seed", "status": "set"}]
    assert keys_printed(project, "seed") == ""
    assert_no_part(value, *outputs(project, "seed", file_sink=True))


def test_a_file_shown_by_name_is_never_said_to_have_every_key_set(project: Path) -> None:
    """One lower-case key makes a .env no dotenv file offprompt names keys in: the note says it
    cannot tell which keys are set, not that nothing needs collecting."""
    (project / ".env").write_text("PORT=3000\nhttp_proxy=\n")
    found = status.report(project, ".env")
    assert found.to_json()["keys"] == [{"name": ".env", "status": "set"}]
    assert "Every key is set" not in found.note
    assert "cannot say which are set" in found.note
    assert "Every key is set." not in status.table(found)


def _no_journal(project: Path) -> None:
    journal = Journal().path
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.mkdir()  # reading it fails with IsADirectoryError


@pytest.mark.parametrize(
    ("data", "setup", "why"),
    [
        (b"J\xff\xfe-not-text\n", record_file_sink, status.FILE_SINK),
        (b"SEED=ABCD\n", lambda p, f: _no_journal(p), status.NO_JOURNAL),
        (b"aws_secret_access_key = x\n", lambda p, f: None, status.NOT_DOTENV),
        (b"[default]\naws_secret_access_key = x\n", lambda p, f: None, status.BARE_LINE),
        (b"A=\xff\n", lambda p, f: None, None),
    ],
    ids=["file-sink-not-utf8", "journal-unreadable", "not-dotenv", "bare-line", "not-utf8"],
)
def test_keys_and_status_show_a_file_by_the_same_rules(
    project: Path, isolated_env: Path, data: bytes, setup: Any, why: str | None
) -> None:
    """`offprompt keys` asks status how to show a file: where status shows it by its name
    alone, keys names no key and says why; where status cannot read it, keys fails with the
    very same sentence (exit 1)."""
    (project / "f.env").write_bytes(data)
    setup(project, "f.env")
    with _cwd(project):
        done = CliRunner().invoke(cli, ["keys", "f.env"], prog_name="offprompt")
    if why is not None:
        assert status.report(project, "f.env").whole
        assert (0, "", f"offprompt: f.env shows no key names: {why}.\n") == (
            done.exit_code,
            done.stdout,
            done.stderr,
        )
    else:
        with pytest.raises(Unreadable) as caught:
            status.report(project, "f.env")
        assert (1, f"offprompt: {caught.value}\n") == (done.exit_code, done.stderr)


def test_empty_file_sink_is_empty(project: Path) -> None:
    (project / "seed").write_text("")
    record_file_sink(project, "seed")
    out = status.report(project, "seed").to_json()
    assert out["keys"] == [{"name": "seed", "status": "empty"}]
    assert out["missing"] == ["seed"]


def test_aws_credentials_file_is_reported_by_file(project: Path) -> None:
    """Names outside the §3.1 pattern (lower case) make the file opaque, journal or not."""
    secret = "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEYq"
    (project / "credentials").write_text(
        f"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {secret}\n"
    )
    assert by_file(project, "credentials") == [{"name": "credentials", "status": "set"}]
    assert keys_printed(project, "credentials") == ""
    assert_no_part(secret, *outputs(project, "credentials"))
    assert_no_part("AKIAIOSFODNN7EXAMPLE", *outputs(project, "credentials"))


def _pem_body(raw: bytes) -> list[str]:
    b64 = base64.b64encode(raw).decode()
    return [b64[i : i + 64] for i in range(0, len(b64), 64)]


LAYOUTS = ["lf", "crlf", "cr", "bom", "next_line", "lower", "export_indent"]


def pem_file(layout: str, body: list[str], before: str, after: str, quote: str = "") -> str:
    """A .env holding `BEFORE=1`, a PEM in `layout` under KEY (in `quote`s), and `AFTER=2`."""
    head, tail = "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----"
    if layout == "lower":
        head, tail = head.lower(), tail.lower()
    key = ("  export KEY=" if layout == "export_indent" else "KEY=") + quote
    tail += quote
    first = [key, head] if layout == "next_line" else [key + head]
    lines = [f"{before}=1", *first, *body, tail, f"{after}=2"]
    if layout == "bom":  # the BOM right before the PEM's own key
        lines = [*first, *body, tail, f"{before}=1", f"{after}=2"]
    eol = {"crlf": "\r\n", "cr": "\r"}.get(layout, "\n")
    text = eol.join(lines) + eol
    return "\ufeff" + text if layout == "bom" else text


def expected(layout: str) -> tuple[str, ...]:
    return ("KEY", "BEFORE", "AFTER") if layout == "bom" else ("BEFORE", "KEY", "AFTER")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_pem_in_every_layout_lists_only_the_real_names(project: Path, layout: str) -> None:
    """No line of a PEM block is a name, in any layout; the file's other names are listed."""
    # Lines python-dotenv reads as `NAME=`: one outside the §3.1 pattern, one inside it.
    body = [*_pem_body(b"\xfb\xef" * 40 + b"Q" * 8), "MIIEVQIBADANBGKQHKIG9W0BAQEFAASC="]
    text = pem_file(layout, body, "BEFORE", "AFTER")
    (project / ".env").write_bytes(text.encode())
    assert dotenv.Parsed(text).keys == expected(layout)
    assert [k["name"] for k in by_file(project, ".env")] == [*expected(layout)]
    for line in body:
        assert_no_part(line, *outputs(project, ".env"))


encodings = st.sampled_from(["base64url", "base64", "hex"])


def encoded(raw: bytes, encoding: str) -> str:
    if encoding == "hex":
        return raw.hex()
    if encoding == "base64":
        return base64.b64encode(raw).decode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def names_said(project: Path, file: str, *, file_sink: bool = False) -> list[str]:
    """The names the answers hold: secret_status's keys, `keys`' lines, `file_keys`."""
    found = status.report(project, file).to_json()
    names = [k["name"] for k in found["keys"]]  # type: ignore[attr-defined]
    names += keys_printed(project, file).splitlines()
    if not file_sink:
        names += dotenv.Parsed((project / file).read_bytes().decode()).keys
    return names


def _stand_in(value: str) -> str:
    """`value` with every character but `=` replaced: the same shape to python-dotenv."""
    return re.sub(r"[^=\r\n]", "A", value)


SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(raw=st.binary(min_size=16, max_size=64), encoding=encodings, newline=st.booleans())
def test_generated_values_in_a_file_sink_never_show(
    tmp_path_factory: pytest.TempPathFactory, raw: bytes, encoding: str, newline: bool
) -> None:
    """Property: a file sink holding any `generate` value says what a stand-in would, and no
    name said holds 4 characters of it."""
    said = []
    value = encoded(raw, encoding)
    for held in (value, _stand_in(value)):
        project = tmp_path_factory.mktemp("p")
        (project / "key.txt").write_text(held + ("\n" if newline else ""))
        record_file_sink(project, "key.txt")
        assert by_file(project, "key.txt") == [{"name": "key.txt", "status": "set"}]
        said.append(
            [o.replace(str(project), "P") for o in outputs(project, "key.txt", file_sink=True)]
        )
        assert_no_part(value, *names_said(project, "key.txt", file_sink=True))
    assert said[0] == said[1]


@SETTINGS
@given(
    raw=st.binary(min_size=40, max_size=400),
    layout=st.sampled_from(LAYOUTS),
    quote=st.sampled_from(["", '"', "'"]),
)
def test_pems_in_every_layout_never_show(
    tmp_path_factory: pytest.TempPathFactory, raw: bytes, layout: str, quote: str
) -> None:
    """Property: a .env with a PEM in any layout says what it would with a stand-in body, and
    lists exactly its own names."""
    body = _pem_body(raw)
    said = []
    for lines in (body, [_stand_in(line) for line in body]):
        project = tmp_path_factory.mktemp("p")
        text = pem_file(layout, lines, "BEFORE", "AFTER", quote)
        (project / ".env").write_bytes(text.encode())
        said.append([o.replace(str(project), "P") for o in outputs(project, ".env")])
        assert names_said(project, ".env") == [*expected(layout)] * 3
    assert said[0] == said[1]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_writes_file_keys_hold_no_line_of_a_pem(project: Path, canary: str, layout: str) -> None:
    """A write into a .env holding a quoted PEM in any layout (an unquoted one is refused: bash
    runs its lines): `file_keys` are the file's names and the new one, never a line of the PEM
    (or the write is refused, nothing changed)."""
    from offprompt.errors import WriteError
    from offprompt.sinks import SinkSpec, write

    body = [*_pem_body(b"\xfb\xef" * 40 + b"Q" * 8), "MIIEVQIBADANBGKQHKIG9W0BAQEFAASC="]
    text = pem_file(layout, body, "BEFORE", "AFTER", quote='"')
    (project / ".env").write_bytes(text.encode())
    try:
        result = write(project, SinkSpec(), {"NEW_KEY": canary})
    except WriteError:
        assert (project / ".env").read_bytes() == text.encode()
        return
    assert result.file_keys == (*expected(layout), "NEW_KEY")
    for line in body:
        assert_no_part(line, json.dumps(list(result.file_keys)))
