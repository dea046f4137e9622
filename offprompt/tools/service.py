"""The runtime behind the tools: request store, page server and submitter, and the ladder.

A collect call validates its arguments, finds the project, creates a request, and gets the page
to the person: URL elicitation, then the browser, then a link in the result (DESIGN §4); or, for
a remote request, a sealed link through the tunnel at once (DESIGN §5).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from offprompt.errors import OffpromptError, ProjectError, RefusedRequest, TrackedFile
from offprompt.mcp.tool import ElicitOutcome, InputRequired, ToolContext, ToolResult
from offprompt.sandbox import Detection, detect
from offprompt.spec import GenerateSpec, SecretSpec, SinkSpec
from offprompt.tools import results

if TYPE_CHECKING:
    from offprompt.page.server import PageServer
    from offprompt.requests import Request, RequestStore
    from offprompt.submit import Submitter
    from offprompt.tunnel import Tunnel

log = logging.getLogger("offprompt")

ELICIT_KEY = "offprompt_page"
# Codex declines every non-https URL elicitation in 1-2 ms without showing it (DESIGN §4).
UNSEEN_HTTP_CLIENTS = frozenset({"codex-mcp-client"})
LOCAL_TTL = 300.0
REMOTE_TTL = 1800.0
STATE_TTL = 3600.0


def _number(env: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        log.warning("%s is not a number; using %s", name, default)
        return default
    return min(max(value, low), high)


def _elicitable(ctx: ToolContext, url: str) -> bool:
    """Step 1 applies: the client declared URL elicitation and would show this link."""
    if not ctx.supports_url_elicitation():
        return False
    return url.startswith("https://") or ctx.client_name not in UNSEEN_HTTP_CLIENTS


class Settings:
    """The environment's knobs (DESIGN §10), read once."""

    def __init__(self, env: Mapping[str, str], *, platform: str | None = None) -> None:
        self.ttl = _number(env, "OFFPROMPT_TTL", LOCAL_TTL, 1, 24 * 3600)
        self.await_seconds = _number(env, "OFFPROMPT_AWAIT_SECONDS", 60, 0, 3600)
        self.elicit_wait = _number(env, "OFFPROMPT_ELICIT_WAIT_MS", 1500, 0, 600_000) / 1000
        self.dialog_wait = _number(env, "OFFPROMPT_DIALOG_WAIT_MS", 10_000, 0, 600_000) / 1000
        self.sandbox: Detection = detect(env, platform)


