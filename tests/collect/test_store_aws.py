"""`also: {kind: "aws"}` against moto_server with the real AWS CLI (DESIGN §13.1): the secret's
JSON object merged (other keys kept) and sent on the CLI's stdin (`file:///dev/stdin`), or a
new secret created; region, endpoint and profile pinned on argv and shown; a secret that is not
a JSON object left alone; the value only in the store and the .env."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from stores_kit import (
    DUMMY_AWS,
    Moto,
    Shims,
    free_port,
    make_shims,
    moto_read_only,
    moto_server,
)

from .harness import FakeOpener, refusal
from .test_store_vault import assert_only_in_store, collect, session_with

__all__ = ["moto_read_only", "moto_server"]  # the fixtures, used by name below


@pytest.fixture
def shims(tmp_path: Path) -> Shims:
    return make_shims(tmp_path / "shims")


@pytest.fixture
def opener() -> FakeOpener:
    return FakeOpener(visits=False)


def ask(secret_id: str = "team/app", **extra: Any) -> dict[str, Any]:  # noqa: S107 - a name
    also = [{"kind": "aws", "secret_id": secret_id}]
    return {"secrets": [{"name": "STRIPE_KEY"}], "reason": "deploys", "also": also, **extra}


def person(endpoint: str, **more: str) -> dict[str, str]:
    """The person's environment: dummy keys (moto takes any), a region, moto's endpoint."""
    # One attempt: the CLI's own retries of a refused connection would only slow the tests.
    quick = {"AWS_MAX_ATTEMPTS": "1", "AWS_RETRY_MODE": "standard"}
    return {**DUMMY_AWS, **quick, "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint, **more}


async def test_a_value_is_merged_into_the_secrets_json_keeping_its_other_keys(
    moto_server: Moto, project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, canary: str
) -> None:
    """The issue's done-when for aws: .env written, the secret's other key kept, region and
    endpoint on argv (the CLI v1 reads no AWS_REGION), the value on stdin only; the page names
    the secret, region and endpoint; nothing else holds the value."""
    value = canary + " é✓"  # not ASCII, and a blank: what a JSON object carries exactly
    made = moto_server.aws(
        "secretsmanager", "create-secret", "--name", "team/app", "--secret-string", '{"OTHER":"1"}'
    )
    assert made.returncode == 0, made.stderr
    async with session_with(
        project, tmp_path, opener, shims, **person(moto_server.endpoint)
    ) as session:
        result, form, written = await collect(
            session, opener, ask(), {"STRIPE_KEY": value, "also.0": "1"}
        )
    assert json.loads(moto_server.secret("team/app")) == {"OTHER": "1", "STRIPE_KEY": value}
    target = f"team/app in us-east-1 at {moto_server.endpoint}"
    assert result["destinations"] == [
        {
            "kind": "aws",
            "target": target,
            "status": "sent",
            "detail": "sent STRIPE_KEY to team/app (its other keys kept)",
        }
    ]
    assert target in form
    runs = [r["argv"][1:] for r in shims.records()]  # type: ignore[index]
    pins = ["--region", "us-east-1", "--endpoint-url", moto_server.endpoint, "--output", "json"]
    assert runs == [
        ["secretsmanager", "get-secret-value", "--secret-id", "team/app", *pins],
        ["secretsmanager", "put-secret-value", "--secret-id", "team/app", "--secret-string",
         "file:///dev/stdin", *pins],
    ]  # fmt: skip
    for record in shims.records():
        program_env = record["env"]
        assert isinstance(program_env, dict)
        assert "AWS_REGION" not in program_env
        assert "AWS_ENDPOINT_URL" not in program_env
        assert program_env["AWS_SECRET_ACCESS_KEY"] == "testing"  # inherited, never read
    assert (project / ".env").exists()
    for part in (canary, value):
        assert_only_in_store(
            part, tmp_path, shims, json.dumps(result), written, env_file=project / ".env"
        )


async def test_no_secret_is_created_with_the_values_alone(
    moto_server: Moto, project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, canary: str
) -> None:
    """ResourceNotFoundException on the read: `create-secret --name ID` from stdin."""
    async with session_with(
        project, tmp_path, opener, shims, **person(moto_server.endpoint)
    ) as session:
        result, _, _ = await collect(
            session, opener, ask("fresh"), {"STRIPE_KEY": canary, "also.0": "1"}
        )
    assert json.loads(moto_server.secret("fresh")) == {"STRIPE_KEY": canary}
    assert result["destinations"][0]["detail"] == "sent STRIPE_KEY to fresh (a new secret)"
    runs = [r["argv"][1:3] for r in shims.records()]  # type: ignore[index]
    assert runs[-1] == ["secretsmanager", "create-secret"]
    assert canary not in shims.text() + json.dumps(result)


async def test_a_secret_that_is_not_a_json_object_is_left_alone(
    moto_server: Moto, project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, canary: str
) -> None:
    """A plain-string secret: `failed`, saying so; the secret unchanged; .env written."""
    made = moto_server.aws(
        "secretsmanager", "create-secret", "--name", "plain", "--secret-string", "hunter2"
    )
    assert made.returncode == 0, made.stderr
    async with session_with(
        project, tmp_path, opener, shims, **person(moto_server.endpoint)
    ) as session:
        result, _, _ = await collect(
            session, opener, ask("plain"), {"STRIPE_KEY": canary, "also.0": "1"}
        )
    (entry,) = result["destinations"]
    assert entry["status"] == "failed"
    assert entry["detail"] == (
        "STRIPE_KEY: plain holds something other than a JSON object of names to values, so it "
        "was left alone"
    )
    assert moto_server.secret("plain") == "hunter2"
    assert "hunter2" not in json.dumps(result)
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"


async def test_an_unreachable_endpoint_fails_in_words(
    project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, canary: str
) -> None:
    """Nothing listening at the endpoint: `failed`, unreachable; the .env write stands."""
    closed = f"http://127.0.0.1:{free_port()}"
    async with session_with(project, tmp_path, opener, shims, **person(closed)) as session:
        result, _, _ = await collect(session, opener, ask(), {"STRIPE_KEY": canary, "also.0": "1"})
    (entry,) = result["destinations"]
    assert (entry["status"], entry["detail"]) == (
        "failed",
        f"STRIPE_KEY: the endpoint {closed} is unreachable",
    )
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"


async def test_no_region_or_no_credentials_is_refused_before_any_page(
    project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims
) -> None:
    """Without a region, or without credentials, the store is not set up: refused, no page."""
    for i, env in enumerate([{**DUMMY_AWS}, {"AWS_REGION": "us-east-1"}]):
        state = tmp_path / f"case{i}"
        state.mkdir()
        async with session_with(project, state, opener, shims, **env) as session:
            why = refusal(await session.call("collect_secret", ask()))
        assert why.startswith("also[0] (aws): no AWS "), why
    assert opener.opened == []
    assert shims.records() == []


async def test_credentials_that_may_not_write_fail_as_permission_denied(
    moto_read_only: tuple[Moto, dict[str, str]],
    project: Path,
    tmp_path: Path,
    opener: FakeOpener,
    shims: Shims,
    canary: str,
) -> None:
    """moto enforcing IAM, a user allowed only to read: `failed`, permission denied (403), in
    words (not the server's XML); the .env write stands."""
    moto, keys = moto_read_only
    env = {**person(moto.endpoint), **keys}
    async with session_with(project, tmp_path, opener, shims, **env) as session:
        result, _, _ = await collect(session, opener, ask(), {"STRIPE_KEY": canary, "also.0": "1"})
    (entry,) = result["destinations"]
    assert (entry["status"], entry["detail"]) == (
        "failed",
        "STRIPE_KEY: permission denied (403): the credentials may not write this secret",
    )
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"
    assert canary not in shims.text() + json.dumps(result)
