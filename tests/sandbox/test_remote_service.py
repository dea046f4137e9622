"""The tools for a remote request (DESIGN §5, §17): a sealed link at once, never the opener; a
sealed submit is held until its confirmation code comes back through `await_secret`."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from offprompt.mcp.tool import ToolContext, ToolResult
from offprompt.tools.service import Service

from .conftest import FakeCloudflared
from .edge import FakeEdge
from .person import Answer, sealed_submit

ARGS = {"secrets": [{"name": "API_KEY"}], "reason": "The billing module calls the API."}
URL_CAPS: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}


class FakePeer:
    """The client side of a call: records what the server sent; never answers a request."""

    def __init__(self, *, can_send: bool = True) -> None:
        self.can_send = can_send
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.notes: list[tuple[str, dict[str, Any]]] = []

    @property
    def can_send_requests(self) -> bool:
        return self.can_send

    async def send_request(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        self.requests.append((method, params))
        await asyncio.sleep(timeout)
        raise TimeoutError

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.notes.append((method, params))


def context(
    peer: FakePeer, caps: dict[str, Any] | None = None, revision: str = "2025-11-25"
) -> ToolContext:
    return ToolContext(
        tool="collect_secret",
        revision=revision,
        client_info={"name": "test-agent"},
        client_capabilities=caps or {},
        meta={},
        peer=peer,
    )


@pytest.fixture
def browser_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A $BROWSER (the opener reads the process environment) that only notes that it ran."""
    log = tmp_path / "browser-ran"
    monkeypatch.setenv("BROWSER", f"sh -c 'touch {log}' %s")
    return log


@pytest.fixture
def base_env(project: Path, browser_log: Path) -> dict[str, str]:
    """The process environment, remote, with await_secret answering at once."""
    return {**os.environ, "OFFPROMPT_SANDBOX": "1", "OFFPROMPT_AWAIT_SECONDS": "0"}


@pytest.fixture
async def service(
    edge: FakeEdge, cloudflared: FakeCloudflared, project: Path, base_env: dict[str, str]
) -> AsyncIterator[Service]:
    made = Service(cwd=project, env={**base_env, **edge.env()})
    try:
        yield made
    finally:
        await made.close()


def data(result: ToolResult) -> dict[str, Any]:
    assert result.is_error is False
    assert isinstance(result.structured, dict)
    return result.structured


def held_code(answer: Answer) -> str:
    """The code of the page's held answer (200 `confirm`): what the person reads off it."""
    body = answer.json()
    assert (answer.status, body["status"]) == (200, "confirm"), answer.body[:300]
    code = body["confirm_code"]
    assert isinstance(code, str)
    return code


async def confirm(service: Service, request_id: str, code: str) -> dict[str, Any]:
    """The person's code typed back through the agent: `await_secret` with `confirm`."""
    args = {"request_id": request_id, "confirm": code}
    return data(await service.await_secret(args, context(FakePeer())))


async def test_remote_collect_returns_the_tunnel_link_at_once(
    service: Service, edge: FakeEdge
) -> None:
    """awaiting, with https://<tunnel>/r/<token>#k=<point>, and 30 minutes to live."""
    out = data(await service.collect(ARGS, context(FakePeer())))
    origin, _, rest = out["url"].partition("/r/")
    assert (out["status"], origin) == ("awaiting", f"https://{edge.registered[0]}")
    assert rest.split("#")[1].startswith("k=")
    assert 1790 <= out["expires_in"] <= 1800


async def test_remote_note_says_to_show_the_link_and_wait(service: Service) -> None:
    """The note tells the model to show the url on its own line and call await_secret."""
    out = data(await service.collect(ARGS, context(FakePeer())))
    assert "url below on its own line" in out["note"]
    assert f"await_secret with request_id {out['request_id']}" in out["note"]


async def test_remote_request_never_runs_the_opener(service: Service, browser_log: Path) -> None:
    """No browser is started for a remote request."""
    await service.collect(ARGS, context(FakePeer()))
    await asyncio.sleep(0.2)
    assert not await asyncio.to_thread(browser_log.exists)


