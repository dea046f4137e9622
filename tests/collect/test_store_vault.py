"""`also: {kind: "vault"}` against the real OpenBao (`bao server -dev` on loopback, DESIGN
§13.1): the values as one JSON object on bao's stdin, patched into an existing secret (its other
keys kept) or put as a new one; the address pinned and shown; each failure a `failed` entry in
words while the .env write stands; the value only in the store and the .env."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from stores_kit import Bao, Shims, bao_server, free_port, make_shims, scan_tree, silent_server

from offprompt.sinks.destinations import runner

from .harness import FakeOpener, Session, connect, refusal, settings, structured
from .test_also import page_of, post

WAIT = 90.0
"""How long a test waits for a result: a store's programs (the AWS CLI above all, and its
retries) take seconds each on a busy machine."""


async def collect(
    session: Session, opener: FakeOpener, args: dict[str, Any], fields: dict[str, str]
) -> tuple[dict[str, Any], str, str]:
    """collect_secret, the page submitted with `fields`: the result, the form, the written page."""
    call = asyncio.ensure_future(session.call("collect_secret", args, timeout=WAIT))
    url, form = await page_of(opener)
    status, written = await post(url, fields)
    assert status == 200, written
    return structured(await call), form, written


__all__ = ["bao_server"]  # the fixture, used by name below


@pytest.fixture
def shims(tmp_path: Path) -> Shims:
    return make_shims(tmp_path / "shims")


@pytest.fixture
def opener() -> FakeOpener:
    return FakeOpener(visits=False)


@contextlib.asynccontextmanager
async def session_with(
    project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, **env: str
) -> AsyncIterator[Session]:
    """collect_secret in a server started with `env` (the person's: the store's address and
    token), the recording shim first on PATH."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    made = settings(tmp_path / "our-state", PATH=f"{shims.bin}:{os.defpath}", HOME=str(home), **env)
    client, service = await connect(project, made, opener)
    await client.initialize({})
    try:
        yield client
    finally:
        await client.close()
        await service.close()


def ask(path: str = "secret/app", **extra: Any) -> dict[str, Any]:
    also = [{"kind": "vault", "path": path}]
    return {"secrets": [{"name": "STRIPE_KEY"}], "reason": "deploys", "also": also, **extra}


def assert_only_in_store(
    canary: str, tmp_path: Path, shims: Shims, *texts: str, env_file: Path | None = None
) -> None:
    """The canary is in no result, page, journal, state file, argv or environment a program
    was given; on disk only in the .env the person chose."""
    for text in texts:
        assert canary not in text
    assert canary not in shims.text(), "a value reached a program's argv or environment"
    allowed = {env_file} if env_file is not None else set()
    assert scan_tree(tmp_path, canary, allowed=allowed) == []


async def test_a_value_is_patched_into_the_existing_secret_keeping_its_other_keys(
    bao_server: Bao, project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, canary: str
) -> None:
    """The issue's done-when for vault: .env written, bao runs `kv patch` with the address
    pinned on argv and the value on stdin only; the secret keeps its other key; the page names
    the store and path; result, page, journal, argv and environment hold no value."""
    bao_server.cli("kv", "put", "-mount=secret", "app", "OTHER=kept")
    env = {"BAO_ADDR": bao_server.addr, "BAO_TOKEN": bao_server.token}
    async with session_with(project, tmp_path, opener, shims, **env) as session:
        result, form, written = await collect(
            session, opener, ask(), {"STRIPE_KEY": canary, "also.0": "1"}
        )
    assert bao_server.data("secret/app") == {"OTHER": "kept", "STRIPE_KEY": canary}
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"
    target = f"secret/app at {bao_server.addr}"
    assert result["destinations"] == [
        {
            "kind": "vault",
            "target": target,
            "status": "sent",
            "detail": "sent STRIPE_KEY to secret/app (its other keys kept)",
        }
    ]
    assert target in form
    assert f"-address={bao_server.addr}" in form
    runs = [r["argv"][1:] for r in shims.records()]  # type: ignore[index]
    assert runs[-1] == ["kv", "patch", f"-address={bao_server.addr}", "-mount=secret", "app", "-"]
    for record in shims.records():
        program_env = record["env"]
        assert isinstance(program_env, dict)
        assert "BAO_ADDR" not in program_env  # the address checked is on argv instead
        assert program_env["BAO_TOKEN"] == bao_server.token  # inherited, never read
    journal = (tmp_path / "our-state" / "journal.jsonl").read_text()
    assert json.loads(journal.splitlines()[-1])["destinations"] == [
        {"kind": "vault", "target": target, "status": "sent"}
    ]
    assert_only_in_store(
        canary, tmp_path, shims, json.dumps(result), written, env_file=project / ".env"
    )
    assert bao_server.token not in json.dumps(result) + written + journal


