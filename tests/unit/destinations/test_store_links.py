"""A team's store is linked by the environment the request was made from, handed in, never
`os.environ` (DESIGN §13.1): what each store reads from it, pins on argv and shows, and what it
refuses before any page."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from stores_kit import BIN

from offprompt.errors import NotLinked, RefusedRequest
from offprompt.sinks import destinations
from offprompt.sinks.destinations.aws import AwsSpec
from offprompt.sinks.destinations.vault import VaultSpec

PATH = f"{BIN}:{os.defpath}"


def aws_link(project: Path, env: dict[str, str]) -> destinations.Link:
    return destinations.KINDS["aws"].link(project, AwsSpec(secret_id="team/app"), env)


def test_the_profiles_region_is_read_from_the_persons_config_and_the_profile_pinned(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With AWS_PROFILE and no region variable, the profile's region in ~/.aws/config is used;
    `--region` and `--profile` go on argv, and the process's own environment counts for
    nothing (only the mapping handed in)."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "config").write_text(
        "[default]\nregion = us-east-1\n\n[profile team]\nregion = eu-west-3\n"
    )
    monkeypatch.setenv("AWS_REGION", "ap-south-1")  # not the request's environment
    link = aws_link(project, {"PATH": PATH, "HOME": str(home), "AWS_PROFILE": "team"})
    assert link.args == ("--region", "eu-west-3", "--profile", "team", "--output", "json")
    assert link.target == "team/app in eu-west-3 (profile team)"
    assert ("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true") in link.env


def test_a_fifo_for_the_aws_config_is_no_region_not_a_hang(project: Path, tmp_path: Path) -> None:
    """The agent can leave a FIFO where the config should be: no region, refused at once."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    os.mkfifo(home / ".aws" / "config")
    assert stat.S_ISFIFO(os.stat(home / ".aws" / "config").st_mode)
    env = {"PATH": PATH, "HOME": str(home), "AWS_ACCESS_KEY_ID": "k"}
    with pytest.raises(NotLinked, match="no AWS region is set up here"):
        aws_link(project, env)


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"BAO_ADDR": "http://user:pw@127.0.0.1:8200"}, "BAO_ADDR is not an http(s) address"),
        ({"VAULT_ADDR": "file:///etc/passwd"}, "VAULT_ADDR is not an http(s) address"),
        ({"BAO_ADDR": "http://127.0.0.1:8200", "PATH": "/nonexistent"}, "neither bao nor vault"),
    ],
)
def test_a_store_address_that_is_not_one_is_not_linked(
    project: Path, env: dict[str, str], said: str
) -> None:
    """An address with a user part or another scheme, or no program: refused, never echoed."""
    with pytest.raises(NotLinked) as caught:
        destinations.KINDS["vault"].link(
            project, VaultSpec(path="secret/app"), {"PATH": PATH, **env}
        )
    assert said in str(caught.value)
    assert "pw" not in str(caught.value)


def test_bao_addr_comes_before_vault_addr(project: Path) -> None:
    env = {"PATH": PATH, "BAO_ADDR": "http://127.0.0.1:1", "VAULT_ADDR": "http://127.0.0.1:2"}
    link = destinations.KINDS["vault"].link(project, VaultSpec(path="secret/app"), env)
    assert link.args == ("-address=http://127.0.0.1:1",)


@pytest.mark.parametrize(
    "entry",
    [
        {"kind": "vault", "path": "secret"},  # no PATH after the mount
        {"kind": "vault", "path": "secret/../sys/policy"},
        {"kind": "vault", "path": "/secret/app"},
        {"kind": "vault", "path": "secret/app", "namespace": "../root"},
        {"kind": "aws", "secret_id": "has space"},
        {"kind": "aws", "secret_id": ""},
    ],
)
def test_a_path_or_secret_id_outside_the_pattern_is_refused(entry: dict[str, str]) -> None:
    with pytest.raises(RefusedRequest):
        destinations.parse([entry])