async def test_await_secret_repeats_the_link(service: Service) -> None:
    """While the request waits, every await_secret result carries the same link."""
    first = data(await service.collect(ARGS, context(FakePeer())))
    again = data(
        await service.await_secret({"request_id": first["request_id"]}, context(FakePeer()))
    )
    assert (again["status"], again["url"]) == ("awaiting", first["url"])


async def test_legacy_url_elicitation_is_sent_without_waiting(service: Service) -> None:
    """A legacy client declaring URL mode gets elicitation/create with the link; the result
    does not wait for the answer (the fake client never answers)."""
    peer = FakePeer()
    out = data(await asyncio.wait_for(service.collect(ARGS, context(peer, URL_CAPS)), 10))
    await asyncio.sleep(0.05)
    assert [(m, p["mode"], p["url"]) for m, p in peer.requests] == [
        ("elicitation/create", "url", out["url"])
    ]


async def test_modern_url_elicitation_still_gets_the_awaiting_result(service: Service) -> None:
    """A 2026-07-28 client declaring URL mode gets the awaiting result, not input_required."""
    peer = FakePeer()
    out = data(await service.collect(ARGS, context(peer, URL_CAPS, revision="2026-07-28")))
    assert (out["status"], "url" in out, peer.requests) == ("awaiting", True, [])


async def test_sealed_submit_through_the_tunnel_writes(
    service: Service, edge: FakeEdge, project: Path, canary: str
) -> None:
    """A sealed POST through the tunnel is held: await_secret says `confirm` and nothing is
    written; await_secret with the page's code writes the file and reports the fingerprint;
    the tunnel carried no value."""
    out = data(await service.collect(ARGS, context(FakePeer())))
    answer, expected = await asyncio.to_thread(sealed_submit, out["url"], {"API_KEY": canary})
    code = held_code(answer)
    held = data(await service.await_secret({"request_id": out["request_id"]}, context(FakePeer())))
    assert (held["status"], (project / ".env").exists()) == ("confirm", False)
    done = await confirm(service, out["request_id"], code)
    assert (done["status"], done["fingerprint"]) == ("written", expected)
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"
    assert canary.encode() not in edge.traffic()
    assert b"sealed=v1." in edge.traffic()


async def test_legacy_elicitation_completes_after_the_write(service: Service, canary: str) -> None:
    """After the write (the held submit confirmed by its code), a legacy client that was
    offered the link gets elicitation/complete; not while the submit is only held."""
    peer = FakePeer()
    out = data(await service.collect(ARGS, context(peer, URL_CAPS)))
    answer, _ = await asyncio.to_thread(sealed_submit, out["url"], {"API_KEY": canary})
    code = held_code(answer)
    await asyncio.sleep(0.2)
    assert peer.notes == []
    assert (await confirm(service, out["request_id"], code))["status"] == "written"
    for _ in range(100):
        if peer.notes:
            break
        await asyncio.sleep(0.02)
    assert peer.notes == [
        ("notifications/elicitation/complete", {"elicitationId": out["request_id"]})
    ]


async def test_cancel_drops_the_private_key(service: Service) -> None:
    """cancel_secret closes the request and the key pair goes with it."""
    out = data(await service.collect(ARGS, context(FakePeer())))
    await service.cancel_secret({"request_id": out["request_id"]}, context(FakePeer()))
    request = service.store.get(out["request_id"])
    assert request is not None
    assert (request.status, request.delivery.seal_key) == ("cancelled", None)


async def test_close_stops_the_tunnel(
    edge: FakeEdge, cloudflared: FakeCloudflared, project: Path, base_env: dict[str, str]
) -> None:
    """Service.close() stops cloudflared."""
    service = Service(cwd=project, env=base_env)
    await service.collect(ARGS, context(FakePeer()))
    await service.close()
    assert cloudflared.alive() == []


async def test_generated_only_remote_request_needs_no_tunnel(
    service: Service, cloudflared: FakeCloudflared, project: Path
) -> None:
    """Generated keys are written at once, remote or not: no page, no tunnel."""
    args = {"secrets": [{"name": "SESSION_SECRET", "generate": {}}], "reason": "sessions"}
    out = data(await service.collect(args, context(FakePeer())))
    assert (out["status"], cloudflared.starts()) == ("written", [])