async def test_a_new_secret_is_put_with_cas_zero_and_no_file_with_sink_none(
    bao_server: Bao, project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, canary: str
) -> None:
    """No secret at the path: `kv put -cas=0`, the values as one JSON object; `sink: none`
    leaves no file anywhere holding the value."""
    env = {"BAO_ADDR": bao_server.addr, "BAO_TOKEN": bao_server.token}
    args = ask("secret/team/api", sink={"kind": "none"})
    args["secrets"].append({"name": "OTHER_KEY"})
    value2 = canary[::-1]
    async with session_with(project, tmp_path, opener, shims, **env) as session:
        result, _, written = await collect(
            session, opener, args, {"STRIPE_KEY": canary, "OTHER_KEY": value2, "also.0": "1"}
        )
    assert bao_server.data("secret/team/api") == {"STRIPE_KEY": canary, "OTHER_KEY": value2}
    assert result["destinations"][0]["detail"] == (
        "sent STRIPE_KEY, OTHER_KEY to secret/team/api (a new secret)"
    )
    runs = [r["argv"][1:] for r in shims.records()]  # type: ignore[index]
    assert runs[-1][:3] == ["kv", "put", "-cas=0"]
    assert not (project / ".env").exists()
    assert_only_in_store(canary, tmp_path, shims, json.dumps(result), written)
    assert_only_in_store(value2, tmp_path, shims, json.dumps(result), written)


async def test_no_store_address_is_refused_before_any_page(
    project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims
) -> None:
    """Without BAO_ADDR or VAULT_ADDR the project is not linked to a store: refused, no page."""
    async with session_with(project, tmp_path, opener, shims) as session:
        why = refusal(await session.call("collect_secret", ask()))
    assert why.startswith("also[0] (vault): no OpenBao / Vault store is set up here")
    assert opener.opened == []
    assert shims.records() == []


async def test_a_sealed_store_fails_in_words_and_the_env_write_stands(
    bao_server: Bao, project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, canary: str
) -> None:
    """Sealed after the page opened: `failed`, saying sealed; .env holds the value."""
    env = {"BAO_ADDR": bao_server.addr, "BAO_TOKEN": bao_server.token}
    async with session_with(project, tmp_path, opener, shims, **env) as session:
        result = await _submit_after(
            session, opener, ask(), canary, bao_server.cli, "operator", "seal"
        )
    (entry,) = result["destinations"]
    assert entry["status"] == "failed"
    assert (
        entry["detail"]
        == f"STRIPE_KEY: the store at {bao_server.addr} is sealed (unseal it, then send again)"
    )
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"
    assert_only_in_store(canary, tmp_path, shims, json.dumps(result), env_file=project / ".env")


async def _submit_after(
    session: Session, opener: FakeOpener, args: dict[str, Any], value: str, *before: Any
) -> dict[str, Any]:
    """Open the page, run `before` (a callable and its arguments), submit `value` ticked."""
    call = asyncio.ensure_future(session.call("collect_secret", args, timeout=WAIT))
    url, _ = await page_of(opener)
    if before:
        before[0](*before[1:])
    status, body = await post(url, {"STRIPE_KEY": value, "also.0": "1"})
    assert status == 200, body
    return structured(await call)


async def test_a_missing_mount_and_a_denied_path_are_told_apart(
    bao_server: Bao, project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, canary: str
) -> None:
    """OpenBao answers both with a 403 "preflight capability check", root included: a mount
    that does not exist says `no such mount`, a token whose policy denies says `permission
    denied`, even when that token may not list the mounts."""
    denied = bao_server.token_with("deny", 'path "secret/*" { capabilities = ["deny"] }')
    limited = bao_server.token_with(
        "limited", 'path "nosuch/*" { capabilities = ["create", "update", "read", "patch"] }'
    )
    cases = [
        (
            bao_server.token,
            "nosuch/app",
            "no such mount: nosuch is not a secrets engine at this store",
        ),
        (limited, "nosuch/app", "no such mount: nosuch is not a secrets engine at this store"),
        (denied, "secret/app", "permission denied (403): the token may not write secret/app"),
    ]
    for i, (token, path, said) in enumerate(cases):
        env = {"BAO_ADDR": bao_server.addr, "BAO_TOKEN": token}
        state = tmp_path / f"case{i}"
        state.mkdir()
        async with session_with(project, state, opener, shims, **env) as session:
            opener.opened.clear()
            result = await _submit_after(session, opener, ask(path), canary)
        (entry,) = result["destinations"]
        assert (entry["status"], entry["detail"]) == ("failed", f"STRIPE_KEY: {said}"), path
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"
    assert canary not in shims.text()


