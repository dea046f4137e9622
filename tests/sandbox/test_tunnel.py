"""The tunnel: cloudflared started once and shared, verified through itself, stopped cleanly."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from offprompt.page import PageServer
from offprompt.store import RequestStore
from offprompt.tunnel import Tunnel, TunnelLink
from offprompt.tunnel.process import parse_hostname
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

from .conftest import FakeCloudflared
from .edge import FakeEdge


@pytest.fixture
async def page(tmp_path: Path) -> AsyncIterator[PageServer]:
    store = RequestStore()
    server = PageServer(store, Submitter(store, Journal(tmp_path / "journal.jsonl")))
    await server.start()
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def tunnel() -> AsyncIterator[Tunnel]:
    made = Tunnel(os.environ, budget=10)
    try:
        yield made
    finally:
        await made.close()


async def through_edge(url: str) -> int:
    """Status of a GET to `url` through the edge (the environment's HTTPS_PROXY)."""
    import ssl

    connector = aiohttp.TCPConnector(ssl=ssl.create_default_context())
    async with (
        aiohttp.ClientSession(connector=connector, trust_env=True) as session,
        session.get(url) as reply,
    ):
        return reply.status


async def gone(tunnel: Tunnel, page: PageServer) -> None:
    """Until the tunnel and the page server noticed cloudflared exited (at most 5 s)."""
    for _ in range(100):
        if tunnel.hostname is None and page.tunnel_host is None:
            return
        await asyncio.sleep(0.05)


# -- parsing --------------------------------------------------------------------------------------

BOX = "2024-12-20T10:00:00Z INF |  https://fancy-words-here-now.trycloudflare.com                 |"


def test_hostname_is_read_from_the_boxed_line() -> None:
    """The URL inside cloudflared's `|` box gives the hostname."""
    assert parse_hostname(BOX) == "fancy-words-here-now.trycloudflare.com"


@pytest.mark.parametrize(
    "line",
    [
        'ERR failed to request quick Tunnel: Post "https://api.trycloudflare.com/tunnel"',
        "INF |  https://api.trycloudflare.com  |",
        "INF https://fancy-words.trycloudflare.com",
        "INF |  https://fancy-words.trycloudflare.com.evil.example  |",
        "INF |  http://fancy-words.trycloudflare.com  |",
        "INF |  https://-bad.trycloudflare.com  |",
        "INF |  https://user@fancy.trycloudflare.com  |",
    ],
)
def test_other_lines_give_no_hostname(line: str) -> None:
    """Unboxed URLs, the API host, other domains and odd names are not the tunnel's URL."""
    assert parse_hostname(line) is None


# -- start, share, verify ----------------------------------------------------------------------


async def test_link_is_the_verified_tunnel_origin(
    edge: FakeEdge, cloudflared: FakeCloudflared, page: PageServer, tunnel: Tunnel
) -> None:
    """The origin is https://<the hostname cloudflared printed>, reached through the tunnel."""
    link = await tunnel.link(page)
    assert link == TunnelLink(f"https://{edge.registered[0]}")
    assert b"GET /r/" in edge.traffic()


async def test_cloudflared_gets_the_exact_arguments(
    edge: FakeEdge, cloudflared: FakeCloudflared, page: PageServer, tunnel: Tunnel
) -> None:
    """`tunnel --no-autoupdate --url http://127.0.0.1:<page port>`."""
    await tunnel.link(page)
    argv = cloudflared.starts()[0]["argv"]
    assert argv == ["tunnel", "--no-autoupdate", "--url", f"http://127.0.0.1:{page.port}"]


async def test_tunnel_is_started_once_and_shared(
    edge: FakeEdge, cloudflared: FakeCloudflared, page: PageServer, tunnel: Tunnel
) -> None:
    """Concurrent and later requests share one cloudflared."""
    links = await asyncio.gather(*(tunnel.link(page) for _ in range(3)))
    links.append(await tunnel.link(page))
    assert (len({link.origin for link in links}), len(cloudflared.starts())) == (1, 1)


async def test_probe_path_is_gone_after_verification(
    edge: FakeEdge, cloudflared: FakeCloudflared, page: PageServer, tunnel: Tunnel
) -> None:
    """The one-off probe path is 404 once the tunnel was verified."""
    await tunnel.link(page)
    probe = edge.traffic().split(b" ")[1].decode()
    assert await through_edge(f"https://{edge.registered[0]}{probe}") == 404


async def test_tunnel_host_passes_the_host_check_while_up(
    edge: FakeEdge, cloudflared: FakeCloudflared, page: PageServer, tunnel: Tunnel
) -> None:
    """While the tunnel is up its hostname is accepted (an unknown token is 404, not 421)."""
    await tunnel.link(page)
    assert await through_edge(f"https://{edge.registered[0]}/r/{'0' * 32}") == 404


async def test_tunnel_host_is_refused_after_close(
    edge: FakeEdge, cloudflared: FakeCloudflared, page: PageServer, tunnel: Tunnel
) -> None:
    """After close the page server no longer accepts the tunnel's hostname."""
    await tunnel.link(page)
    await tunnel.close()
    assert page.tunnel_host is None


async def test_close_stops_cloudflared(
    edge: FakeEdge, cloudflared: FakeCloudflared, page: PageServer, tunnel: Tunnel
) -> None:
    """close() terminates the child; its hostname stops routing at the edge."""
    await tunnel.link(page)
    await tunnel.close()
    assert (cloudflared.alive(), edge.live()) == ([], [])


async def test_cloudflared_ignoring_sigterm_is_killed(
    edge: FakeEdge,
    cloudflared: FakeCloudflared,
    page: PageServer,
    tunnel: Tunnel,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cloudflared that ignores SIGTERM is SIGKILLed after the grace period."""
    monkeypatch.setenv("FAKE_CLOUDFLARED_MODE", "stubborn")
    await tunnel.link(page)
    started = time.monotonic()
    await tunnel.close()
    assert (cloudflared.alive(), time.monotonic() - started < 5) == ([], True)


async def test_exited_tunnel_stops_being_accepted(
    edge: FakeEdge, cloudflared: FakeCloudflared, page: PageServer, tunnel: Tunnel
) -> None:
    """When cloudflared dies on its own, the page server forgets its hostname."""
    await tunnel.link(page)
    os.kill(cloudflared.alive()[0], 15)
    await gone(tunnel, page)
    assert (page.tunnel_host, tunnel.hostname) == (None, None)


async def test_exited_tunnel_is_started_again_on_the_next_request(
    edge: FakeEdge, cloudflared: FakeCloudflared, page: PageServer, tunnel: Tunnel
) -> None:
    """A tunnel that came up and later exited is replaced by a new one on demand."""
    first = await tunnel.link(page)
    os.kill(cloudflared.alive()[0], 15)
    await gone(tunnel, page)
    second = await tunnel.link(page)
    assert (first.origin != second.origin, len(cloudflared.starts())) == (True, 2)


# -- no tunnel, and why ---------------------------------------------------------------------------


async def test_tunnel_off_starts_nothing(
    cloudflared: FakeCloudflared, page: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OFFPROMPT_TUNNEL=off gives no origin, says so, and runs no cloudflared."""
    monkeypatch.setenv("OFFPROMPT_TUNNEL", "off")
    link = await Tunnel(os.environ).link(page)
    assert (link, cloudflared.starts()) == (TunnelLink(None, "OFFPROMPT_TUNNEL=off"), [])


async def test_cloudflared_that_exits_is_reported(
    cloudflared: FakeCloudflared,
    page: PageServer,
    tunnel: Tunnel,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cloudflared that exits before printing a URL gives a reason, not an origin."""
    monkeypatch.setenv("FAKE_CLOUDFLARED_MODE", "exit")
    link = await tunnel.link(page)
    assert (link.origin, link.problem) == (
        None,
        "cloudflared exited (code 1) before printing a tunnel URL",
    )


async def test_silent_cloudflared_times_out(
    cloudflared: FakeCloudflared, page: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No URL within the budget: a reason, and the child is stopped."""
    monkeypatch.setenv("FAKE_CLOUDFLARED_MODE", "silent")
    link = await Tunnel(os.environ, budget=1).link(page)
    assert (link.problem, cloudflared.alive()) == (
        "cloudflared printed no tunnel URL within 1 s",
        [],
    )


async def test_unreachable_tunnel_is_not_handed_out(
    edge: FakeEdge,
    cloudflared: FakeCloudflared,
    page: PageServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A URL that never reaches our server is not used: no origin, host dropped, child stopped."""
    monkeypatch.setenv("FAKE_CLOUDFLARED_MODE", "deaf")
    link = await Tunnel(os.environ, budget=1.5).link(page)
    assert link.origin is None
    assert "did not reach this server within 1.5 s" in (link.problem or "")
    assert (page.tunnel_host, cloudflared.alive()) == (None, [])


async def test_failed_start_is_not_retried(
    cloudflared: FakeCloudflared,
    page: PageServer,
    tunnel: Tunnel,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a failed start, later requests get the same reason without a new cloudflared."""
    monkeypatch.setenv("FAKE_CLOUDFLARED_MODE", "exit")
    first = await tunnel.link(page)
    second = await tunnel.link(page)
    assert (first == second, len(cloudflared.starts())) == (True, 1)


async def test_missing_cloudflared_is_reported(
    page: PageServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrong OFFPROMPT_CLOUDFLARED is the reason given."""
    monkeypatch.setenv("OFFPROMPT_CLOUDFLARED", str(tmp_path / "missing"))
    link = await Tunnel(os.environ).link(page)
    assert "OFFPROMPT_CLOUDFLARED" in (link.problem or "")