# -- without a tunnel -----------------------------------------------------------------------------


async def no_tunnel(project: Path, env: dict[str, str]) -> dict[str, Any]:
    service = Service(cwd=project, env=env)
    try:
        return data(await service.collect(ARGS, context(FakePeer())))
    finally:
        await service.close()


async def test_tunnel_off_gives_the_loopback_link_with_its_key(
    project: Path, base_env: dict[str, str], cloudflared: FakeCloudflared
) -> None:
    """OFFPROMPT_TUNNEL=off: http://127.0.0.1:<port>/r/<token>#k=…, and no cloudflared."""
    out = await no_tunnel(project, {**base_env, "OFFPROMPT_TUNNEL": "off"})
    assert out["url"].startswith("http://127.0.0.1:")
    assert ("#k=" in out["url"], cloudflared.starts()) == (True, [])


async def test_tunnel_off_note_says_why_and_asks_for_port_forwarding(
    project: Path, base_env: dict[str, str]
) -> None:
    """The note names OFFPROMPT_TUNNEL=off and the port the person must forward."""
    out = await no_tunnel(project, {**base_env, "OFFPROMPT_TUNNEL": "off"})
    port = out["url"].split(":")[2].split("/")[0]
    assert "OFFPROMPT_TUNNEL=off" in out["note"]
    assert f"ssh -L {port}:127.0.0.1:{port}" in out["note"]


async def test_missing_cloudflared_note_says_so(
    project: Path, base_env: dict[str, str], tmp_path: Path
) -> None:
    """With no cloudflared to run, the note says that is why there is no tunnel."""
    env = {**base_env, "OFFPROMPT_CLOUDFLARED": str(tmp_path / "nowhere")}
    out = await no_tunnel(project, env)
    assert "OFFPROMPT_CLOUDFLARED" in out["note"]
    assert out["url"].startswith("http://127.0.0.1:")


async def test_loopback_link_still_takes_a_sealed_post(
    project: Path, base_env: dict[str, str], canary: str
) -> None:
    """Forwarded or not, the loopback link of a remote request takes sealed values, and holds
    them for the code as through the tunnel: a remote request's page is reached from outside
    this machine either way."""
    service = Service(cwd=project, env={**base_env, "OFFPROMPT_TUNNEL": "off"})
    try:
        out = data(await service.collect(ARGS, context(FakePeer())))
        answer, _ = await asyncio.to_thread(sealed_submit, out["url"], {"API_KEY": canary})
        code = held_code(answer)
        assert not (project / ".env").exists()
        done = await confirm(service, out["request_id"], code)
    finally:
        await service.close()
    assert (done["status"], (project / ".env").read_text()) == ("written", f"API_KEY={canary}\n")


# -- the argument ---------------------------------------------------------------------------------


async def test_sandbox_argument_decides_where_the_environment_cannot_tell(
    project: Path, base_env: dict[str, str]
) -> None:
    """Linux with a display: sandbox=true makes the request remote (a #k= link)."""
    env = {**base_env, "OFFPROMPT_TUNNEL": "off", "DISPLAY": ":0"}
    del env["OFFPROMPT_SANDBOX"]
    for name in ("SSH_CONNECTION", "CLAUDE_CODE_REMOTE", "CODESPACES"):
        env.pop(name, None)
    service = Service(cwd=project, env=env, platform="linux")
    try:
        out = data(await service.collect({**ARGS, "sandbox": True}, context(FakePeer())))
    finally:
        await service.close()
    assert "#k=" in out["url"]


async def test_sandbox_argument_is_ignored_where_the_environment_tells(
    project: Path, base_env: dict[str, str], browser_log: Path
) -> None:
    """OFFPROMPT_SANDBOX=0 wins over sandbox=true: a local request, opened in the browser."""
    env = {**base_env, "OFFPROMPT_SANDBOX": "0", "OFFPROMPT_TTL": "1"}
    service = Service(cwd=project, env=env, platform="linux")
    try:
        out = data(await service.collect({**ARGS, "sandbox": True}, context(FakePeer())))
    finally:
        await service.close()
    ran = await asyncio.to_thread(browser_log.exists)
    assert (out["status"], "url" in out, ran) == ("expired", False, True)