async def test_an_unreachable_or_silent_store_fails_in_words(
    project: Path,
    tmp_path: Path,
    opener: FakeOpener,
    shims: Shims,
    canary: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing listening: `unreachable`; a server that accepts and never answers: stopped at
    the destination's limit (shortened here), `did not answer`. The .env write stands."""
    monkeypatch.setattr(runner, "TIMEOUT_SECONDS", 3.0)
    closed = f"http://127.0.0.1:{free_port()}"
    with silent_server() as silent:
        for i, (addr, said) in enumerate(
            [
                (closed, f"the server at {closed} is unreachable"),
                (silent, f"the server at {silent} did not answer (stopped after 3 s)"),
            ]
        ):
            state = tmp_path / f"case{i}"
            state.mkdir()
            env = {"BAO_ADDR": addr, "BAO_TOKEN": "t-unused"}
            async with session_with(project, state, opener, shims, **env) as session:
                opener.opened.clear()
                result = await _submit_after(session, opener, ask(), canary)
            (entry,) = result["destinations"]
            assert (entry["status"], entry["detail"]) == ("failed", f"STRIPE_KEY: {said}")
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"
    assert canary not in shims.text()


async def test_a_write_only_token_is_enough_so_the_agent_need_not_read_the_store(
    bao_server: Bao, project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, canary: str
) -> None:
    """A token that may create, update and patch the secret and read only its metadata (the
    way THREAT_MODEL suggests to keep a store more private than `.env`): offprompt patches the
    secret, and that token cannot read the value back."""
    bao_server.cli("kv", "put", "-mount=secret", "wo", "OTHER=kept")
    token = bao_server.token_with(
        "write-only",
        'path "secret/data/wo" { capabilities = ["create", "update", "patch"] }\n'
        'path "secret/metadata/wo" { capabilities = ["read"] }\n',
    )
    env = {"BAO_ADDR": bao_server.addr, "BAO_TOKEN": token}
    async with session_with(project, tmp_path, opener, shims, **env) as session:
        result = await _submit_after(session, opener, ask("secret/wo"), canary)
    assert result["destinations"][0]["status"] == "sent", result
    assert bao_server.data("secret/wo") == {"OTHER": "kept", "STRIPE_KEY": canary}
    with pytest.raises(AssertionError, match="permission denied"):
        bao_server.cli("kv", "get", "-mount=secret", "wo", token=token)


async def test_a_namespace_is_pinned_on_argv_and_shown(
    bao_server: Bao, project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, canary: str
) -> None:
    """`namespace` goes to bao as `-namespace=` on every run (BAO_NAMESPACE is kept from it)
    and the page and the result name it beside the path."""
    bao_server.cli("namespace", "create", "team")
    bao_server.cli("secrets", "enable", "-namespace=team", "-path=kv", "-version=2", "kv")
    env = {"BAO_ADDR": bao_server.addr, "BAO_TOKEN": bao_server.token, "BAO_NAMESPACE": "other"}
    args = ask("kv/app")
    args["also"][0]["namespace"] = "team"
    async with session_with(project, tmp_path, opener, shims, **env) as session:
        result, form, _ = await collect(
            session, opener, args, {"STRIPE_KEY": canary, "also.0": "1"}
        )
    target = f"kv/app at {bao_server.addr} (namespace team)"
    assert (result["destinations"][0]["target"], result["destinations"][0]["status"]) == (
        target,
        "sent",
    )
    assert target in form
    got = json.loads(
        bao_server.cli("kv", "get", "-format=json", "-namespace=team", "-mount=kv", "app")
    )
    assert got["data"]["data"] == {"STRIPE_KEY": canary}
    for record in shims.records():
        assert "-namespace=team" in record["argv"]  # type: ignore[operator]
        assert "BAO_NAMESPACE" not in record["env"]  # type: ignore[operator]


async def test_a_secret_whose_latest_version_was_deleted_gets_a_new_version(
    bao_server: Bao, project: Path, tmp_path: Path, opener: FakeOpener, shims: Shims, canary: str
) -> None:
    """Its metadata stays after `kv delete` but patch has nothing to patch: `kv put` with
    `-cas=` the version read, so a write in between is not overwritten."""
    bao_server.cli("kv", "put", "-mount=secret", "gone", "OLD=x")
    bao_server.cli("kv", "delete", "-mount=secret", "gone")
    env = {"BAO_ADDR": bao_server.addr, "BAO_TOKEN": bao_server.token}
    async with session_with(project, tmp_path, opener, shims, **env) as session:
        result = await _submit_after(session, opener, ask("secret/gone"), canary)
    assert result["destinations"][0]["detail"] == (
        "sent STRIPE_KEY to secret/gone (a new version: the latest one there was deleted)"
    )
    assert bao_server.data("secret/gone") == {"STRIPE_KEY": canary}
    runs = [r["argv"][1:4] for r in shims.records()]  # type: ignore[index]
    assert runs[-1] == ["kv", "put", "-cas=1"]
