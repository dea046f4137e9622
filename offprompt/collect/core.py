"""The collect core: make a request, get its page to the person, say what happened.

The ladder (DESIGN §4) and remote mode (DESIGN §5) as steps that return a `Step`: `Ask` the
client (2026-07-28), `Wait` for the write, `Report` now, or `Refused`. Nothing here speaks
JSON-RPC or prints; both doors (`offprompt.tools`, `offprompt.terminal`) go through it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from offprompt import hosts
from offprompt.collect.confirm import Codes
from offprompt.collect.settings import REMOTE_TTL, Settings
from offprompt.collect.steps import Ask, AskCode, Client, Refused, Report, Step, Wait
from offprompt.errors import (
    NotLinked,
    OffpromptError,
    PortUnavailable,
    ProjectError,
    RefusedRequest,
    TrackedFile,
)
from offprompt.offloop import run_off_loop

if TYPE_CHECKING:
    from offprompt.collect.parts import Parts
    from offprompt.collect.request import CollectRequest
    from offprompt.sinks.destinations import Planned
    from offprompt.spec import DialogAnswer
    from offprompt.store import RequestRecord, RequestStore

__all__ = ["STATE_TTL", "Collector"]

log = logging.getLogger("offprompt")

STATE_TTL = 3600.0
"""How long a 2026-07-28 requestState for an `Ask` lives."""


@dataclass(frozen=True)
class _Planned:
    """What `Collector._plan` found on disk for one request."""

    shown: str
    also: tuple[Planned, ...]
    remote: bool


def _message(names: tuple[str, ...]) -> str:
    return (
        f"offprompt is collecting {', '.join(names)}. "
        f"Open the page to type {'it' if len(names) == 1 else 'them'}."
    )


class Collector:
    """One per process and door; its parts are built on first use unless passed in."""

    def __init__(self, settings: Settings, parts: Parts | None = None) -> None:
        self.settings = settings
        self._parts = parts
        self._tasks: set[asyncio.Task[None]] = set()
        self.codes = Codes(lambda: self.parts, settings.await_seconds)
        log.info("sandbox: %s (%s)", settings.sandbox.verdict, settings.sandbox.reason)
        # A masked write a killed process left half done is undone at this start (where the
        # file still holds what it wrote), not only at that file's next write (DESIGN §8).
        from offprompt.sinks.atomic import settle_interrupted

        settle_interrupted(settings.journal_path.parent)

    @property
    def parts(self) -> Parts:
        if self._parts is None:
            from offprompt.collect.parts import Parts

            self._parts = Parts.build(self.settings)
        return self._parts

    @property
    def store(self) -> RequestStore:
        return self.parts.store

    async def close(self) -> None:
        """Stop everything this core started: tasks, open requests, tunnel, page server."""
        for task in list(self._tasks):
            task.cancel()
        parts = self._parts
        if parts is None:
            return
        parts.store.close_all()
        await parts.tunnel.close()
        await parts.page.close()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- a new request --------------------------------------------------------------------------

    def create(
        self,
        ask: CollectRequest,
        *,
        project: Path,
        client: str | None,
        ttl: float | None = None,
    ) -> RequestRecord | Refused:
        """The open request for `ask` in `project`, remote or local as the environment says;
        `ttl` replaces the default lifetime (local: OFFPROMPT_TTL, remote: 30 min)."""
        planned = self._plan(ask, project)
        if isinstance(planned, Refused):
            return planned
        return self._record(ask, project, client, ttl, planned)

    async def create_off_loop(
        self,
        ask: CollectRequest,
        *,
        project: Path,
        client: str | None,
        ttl: float | None = None,
    ) -> RequestRecord | Refused:
        """As `create`, with the file work (the target's path, the project's files `also`
        reads, git) in a worker thread, so the protocol loop keeps answering meanwhile; the
        request itself is made on the loop, where the store lives."""
        try:
            planned = await run_off_loop(self._plan, ask, project)
        except ProjectError as err:  # every file reader is stuck on files that do not answer
            return Refused(str(err), "project")
        if isinstance(planned, Refused):
            return planned
        return self._record(ask, project, client, ttl, planned)

    def _plan(self, ask: CollectRequest, project: Path) -> _Planned | Refused:
        """Everything `create` reads from disk and the environment: the target as shown, the
        `also` destinations, and whether the request is remote."""
        from offprompt import sinks
        from offprompt.sinks import destinations

        if self.settings.port_problem is not None:
            return Refused(self.settings.port_problem, "environment")
        try:
            shown = sinks.display_of(project, ask.sink)
            # Linked or refused here, before any page: the agent cannot send a value anywhere
            # the project's own files do not already point to (DESIGN §13).
            also = destinations.plan(project, ask.also, ask.names, env=self.settings.env)
        except NotLinked as err:  # the project's files, not the arguments
            return Refused(str(err), "project")
        except RefusedRequest as err:
            return Refused(str(err), "arguments")
        except ProjectError as err:
            return Refused(str(err), "project")
        return _Planned(shown, also, self.settings.sandbox.remote(ask.sandbox))

    def _record(
        self,
        ask: CollectRequest,
        project: Path,
        client: str | None,
        ttl: float | None,
        planned: _Planned,
    ) -> RequestRecord:
        if ttl is None:
            ttl = REMOTE_TTL if planned.remote else self.settings.ttl
        request = self.store.create(
            ask.secrets,
            ask.sink,
            project,
            ask.reason,
            ttl=ttl,
            client=client or None,
            remote=planned.remote,
            display=planned.shown,
            also=planned.also,
            reason_by=ask.reason_by,
        )
        log.info("request %s: collecting %s", request.id, ", ".join(request.names))
        return request

    async def deliver(self, request: RequestRecord, client: Client) -> Step:
        """Get a new request's page to the person: generated keys at once, a remote request's
        sealed link, or the local ladder."""
        # Every key made by offprompt, only to the file: no page (DESIGN §3.1). With `also`,
        # the person sees on the page where values go before they leave.
        if not request.also and all(s.generate is not None for s in request.secrets):
            return await self._generate_only(request)
        try:
            if request.remote:
                return await self._remote(request, client)
            return await self._ladder(request, client, None)
        except PortUnavailable as err:
            self.store.cancel(request)  # no page for it, so nobody could ever fill it in
            return Refused(str(err), "environment")

    async def resume(
        self, request: RequestRecord, client: Client, answer: DialogAnswer | None
    ) -> Step:
        """A 2026-07-28 retry after an `Ask`: the host has left its dialog. `answer` is what
        the retry carried; None (it carried nothing for us) asks again."""
        request.delivery.dialog = False
        return await self._ladder(request, client, answer)

    async def wait(self, step: Wait, client: Client) -> Report:
        """Block until the write or the TTL; a legacy elicitation hears that it completed."""
        request = step.request
        client.progress(f"Waiting for the person to fill in {', '.join(request.names)}")
        await self.store.wait(request, timeout=self.store.expires_in(request) + 1)
        if request.status == "written" and step.elicited:
            client.elicitation_complete(request.id)
        return Report(request, opened=True)

    async def _generate_only(self, request: RequestRecord) -> Step:
        try:
            await self.parts.submitter.submit(request, {})
        except TrackedFile as err:
            self.store.cancel(request)
            return Refused(
                f"{err} Generated values are written without a page, so nobody can allow a "
                "tracked file: ask the person to add it to .gitignore, or choose another path.",
                "write",
            )
        except OffpromptError as err:
            self.store.cancel(request)
            return Refused(str(err), "write")
        return Report(request)

    # -- an existing request --------------------------------------------------------------------

    def known(self, request_id: str) -> RequestRecord | None:
        return self.store.get(request_id)

    async def await_(self, request: RequestRecord, client: Client) -> Report:
        """Wait up to OFFPROMPT_AWAIT_SECONDS for the write (await_secret), or until a remote
        submit is held for its confirmation code (then the code is to be asked for)."""
        if request.shown_status == "awaiting":
            client.progress(f"Waiting for the person to fill in {', '.join(request.names)}")
            await self.store.wait_shown(request, timeout=self.settings.await_seconds)
        return Report(request)

    async def confirm(self, request: RequestRecord, typed: str) -> Report | Refused:
        """The confirmation code the person typed (DESIGN §17): the right one writes the held
        submission, a wrong one costs a try (`Codes.confirm`)."""
        return await self.codes.confirm(request, typed)

    async def ask_code(self, report: Report, client: Client) -> Report | AskCode | Refused:
        """A submit held for its code: ask the host's form dialog, where it has one."""
        return await self.codes.ask(report, client)

    async def answer_code(
        self, request: RequestRecord, client: Client, typed: str | None, answered: bool
    ) -> Report | AskCode | Refused:
        """A 2026-07-28 retry after an `AskCode`, with what the form brought."""
        return await self.codes.answer(request, client, typed, answered)

    def cancel(self, request: RequestRecord) -> bool:
        """Close an awaiting request; False while the person's submit is being written."""
        return request.status != "awaiting" or self.store.cancel(request)

    # -- the ladder (DESIGN §4) -----------------------------------------------------------------

    def _elicitable(self, client: Client, url: str) -> bool:
        """Step 1 applies: the client declared URL elicitation and would show this link."""
        if not client.url_elicitation:
            return False
        # A client that declines a non-https link without showing it (Codex's, DESIGN §4):
        # its host says so (`offprompt.hosts`).
        return url.startswith("https://") or not any(
            client.name in h.get("declines_http", ()) for h in hosts.HOSTS
        )

    async def _ladder(
        self, request: RequestRecord, client: Client, answer: DialogAnswer | None
    ) -> Step:
        """The host's dialog, else our browser, else the link; one tab at most."""
        if request.status != "awaiting" or request.remote:
            return Report(request)
        page = self.parts.page
        await page.start()
        url = page.url_for(request)
        request.delivery.url = url
        if not self._elicitable(client, url):
            return await self._browser(request, url, elicited=False)
        if client.modern:
            return await self._modern(request, url, answer)
        return await self._legacy(request, url, client)

    async def _modern(self, request: RequestRecord, url: str, answer: DialogAnswer | None) -> Step:
        """2026-07-28: ask, then the retry's answer decides."""
        delivery = request.delivery
        if answer is None:
            # The dialog may be on screen from now on, and its "Open in browser" tells us
            # nothing: no tab of ours until the host answers, or until the wait passes with no
            # visit to the page (a host that never shows the dialog).
            delivery.dialog = True
            if delivery.dialog_timer is None:
                delivery.dialog_timer = self._spawn(self._dialog_wait(request, url))
            return Ask(request.id, url, _message(request.names), STATE_TTL)
        if delivery.dialog_timer is not None:
            delivery.dialog_timer.cancel()  # the opener it may have started is shielded
            delivery.dialog_timer = None
        log.info("request %s: URL elicitation answered %s", request.id, answer)
        if answer == "decline":
            return self._declined(request)
        # accept ("I'm done, continue", maybe without opening the page), cancel (Esc;
        # `claude -p`) or a malformed answer: step 2, which skips a page that is open already.
        return await self._browser(request, url, elicited=False)

    async def _legacy(self, request: RequestRecord, url: str, client: Client) -> Step:
        """2025-11-25: elicitation/create, answered within OFFPROMPT_ELICIT_WAIT_MS or not."""
        answer = await client.elicit_url(
            url=url,
            message=_message(request.names),
            elicitation_id=request.id,
            wait=self.settings.elicit_wait,
        )
        log.info("request %s: URL elicitation answered %s", request.id, answer)
        if answer == "decline":
            return self._declined(request)
        if answer == "accept":  # the host opens the page
            return Wait(request, elicited=True)
        # No answer in time: the dialog may still be showing, so it hears of the write. Cancel
        # or an error: it is gone. Either way step 2, unless the page was opened meanwhile.
        return await self._browser(request, url, elicited=answer == "timeout")

    def _declined(self, request: RequestRecord) -> Report:
        """DESIGN §4.1: no tab, ever; the request stays open and the agent asks the person."""
        request.delivery.declined = True
        if request.status != "awaiting":
            return Report(request)
        request.delivery.hand_out = True
        return Report(request, declined=True)

    async def _browser(self, request: RequestRecord, url: str, *, elicited: bool) -> Step:
        """Step 2 (skipped when the page is open already), then wait; step 3 when it fails."""
        if request.status != "awaiting":
            return Report(request)
        # Shielded: a cancelled call must not stop a browser that is being opened.
        if request.delivery.page_opened or await asyncio.shield(self._opening(request, url)):
            return Wait(request, elicited=elicited)
        request.delivery.hand_out = True
        return Report(request)

    async def _dialog_wait(self, request: RequestRecord, url: str) -> None:
        """Step 2 for a 2026-07-28 dialog that got no retry and the page no visit in time."""
        await asyncio.sleep(self.settings.dialog_wait)
        delivery = request.delivery
        if request.status == "awaiting" and delivery.dialog and not delivery.page_opened:
            log.info("request %s: no answer to the dialog, nobody on the page", request.id)
            await asyncio.shield(self._opening(request, url))

    def _opening(self, request: RequestRecord, url: str) -> asyncio.Task[bool]:
        """The one attempt to open the browser for `request` (started on first call), so the
        dialog wait, a retry and a late answer never open two tabs."""
        delivery = request.delivery
        if delivery.opener is None:
            delivery.opener = asyncio.ensure_future(self._open(request, url))
        return delivery.opener

    async def _open(self, request: RequestRecord, url: str) -> bool:
        delivery = request.delivery
        # Checked when the opener runs, not when it was asked for: a decline or a visit may
        # have arrived in between. A remote request never runs the opener (DESIGN §5).
        if delivery.declined or request.remote:
            return False
        if delivery.page_opened:
            log.info("request %s: the page is open already; no browser opened", request.id)
            return True
        opened = await self.parts.opener.open(url)
        log.info("request %s: browser %s", request.id, "opened" if opened else "did not open")
        delivery.browser_opened = opened
        return opened

    # -- remote: a sealed link, at once (DESIGN §5) ----------------------------------------------

    async def _remote(self, request: RequestRecord, client: Client) -> Step:
        """Key pair, page server, tunnel (or why not), then the link to hand out."""
        from offprompt.crypto.confirm import new_confirm_key
        from offprompt.crypto.seal import SealKey

        delivery = request.delivery
        key = SealKey()
        delivery.seal_key = key  # dropped when the request closes
        # Every remote submit is held until the code this key makes comes back (DESIGN §17).
        delivery.confirm_key = new_confirm_key()
        page, tunnel = self.parts.page, self.parts.tunnel
        await page.start()
        if tunnel.hostname is None and not tunnel.off:
            client.progress("Starting a tunnel to the page")
        link = await tunnel.link(page)
        if request.status != "awaiting":  # cancelled while the tunnel came up
            return Report(request)
        url = f"{page.url_for(request, origin=link.origin)}#{key.fragment}"
        delivery.url, delivery.hand_out = url, True
        if link.problem is not None and page.port is not None:
            delivery.tunnel_problem, delivery.port = link.problem, page.port
        log.info(
            "request %s: remote; link %s",
            request.id,
            "through the tunnel" if link.origin else "on loopback, for port forwarding",
        )
        if self._elicitable(client, url) and not client.modern and client.can_send_requests:
            self._spawn(self._offer(request, url, client))
        return Report(request)

    async def _offer(self, request: RequestRecord, url: str, client: Client) -> None:
        """Legacy URL elicitation of a remote link, sent without waiting for the answer; the
        completion notice follows the write."""
        ask = self._spawn(self._elicit_remote(request, url, client))
        status = await self.store.wait(request, timeout=self.store.expires_in(request) + 1)
        ask.cancel()
        if status == "written":
            client.elicitation_complete(request.id)

    async def _elicit_remote(self, request: RequestRecord, url: str, client: Client) -> None:
        answer = await client.elicit_url(
            url=url,
            message=_message(request.names),
            elicitation_id=request.id,
            wait=self.store.expires_in(request),
        )
        log.info("request %s: URL elicitation answered %s", request.id, answer)
