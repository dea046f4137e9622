"""The MCP door into the collect core: a tool call's context as a `Client`, steps as results.

Arguments become a validated request (`arguments`), the core runs the ladder
(`offprompt.collect.core`), and each step it returns becomes a result or, for an `Ask`, the
`input_required` answer only this layer knows how to give.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from offprompt import disk
from offprompt.collect.core import Collector
from offprompt.collect.settings import Settings
from offprompt.collect.steps import Ask, AskCode, Refused, Report, Step, Wait
from offprompt.errors import ProjectError, RefusedRequest, Unreadable
from offprompt.mcp.tool import InputRequired, ToolContext, ToolResult
from offprompt.offloop import run_off_loop
from offprompt.tools import arguments, results

if TYPE_CHECKING:
    from offprompt.collect.parts import Parts
    from offprompt.spec import DialogAnswer
    from offprompt.store import RequestRecord, RequestStore

log = logging.getLogger("offprompt")

ELICIT_KEY: Final = "offprompt_page"
"""Where a 2026-07-28 retry carries the answer to our URL elicitation (`inputResponses`)."""
CODE_KEY: Final = "offprompt_code"
"""Where a 2026-07-28 retry carries the confirmation code from our form (`inputResponses`)."""
CODE_FORM: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "code": {
            "type": "string",
            "title": "Confirmation code",
            "description": "The 7 characters your offprompt page shows (case and hyphen do not "
            "matter).",
            "minLength": 7,
            "maxLength": 32,
        }
    },
    "required": ["code"],
}
"""The form the host shows for the confirmation code (DESIGN §17): one short text field."""


def _same_file(a: RequestRecord, b: RequestRecord) -> bool:
    """Both requests write to the same file: project, sink kind and path as resolved."""
    return a.project == b.project and a.sink.kind == b.sink.kind and a.display == b.display


def _same_also(a: RequestRecord, b: RequestRecord) -> bool:
    return {d.spec for d in a.also} == {d.spec for d in b.also}


class McpClient:
    """The `Client` the collect core talks to during one tool call."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx

    @property
    def name(self) -> str:
        return self._ctx.client_name

    @property
    def modern(self) -> bool:
        return self._ctx.modern

    @property
    def url_elicitation(self) -> bool:
        return self._ctx.supports_url_elicitation()

    @property
    def can_send_requests(self) -> bool:
        return self._ctx.peer.can_send_requests

    def progress(self, message: str) -> None:
        self._ctx.progress(message)

    async def elicit_url(
        self, *, url: str, message: str, elicitation_id: str, wait: float
    ) -> DialogAnswer:
        return await self._ctx.elicit_url(
            url=url, message=message, elicitation_id=elicitation_id, wait=wait
        )

    def elicitation_complete(self, elicitation_id: str) -> None:
        self._ctx.elicitation_complete(elicitation_id)

    @property
    def form_elicitation(self) -> bool:
        return self._ctx.supports_form_elicitation()

    async def elicit_code(self, *, message: str, wait: float) -> str | None:
        answer = await self._ctx.elicit_form(message=message, schema=CODE_FORM, wait=wait)
        return answer.text("code")


