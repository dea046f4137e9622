"""DESIGN §12 "Never a name from inside a value": a base32 seed offprompt wrote as a file sink
(through the real Submitter and sinks) is never printed as a key name by `offprompt keys`,
`offprompt status --json` or in `file_keys`, wherever the file went and whichever journal is
read: the project folder renamed, `mv secrets s2`, a hard link `seed.env`, another state dir."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import assert_no_part
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from offprompt import status
from offprompt.cli import cli
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def seed() -> str:
    """A unique base32 seed with its padding: python-dotenv reads it as `NAME=====`."""
    return "JB" + "".join(secrets.choice(_B32) for _ in range(30)) + "====="


def write(project: Path, sink: SinkSpec, name: str, value: str) -> tuple[str, ...]:
    """Write `value` through the real Submitter into `sink`; the result's `file_keys`."""
    store = RequestStore()
    req = store.create((SecretSpec(name),), sink, project, "r", ttl=300)
    outcome = asyncio.run(Submitter(store, Journal()).submit(req, {name: value}))
    return tuple(outcome.file_keys)


@contextmanager
def cwd(folder: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def outputs(project: Path, file: str) -> list[str]:
    """What `offprompt keys FILE`, `keys --json FILE` and `status FILE --json` print, and
    `status.report`'s JSON."""
    runner = CliRunner()
    out: list[str] = []
    with cwd(project):
        for args in (["keys", file], ["keys", "--json", file], ["status", file, "--json"]):
            done = runner.invoke(cli, args, prog_name="offprompt")
            out += [done.stdout, done.stderr]
    out.append(json.dumps(status.report(project, file).to_json()))
    return out


def test_the_seed_alone_would_be_read_as_a_name() -> None:
    """What is at stake: without the rule, python-dotenv reads the seed as a name."""
    from offprompt.sinks import dotenv_read

    value = seed()
    assert dotenv_read.read(value + "\n").keys == (value.rstrip("="),)


def test_a_renamed_project_folder(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    value = seed()
    write(project, SinkSpec(kind="file", path=".env.totp"), "TOTP_SEED", value)
    moved = tmp_path / "renamed"
    project.rename(moved)
    assert_no_part(value, *outputs(moved, ".env.totp"))


def test_mv_secrets_s2(project: Path) -> None:
    value = seed()
    (project / "secrets").mkdir()
    write(project, SinkSpec(kind="file", path="secrets/seed.env"), "TOTP_SEED", value)
    (project / "secrets").rename(project / "s2")
    assert_no_part(value, *outputs(project, "s2/seed.env"))


def test_a_hard_link_named_seed_env(project: Path) -> None:
    value = seed()
    (project / "secrets").mkdir()
    write(project, SinkSpec(kind="file", path="secrets/seed.txt"), "TOTP_SEED", value)
    os.link(project / "secrets/seed.txt", project / "seed.env")
    assert_no_part(value, *outputs(project, "seed.env"))


def test_another_state_dir(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another (empty) state dir: no journal names the file, and its name says no dotenv."""
    value = seed()
    (project / "secrets").mkdir()
    write(project, SinkSpec(kind="file", path="secrets/seed"), "TOTP_SEED", value)
    monkeypatch.setenv("OFFPROMPT_STATE_DIR", str(tmp_path / "other-state"))
    assert_no_part(value, *outputs(project, "secrets/seed"))


def test_file_keys_of_a_dotenv_write_into_a_file_sinks_text(project: Path) -> None:
    """A dotenv write into a file holding a file sink's text: `file_keys` follows the same
    rule as status (no names from a file whose name is not a dotenv file's; a bare line the
    dotenv sink refuses to write beside)."""
    value = seed()
    (project / "other").write_text(value + "\n")
    keys = write(project, SinkSpec(kind="dotenv", path="other"), "OTHER", "x" * 9)
    assert keys == ()
    assert_no_part(value, json.dumps(keys))


def test_file_keys_of_a_plain_env_still_name_its_keys(project: Path) -> None:
    assert write(project, SinkSpec(kind="dotenv", path=".env"), "API_KEY", seed()) == ("API_KEY",)


_MOVES = st.lists(st.sampled_from(["rename-project", "mv-folder", "link", "state"]), max_size=4)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(moves=_MOVES, name=st.sampled_from([".env.totp", "seed.env", "seed", "seed.txt", ".env"]))
def test_moves_renames_links_and_state_dirs_never_show_a_part(
    tmp_path_factory: pytest.TempPathFactory, moves: list[str], name: str
) -> None:
    """Any sequence of moves, renames, links and state-dir swaps after a file sink's write:
    no 4-character stretch of the value in `keys`, `status` or `file_keys`."""
    base = tmp_path_factory.mktemp("prop")
    old_state = os.environ["OFFPROMPT_STATE_DIR"]
    os.environ["OFFPROMPT_STATE_DIR"] = str(base / "state")
    try:
        project = base / "p0"
        (project / "d0").mkdir(parents=True)
        value = seed()
        write(project, SinkSpec(kind="file", path=f"d0/{name}"), "TOTP_SEED", value)
        rel = f"d0/{name}"
        for i, move in enumerate(moves, 1):
            if move == "rename-project":
                project = project.rename(base / f"p{i}")
            elif move == "mv-folder":
                folder = rel.split("/")[0]
                (project / folder).rename(project / f"d{i}")
                rel = f"d{i}/{rel.split('/')[1]}"
            elif move == "link":
                os.link(project / rel, project / f"link{i}.env")
                rel = f"link{i}.env"
                (project / f"d{i}").mkdir()
                os.rename(project / rel, project / f"d{i}" / rel)
                rel = f"d{i}/{rel}"
            else:
                os.environ["OFFPROMPT_STATE_DIR"] = str(base / f"state{i}")
        shown = outputs(project, rel)
        # With another journal, only the name can tell: a file sink named as a dotenv file
        # holding `NAME=...` text is then read as one (DESIGN §12: by its name, by a journal).
        if not status.is_dotenv_name(Path(rel).name) or "state" not in moves:
            assert_no_part(value, *shown)
    finally:
        os.environ["OFFPROMPT_STATE_DIR"] = old_state