class Service:
    """One per server process; everything heavy is created on first use."""

    def __init__(
        self,
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        platform: str | None = None,
    ) -> None:
        self._env = dict(os.environ if env is None else env)
        self._cwd = cwd
        self.settings = Settings(self._env, platform=platform)
        log.info("sandbox: %s (%s)", self.settings.sandbox.verdict, self.settings.sandbox.reason)
        self._store: RequestStore | None = None
        self._submitter: Submitter | None = None
        self._page: PageServer | None = None
        self._tunnel: Tunnel | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # -- parts, made lazily -----------------------------------------------------------------------

    @property
    def store(self) -> RequestStore:
        return self._parts()[0]

    @property
    def submitter(self) -> Submitter:
        return self._parts()[1]

    def _parts(self) -> tuple[RequestStore, Submitter]:
        if self._store is None or self._submitter is None:
            from offprompt.journal import Journal
            from offprompt.requests import RequestStore
            from offprompt.submit import Submitter

            self._store = RequestStore()
            self._submitter = Submitter(self._store, Journal())
        return self._store, self._submitter

    async def page(self) -> PageServer:
        if self._page is None:
            from offprompt.page.server import PageServer

            self._page = PageServer(self.store, self.submitter)
        await self._page.start()
        return self._page

    @property
    def tunnel(self) -> Tunnel:
        if self._tunnel is None:
            from offprompt.tunnel import Tunnel

            self._tunnel = Tunnel(self._env)
        return self._tunnel

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._store is not None:
            self._store.close_all()
        if self._tunnel is not None:
            await self._tunnel.close()
        if self._page is not None:
            await self._page.close()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- collect_secret -------------------------------------------------------------------------

    async def collect(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.state is not None:
            request = self.store.get(str(ctx.state.get("request_id", "")))
            if request is None:
                return ToolResult.refused(
                    "that request is no longer known (it closed over an hour ago). "
                    "Call collect_secret again without requestState."
                )
            return await self._ladder(request, ctx)
        try:
            secrets, sink = parse_arguments(args)
            project = await self._project(ctx)
            from offprompt import sinks

            sinks.resolve_target(project, sink)
        except (RefusedRequest, ProjectError) as err:
            return ToolResult.refused(str(err))
        remote = self.settings.sandbox.remote(args.get("sandbox"))
        request = self.store.create(
            secrets,
            sink,
            project,
            str(args["reason"]),
            ttl=REMOTE_TTL if remote else self.settings.ttl,
            client=ctx.client_name or None,
            remote=remote,
        )
        log.info("request %s: collecting %s", request.id, ", ".join(request.names))
        if all(s.generate is not None for s in secrets):
            return await self._generate_only(request)
        if remote:
            return await self._remote(request, ctx)
        return await self._ladder(request, ctx)

    async def _generate_only(self, request: Request) -> ToolResult:
        try:
            await self.submitter.submit(request, {})
        except TrackedFile as err:
            self.store.cancel(request)
            return ToolResult.refused(
                f"{err} Generated values are written without a page, so nobody can allow a "
                "tracked file: ask the person to add it to .gitignore, or choose another path."
            )
        except OffpromptError as err:
            self.store.cancel(request)
            return ToolResult.refused(str(err))
        return self._result(request)

    async def _project(self, ctx: ToolContext) -> Path:
        from offprompt import project

        cwd = self._cwd or Path.cwd()
        roots: list[str] = []
        if not project.usable(cwd) and ctx.supports_roots():
            roots = await ctx.roots(timeout=5.0) or []
        found = project.candidates(cwd=cwd, env=self._env, roots=roots, meta=ctx.meta)
        return project.choose(found, cwd)

    # -- the ladder -----------------------------------------------------------------------------

    async def _ladder(self, request: Request, ctx: ToolContext) -> ToolResult:
        """DESIGN §4: the host's dialog, else our browser, else the link; one tab at most."""
        if ctx.state is not None:
            request.delivery.dialog = False  # a retry: the host has left its dialog
        if request.status != "awaiting" or request.remote:
            return self._result(request)
        page = await self.page()
        url = page.url_for(request)
        if not _elicitable(ctx, url):
            return await self._browser(request, url, ctx, elicited=False)
        if ctx.modern:
            return await self._modern(request, url, ctx)
        return await self._legacy(request, url, ctx)

    async def _modern(self, request: Request, url: str, ctx: ToolContext) -> ToolResult:
        """2026-07-28: input_required, then the retry's answer decides."""
        delivery = request.delivery
        try:
            outcome = await self._elicit(request, url, ctx, wait=self.settings.elicit_wait)
        except InputRequired:
            # The dialog may be on screen from now on, and its "Open in browser" tells us
            # nothing: no tab of ours until the host answers, or until the wait passes with no
            # visit to the page (a host that never shows the dialog).
            delivery.dialog = True
            if delivery.dialog_timer is None:
                delivery.dialog_timer = self._spawn(self._dialog_wait(request, url))
            raise
        if delivery.dialog_timer is not None:
            delivery.dialog_timer.cancel()  # the opener it may have started is shielded
            delivery.dialog_timer = None
        log.info("request %s: URL elicitation answered %s", request.id, outcome)
        if outcome == "decline":
            return self._declined(request, url)
        # accept ("I'm done, continue", maybe without opening the page), cancel (Esc;
        # `claude -p`) or a malformed answer: step 2, which skips a page that is open already.
        return await self._browser(request, url, ctx, elicited=False)

    async def _legacy(self, request: Request, url: str, ctx: ToolContext) -> ToolResult:
        """2025-11-25: elicitation/create, answered within OFFPROMPT_ELICIT_WAIT_MS or not."""
        outcome = await self._elicit(request, url, ctx, wait=self.settings.elicit_wait)
        log.info("request %s: URL elicitation answered %s", request.id, outcome)
        if outcome == "decline":
            return self._declined(request, url)
        if outcome == "accept":  # the host opens the page
            return await self._block(request, ctx, elicited=True)
        # No answer in time: the dialog may still be showing, so it hears of the write. Cancel
        # or an error: it is gone. Either way step 2, unless the page was opened meanwhile.
        return await self._browser(request, url, ctx, elicited=outcome == "timeout")

    def _declined(self, request: Request, url: str) -> ToolResult:
        """DESIGN §4.1: no tab, ever; the request stays open and the agent asks the person."""
        request.delivery.declined = True
        if request.status != "awaiting":
            return self._result(request)
        request.extra["url"] = url
        return self._result(request, declined=True)

    async def _browser(
        self, request: Request, url: str, ctx: ToolContext, *, elicited: bool
    ) -> ToolResult:
        """Step 2 (skipped when the page is open already), then block; step 3 when it fails."""
        if request.status != "awaiting":
            return self._result(request)
        # Shielded: a cancelled call must not stop a browser that is being opened.
        if request.delivery.page_opened or await asyncio.shield(self._opening(request, url)):
            return await self._block(request, ctx, elicited=elicited)
        request.extra["url"] = url
        return self._result(request)

    # -- remote: a sealed link, at once (DESIGN §5) ----------------------------------------------

    async def _remote(self, request: Request, ctx: ToolContext) -> ToolResult:
        """Key pair, page server, tunnel (or why not), then `awaiting` with the link."""
        from offprompt.crypto.seal import SealKey
        from offprompt.page.server import SEAL_KEY

        key = SealKey()
        request.extra[SEAL_KEY] = key  # dropped with `extra` when the request closes
        page = await self.page()
        if self.tunnel.hostname is None:
            ctx.progress("Starting a tunnel to the page")
        link = await self.tunnel.link(page)
        if request.status != "awaiting":  # cancelled while the tunnel came up
            return self._result(request)
        url = f"{page.url_for(request, origin=link.origin)}#{key.fragment}"
        request.extra["url"] = url
        if link.problem is not None and page.port is not None:
            request.extra["link_note"] = results.no_tunnel_note(link.problem, page.port)
        log.info(
            "request %s: remote; link %s",
            request.id,
            "through the tunnel" if link.origin else "on loopback, for port forwarding",
        )
        if _elicitable(ctx, url) and not ctx.modern and ctx.peer.can_send_requests:
            self._spawn(self._offer(request, url, ctx))
        return self._result(request)

    async def _offer(self, request: Request, url: str, ctx: ToolContext) -> None:
        """Legacy URL elicitation of a remote link, sent without waiting for the answer; the
        completion notice follows the write."""
        ask = self._spawn(self._elicit_remote(request, url, ctx))
        status = await self.store.wait(request, timeout=self.store.expires_in(request) + 1)
        ask.cancel()
        if status == "written":
            ctx.elicitation_complete(request.id)

    async def _elicit_remote(self, request: Request, url: str, ctx: ToolContext) -> None:
        outcome = await self._elicit(request, url, ctx, wait=self.store.expires_in(request))
        log.info("request %s: URL elicitation answered %s", request.id, outcome)

    async def _elicit(
        self, request: Request, url: str, ctx: ToolContext, *, wait: float
    ) -> ElicitOutcome:
        """Offer the page through the host's URL elicitation (DESIGN §4 step 1)."""
        names = request.names
        return await ctx.elicit_url(
            key=ELICIT_KEY,
            url=url,
            message=f"offprompt is collecting {', '.join(names)}. "
            f"Open the page to type {'it' if len(names) == 1 else 'them'}.",
            elicitation_id=request.id,
            data={"request_id": request.id},
            wait=wait,
            state_ttl=STATE_TTL,
        )

    async def _dialog_wait(self, request: Request, url: str) -> None:
        """Step 2 for a 2026-07-28 dialog that got no retry and the page no visit in time."""
        await asyncio.sleep(self.settings.dialog_wait)
        delivery = request.delivery
        if request.status == "awaiting" and delivery.dialog and not delivery.page_opened:
            log.info("request %s: no answer to the dialog, nobody on the page", request.id)
            await asyncio.shield(self._opening(request, url))

    def _opening(self, request: Request, url: str) -> asyncio.Task[bool]:
        """The one attempt to open the browser for `request` (started on first call), so the
        dialog wait, a retry and a late answer never open two tabs."""
        delivery = request.delivery
        if delivery.opener is None:
            delivery.opener = asyncio.ensure_future(self._open(request, url))
        return delivery.opener

    async def _open(self, request: Request, url: str) -> bool:
        from offprompt import browser

        delivery = request.delivery
        # Checked when the opener runs, not when it was asked for: a decline or a visit may
        # have arrived in between.
        if delivery.declined:
            return False
        if delivery.page_opened:
            log.info("request %s: the page is open already; no browser opened", request.id)
            return True
        opened = await browser.open_url(url)
        log.info("request %s: browser %s", request.id, "opened" if opened else "did not open")
        delivery.browser_opened = opened
        return opened

    async def _block(self, request: Request, ctx: ToolContext, *, elicited: bool) -> ToolResult:
        """Wait for the write or the TTL; `elicited`: a legacy URL elicitation was sent, so the
        client hears that it completed."""
        ctx.progress(f"Waiting for the person to fill in {', '.join(request.names)}")
        await self.store.wait(request, timeout=self.store.expires_in(request) + 1)
        if request.status == "written" and elicited:
            ctx.elicitation_complete(request.id)
        return self._result(request, opened=True)

    def _result(
        self, request: Request, *, opened: bool = False, declined: bool = False
    ) -> ToolResult:
        url = request.extra.get("url")
        link_note = request.extra.get("link_note")
        delivery = request.delivery
        return results.build(
            request,
            url=url if isinstance(url, str) else None,
            expires_in=self.store.expires_in(request),
            opened=opened or delivery.browser_opened or delivery.page_opened,
            link_note=link_note if isinstance(link_note, str) else None,
            declined=declined,
        )

    # -- await_secret / cancel_secret -----------------------------------------------------------

    def _known(self, args: dict[str, Any]) -> Request | ToolResult:
        request = self.store.get(str(args["request_id"]))
        if request is None:
            return ToolResult.refused(
                f"no request {args['request_id']} is known to this server (it may have closed "
                "over an hour ago, or belong to another session). Call collect_secret again."
            )
        return request

    async def await_secret(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        request = self._known(args)
        if isinstance(request, ToolResult):
            return request
        if request.status == "awaiting":
            ctx.progress(f"Waiting for the person to fill in {', '.join(request.names)}")
            await self.store.wait(request, timeout=self.settings.await_seconds)
        return self._result(request)

    async def cancel_secret(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        request = self._known(args)
        if isinstance(request, ToolResult):
            return request
        if request.status == "awaiting" and not self.store.cancel(request):
            return ToolResult.refused(
                "the person is submitting this request right now; call await_secret instead."
            )
        return self._result(request)


def parse_arguments(args: dict[str, Any]) -> tuple[tuple[SecretSpec, ...], SinkSpec]:
    """Schema-valid arguments → specs; RefusedRequest for what the schema cannot say."""
    secrets: list[SecretSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(args["secrets"]):
        name = entry["name"]
        if name in seen:
            raise RefusedRequest(f"{name} is asked for twice; list each key once.")
        seen.add(name)
        chosen = [k for k in ("generate", "provider", "format") if k in entry]
        if len(chosen) > 1:
            raise RefusedRequest(
                f"secrets[{i}] ({name}) sets {' and '.join(chosen)}; use at most one of "
                "generate, provider and format per key."
            )
        if "provider" in entry or "format" in entry:
            _check_ref(name, entry.get("provider"), entry.get("format"))
        generate = None
        if "generate" in entry:
            g = entry["generate"]
            generate = GenerateSpec(
                bytes=int(g.get("bytes", 32)), encoding=g.get("encoding", "base64url")
            )
        secrets.append(
            SecretSpec(
                name=name,
                generate=generate,
                provider=entry.get("provider"),
                format=entry.get("format"),
                secret=bool(entry.get("secret", True)),
                caption=entry.get("caption"),
            )
        )
    raw_sink = args.get("sink") or {"kind": "dotenv"}
    kind = raw_sink.get("kind", "dotenv")
    path = raw_sink.get("path")
    if kind == "file":
        if not path:
            raise RefusedRequest(
                'a file sink needs a path, e.g. {"kind": "file", "path": "key.pem"}.'
            )
        if len(secrets) != 1:
            raise RefusedRequest(
                f"a file sink holds exactly one value, but {len(secrets)} keys were asked for; "
                "use one collect_secret call per file, or the dotenv sink."
            )
    return tuple(secrets), SinkSpec(kind=kind, path=path or ".env")


def _check_ref(name: str, provider: str | None, format: str | None) -> None:
    """An ambiguous or unknown provider ref is refused with the refs to choose from."""
    from offprompt import registry

    try:
        registry.resolve(name, provider, format)
    except registry.RegistryError as err:
        raise RefusedRequest(f"{name}: {err}") from None