class Service:
    """The tools' side of one server process: settings read once, one collect core."""

    def __init__(
        self,
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        platform: str | None = None,
        settings: Settings | None = None,
        parts: Parts | None = None,
    ) -> None:
        """`settings` (else read from `env`, else the process environment) and `parts` (else
        built on first use) are what tests replace."""
        self._cwd = cwd
        self.settings = settings or Settings.read(env, platform=platform)
        self.core = Collector(self.settings, parts)

    @property
    def store(self) -> RequestStore:
        return self.core.store

    async def close(self) -> None:
        await self.core.close()

    # -- collect_secret -------------------------------------------------------------------------

    async def collect(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult | InputRequired:
        client = McpClient(ctx)
        if ctx.state is not None:  # a 2026-07-28 retry after our Ask (or AskCode)
            request = self.core.known(str(ctx.state.get("request_id", "")))
            if request is None:
                return ToolResult.refused(
                    "that request is no longer known (it closed over an hour ago). "
                    "Call collect_secret again without requestState."
                )
            if ctx.state.get("ask") == "code":
                return await self._code_retry(request, ctx)
            answer = ctx.elicitation_answer(ELICIT_KEY)
            return await self._answer(await self.core.resume(request, client, answer), ctx)
        try:
            asked = arguments.collect_request(args)
            cwd = self._cwd or Path.cwd()
            project = await arguments.project_for(ctx, cwd=cwd, env=self.settings.env)
        except (RefusedRequest, ProjectError) as err:
            return ToolResult.refused(str(err))
        made = await self.core.create_off_loop(asked, project=project, client=ctx.client_name)
        if isinstance(made, Refused):
            return ToolResult.refused(made.message)
        # Made and checked in one step of the loop, so of two calls arriving together one opens
        # the page and the other finds it open.
        repeated = self._already_open(made)
        if isinstance(repeated, Report):  # the open request is held for its code
            return await self._answer(repeated, ctx)
        if repeated is not None:
            return repeated
        return await self._answer(await self.core.deliver(made, client), ctx)

    def _already_open(self, made: RequestRecord) -> ToolResult | Report | None:
        """None when no open request of this session asks for any of `made`'s keys for the
        same file; else `made` is dropped (it has no page yet, so no tab) and the answer is the
        open request's state when both ask for the same keys and destinations, else a refusal.

        A host that moved a waiting call to the background (Claude Code, after 120 s) can lead
        the model to call again; a second page for the same keys would be a second tab, and two
        pages racing to write one key."""
        for other in self.store.awaiting():
            if other is made or not _same_file(other, made):
                continue
            shared = [n for n in made.names if n in other.names]
            if not shared:
                continue
            self.store.cancel(made)
            if set(other.names) == set(made.names) and _same_also(other, made):
                log.info(
                    "request %s: collect_secret asked again for %s; answered with the open request",
                    other.id,
                    ", ".join(other.names),
                )
                if other.shown_status == "confirm":
                    return Report(other)  # its code is asked for, as await_secret would
                return self._result(Report(other), repeated=True)
            return ToolResult.refused(
                f"{', '.join(shared)} {'is' if len(shared) == 1 else 'are'} already being "
                f"collected by request {other.id} ({', '.join(other.names)}), whose page is open "
                f"for the person. Wait for it (await_secret with request_id {other.id}), or "
                "close it with cancel_secret and then ask for every key in one call."
            )
        return None

    async def _answer(
        self, step: Step, ctx: ToolContext, *, ask_code: bool = True
    ) -> ToolResult | InputRequired:
        """The step as this call's answer. `ask_code`: a submit held for its confirmation code
        is asked for in the host's form dialog where it has one (DESIGN §17); False after the
        person declined or dismissed that dialog, so the result asks through the agent."""
        if isinstance(step, Ask):
            return ctx.ask_url(
                key=ELICIT_KEY,
                url=step.url,
                message=step.message,
                data={"request_id": step.request_id},
                state_ttl=step.ttl,
            )
        if isinstance(step, Wait):
            step = await self.core.wait(step, McpClient(ctx))
        if isinstance(step, Report) and ask_code and step.confirmed is None:
            step = await self.core.ask_code(step, McpClient(ctx))
        if isinstance(step, AskCode):
            return ctx.ask_form(
                key=CODE_KEY,
                message=step.message,
                schema=CODE_FORM,
                data={"request_id": step.request_id, "ask": "code"},
                state_ttl=step.ttl,
            )
        if isinstance(step, Refused):
            return ToolResult.refused(step.message)
        return self._result(step)

    async def _code_retry(
        self, request: RequestRecord, ctx: ToolContext
    ) -> ToolResult | InputRequired:
        """A 2026-07-28 retry after our code form: what the person typed there, if anything."""
        answer = ctx.form_answer(CODE_KEY)
        typed = answer.text("code") if answer is not None else None
        step = await self.core.answer_code(request, McpClient(ctx), typed, answer is not None)
        return await self._answer(step, ctx, ask_code=False)

    def _result(self, report: Report, *, repeated: bool = False) -> ToolResult:
        request = report.request
        delivery = request.delivery
        note = None
        if delivery.tunnel_problem is not None and delivery.port is not None:
            note = results.no_tunnel_note(delivery.tunnel_problem, delivery.port)
        return results.build(
            request,
            url=delivery.url if delivery.hand_out else None,
            expires_in=self.store.expires_in(request),
            opened=report.opened or delivery.browser_opened or delivery.page_opened,
            link_note=note,
            declined=report.declined,
            repeated=repeated,
            confirmed=report.confirmed,
        )

    # -- await_secret / cancel_secret -----------------------------------------------------------

    def _known(self, args: dict[str, Any]) -> RequestRecord | ToolResult:
        request = self.core.known(str(args["request_id"]))
        if request is None:
            return ToolResult.refused(
                f"no request {args['request_id']} is known to this server (it may have closed "
                "over an hour ago, or belong to another session). Call collect_secret again."
            )
        return request

    async def await_secret(
        self, args: dict[str, Any], ctx: ToolContext
    ) -> ToolResult | InputRequired:
        request = self._known(args)
        if isinstance(request, ToolResult):
            return request
        if ctx.state is not None and ctx.state.get("ask") == "code":  # a retry after AskCode
            return await self._code_retry(request, ctx)
        typed = args.get("confirm")
        if isinstance(typed, str):  # the code the person read on their page (DESIGN §17)
            confirmed = await self.core.confirm(request, typed)
            if isinstance(confirmed, Refused):
                return ToolResult.refused(confirmed.message)
            return self._result(confirmed)
        return await self._answer(await self.core.await_(request, McpClient(ctx)), ctx)

    async def cancel_secret(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        request = self._known(args)
        if isinstance(request, ToolResult):
            return request
        if not self.core.cancel(request):
            return ToolResult.refused(
                "the person is submitting this request right now; call await_secret instead."
            )
        return self._result(Report(request))

    # -- secret_status ---------------------------------------------------------------------------

    async def secret_status(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Names and statuses only (DESIGN §12); every problem is a refusal, never a crash."""
        from offprompt import status

        try:
            cwd = self._cwd or Path.cwd()
            project = await arguments.project_for(ctx, cwd=cwd, env=self.settings.env)
            # Off the event loop: a big file must not hold up `ping` or another call.
            found = await run_off_loop(
                status.report,
                project,
                str(args.get("path", ".env")),
                args.get("names"),
                journal=self.settings.journal_path,
            )
        except (RefusedRequest, ProjectError, Unreadable) as err:
            return ToolResult.refused(str(err))
        except OSError as err:
            # A file system that fails under the read (a hung mount let go answers ENOTCONN
            # wherever the call was waiting): a refusal naming the cause, never a crash.
            return ToolResult.refused(
                f"offprompt could not read the project's files ({disk.reason(err)}), so it"
                " cannot tell which keys are set; check the folder and call secret_status again."
            )
        return ToolResult.of(found.to_json())
