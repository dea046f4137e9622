"""The loopback page application (DESIGN §6, §17): app factory, guard middleware, the routes.

It reads requests from the store and hands submissions to the Submitter; it never writes a file.
`loopback.PageServer` binds the socket and serves this application on it.
"""

import asyncio
import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from aiohttp import web
from aiohttp.typedefs import Handler

from offprompt import sinks
from offprompt.crypto.tokens import same
from offprompt.errors import (
    CheckRejected,
    OffpromptError,
    Refusal,
    TrackedFile,
    ValidationFailed,
)
from offprompt.offloop import run_off_loop
from offprompt.page import claim, keyring, loopback, render
from offprompt.page.answers import NOT_THIS_PAGE, answer_for, kind
from offprompt.page.clients import display_name
from offprompt.page.forms import MAX_BODY, FormUnreadable, read_form
from offprompt.page.guards import (
    fetch_site_allowed,
    host_allowed,
    on_loopback,
    origin_allowed,
    prefers_json,
    speculative,
)
from offprompt.page.loopback import PageSettings
from offprompt.page.responses import closed, harden, html, json_answer, refuse
from offprompt.page.submission import BadSubmission, Submission, read_submission
from offprompt.store import Held, RequestRecord, RequestStore
from offprompt.write.submit import Submitter

__all__ = ["MAX_BODY", "create_app", "protocol_logger"]

_TOKEN: Final = re.compile(r"[0-9a-f]{32}")
T = TypeVar("T")

_log = logging.getLogger("offprompt")


STORE: Final = web.AppKey("store", RequestStore)
SUBMITTER: Final = web.AppKey("submitter", Submitter)
SETTINGS: Final = web.AppKey("settings", PageSettings)
CSP_NONCE: Final = web.RequestKey("csp_nonce", str)
WANTS_JSON: Final = web.RequestKey("wants_json", bool)
SEALED_PAGE: Final = web.RequestKey("sealed_page", bool)


def _render_refusal(request: web.Request, refusal: Refusal) -> web.Response:
    if request.get(WANTS_JSON, False):
        return json_answer({"error": refusal.text}, refusal.status)
    nonce = request[CSP_NONCE]
    return html(render.render_message(refusal.title, refusal.text, csp_nonce=nonce), refusal.status)


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """DESIGN §6 steps 1-2 for every path, then the handler; headers on every answer."""
    nonce = secrets.token_urlsafe(18)
    request[CSP_NONCE] = nonce
    route = request.match_info.route
    request[WANTS_JSON] = route.name == "status" or prefers_json(request.headers.get("Accept"))
    tunnel = request.app[SETTINGS].tunnel_host
    response: web.StreamResponse
    try:
        if not host_allowed(request.headers.getall("Host", []), tunnel):
            raise refuse(421)
        if not fetch_site_allowed(request.headers.getall("Sec-Fetch-Site", [])):
            raise refuse(403)
        if not origin_allowed(request.headers.getall("Origin", []), tunnel):
            raise refuse(403)
        response = await handler(request)
    except Refusal as refusal:
        response = _render_refusal(request, refusal)
    except web.HTTPException as exc:  # the router's 404/405, aiohttp's 413
        response = _render_refusal(request, refuse(exc.status))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the handler boundary: log the kind only, answer without detail
        _log.error("page: %s %s failed (%s)", request.method, route.name or "-", kind(exc))
        response = _render_refusal(request, refuse(500))
    harden(response, nonce, sealed=request.get(SEALED_PAGE, False))
    return response


# -- handlers ----------------------------------------------------------------------------------


def _as_sent(request: web.Request) -> bool:
    """Whether the path was sent as the route spells it: no query (not even a bare `?`), no
    percent-encoding and nothing the URL parser normalised, so `/r/%61bc…` names no token."""
    return "?" not in request.raw_path and request.raw_path == request.path


def _lookup(request: web.Request) -> RequestRecord:
    """The request this URL names, or 404: unknown token, malformed token, any query, or a
    path not matched as sent (percent-encoded)."""
    if not _as_sent(request):
        raise refuse(404)
    token = request.match_info.get("token", "")
    if not _TOKEN.fullmatch(token):
        raise refuse(404)
    found = request.app[STORE].by_token(token)
    if found is None:
        raise refuse(404)
    return found


async def _inspect(req: RequestRecord) -> tuple[sinks.Target | None, str | None]:
    """The destination as it is now, or why it cannot be checked (shown on the form).

    Off the loop in offloop's bounded daemon threads, not the loop's executor: a target on a
    file system that never answers must neither hold the server's exit nor pile up threads;
    past the bound, the ProjectError is the form's usual "cannot check the file" line."""
    try:
        target = await run_off_loop(sinks.inspect_target, req.project, req.sink, req.names)
    except OffpromptError as exc:
        return None, str(exc)
    return target, None


async def _form(
    request: web.Request,
    req: RequestRecord,
    *,
    status: int = 200,
    state: render.FormState | None = None,
    handed: bool = True,
) -> web.Response:
    request[SEALED_PAGE] = req.remote
    target, problem = await _inspect(req)
    body = render.render_form(
        req,
        target,
        keyring=await keyring.offered(req),
        csp_nonce=request[CSP_NONCE],
        expires_in=request.app[STORE].expires_in(req),
        target_problem=problem,
        state=state,
        checks=request.app[SUBMITTER].checks_on,
        handed=handed,
    )
    return html(body, status)


async def _page(request: web.Request) -> web.StreamResponse:
    """GET /r/<token>: the form (or the tunnel probe's answer); a second browser's page once
    another one holds the request (DESIGN §17)."""
    answer = _probe_answer(request)
    if answer is not None:
        return web.Response(text=answer, content_type="text/plain")
    req = _lookup(request)
    if req.status != "awaiting":
        raise closed(req)
    if request.method != "GET" or speculative(request.headers):
        # Only a GET the person's browser makes means a browser has the page (DESIGN §4): a
        # HEAD, a prefetch or a preview claims nothing and is handed neither form nor nonce.
        # Not a 2xx for a prefetch, so no browser shows it for the person's navigation.
        status = 200 if request.method == "HEAD" else 503
        return html(
            render.render_message("Open the link", AHEAD, csp_nonce=request[CSP_NONCE]), status
        )
    holder = claim.holder(req, request.cookies)
    if holder == "other":
        return _elsewhere(request, req)
    # A local page is claimed by the browser that loads it; a remote one from its script (POST
    # …/claim), so a link previewer that fetches without running script claims nothing. Taken
    # before any await, so of two GETs at once exactly one browser holds the request.
    cookie = None
    if holder == "none" and not req.remote:
        cookie = claim.take(req)
    # The nonce is handed out only before the claim (a remote page's, whose script claims with
    # it) and by the claiming GET: cookies are not kept apart by port, so a server on another
    # loopback port the person's browser is sent to gets the cookie, and replaying it must not
    # get a way in. The claimed page keeps its nonce in its own origin's storage for a reload.
    response = await _form(request, req, handed=holder == "none")
    req.delivery.page_served()
    if cookie is not None:
        _set_claim(request, req, response, cookie)
    return response


AHEAD: Final = "This page is made for the person the agent asked: it opens when you open its link."


def _set_claim(
    request: web.Request, req: RequestRecord, response: web.StreamResponse, cookie: str
) -> None:
    secure = not on_loopback(request.headers.getall("Host", []))
    response.headers.add("Set-Cookie", claim.cookie_header(req, cookie, secure=secure))


def _elsewhere(request: web.Request, req: RequestRecord) -> web.Response:
    """The page a second browser gets: the names, where to go on, no form (DESIGN §17)."""
    if not req.delivery.opened_elsewhere:
        _log.warning("page: request %s: opened in a second browser", req.id)
    req.delivery.opened_elsewhere = True
    if request[WANTS_JSON]:
        return json_answer({"error": render.ELSEWHERE, "names": list(req.names)})
    return html(render.render_elsewhere(req, csp_nonce=request[CSP_NONCE]))


def _held_by_this(request: web.Request, req: RequestRecord) -> None:
    """Every POST comes from the browser that claimed the request, else 403 and nothing
    changes: not the values a provider refused, not the nonce (DESIGN §17)."""
    holder = claim.holder(req, request.cookies)
    if holder == "this":
        return
    if holder == "other":
        if not req.delivery.opened_elsewhere:
            _log.warning("page: request %s: a second browser tried to post", req.id)
        req.delivery.opened_elsewhere = True
        raise refuse(403, render.ELSEWHERE)
    raise refuse(403, UNCLAIMED)


UNCLAIMED: Final = "This page has not been opened here yet, so nothing was sent. Reload it."


async def _claim(request: web.Request) -> web.StreamResponse:
    """POST /r/<token>/claim: a remote page's script claims the request for its browser (204
    with the cookie), or learns that another browser holds it (403)."""
    req = _lookup(request)
    if req.status != "awaiting":
        raise closed(req)
    form = await _body(request)
    if not same(form.get("nonce", ""), req.nonce):
        raise refuse(403, NOT_THIS_PAGE)
    holder = claim.holder(req, request.cookies)
    if holder == "other":
        req.delivery.opened_elsewhere = True
        _log.warning("page: request %s: a second browser tried to claim it", req.id)
        raise refuse(403, render.ELSEWHERE)
    response = web.Response(status=204)
    if holder == "none":
        _set_claim(request, req, response, claim.take(req))
    return response


def _probe_answer(request: web.Request) -> str | None:
    probe = request.app[SETTINGS].probe
    token = request.match_info.get("token", "")
    if probe is None or not _as_sent(request) or not same(token, probe[0]):
        return None
    return probe[1]


async def _status(request: web.Request) -> web.StreamResponse:
    """GET /r/<token>/status: the state while the record exists (open or recently closed)."""
    req = _lookup(request)
    store = request.app[STORE]
    return json_answer({"status": req.shown_status, "expires_in": store.expires_in(req)})


async def _submit(request: web.Request) -> web.StreamResponse:
    """POST /r/<token>: the post read into one Submission, the Submitter writes it, and any
    error answered by its row in `answers.ANSWERS`; answers HTML or JSON."""
    req = _lookup(request)
    if req.status != "awaiting":
        raise closed(req)
    _held_by_this(request, req)
    try:
        posted = read_submission(await _body(request), req)
    except (FormUnreadable, BadSubmission) as exc:
        return await _answer(request, req, exc, None)
    # "Write anyway" (DESIGN §16): the refused submit as it was sent, its values under any
    # posted again, its choices narrowed by this post's, never widened. Any other post with
    # this nonce drops it.
    held, req.delivery.held = req.delivery.held, None
    posted = posted.confirming(held)
    if posted.keyring:
        try:
            posted = await keyring.filled(posted)
        except Exception as exc:  # NotInKeyring: 400, nothing written, the request stays open
            return await _answer(request, req, exc, None)
    verdicts: dict[str, tuple[str, str]] = {}
    if req.remote:
        # From outside this machine the write waits for the code the person's page shows to
        # come back through the host (DESIGN §17): a holder of the link cannot complete it.
        return await _hold(request, req, posted, verdicts)
    try:
        outcome = await _asking(request.app[SUBMITTER].submit, req, posted, verdicts)
    except Exception as exc:  # the handler boundary; the request stays open for a retry
        return await _answer(request, req, exc, posted)
    _log.info("page: request %s: written %s to %s", req.id, ", ".join(outcome.names), outcome.file)
    # A 2026-07-28 dialog still on screen keeps the agent waiting until the person confirms it.
    host = display_name(req.client) if req.delivery.dialog else None
    if request[WANTS_JSON]:
        return json_answer(render.outcome_json(outcome, dialog_host=host, verdicts=verdicts))
    return html(
        render.render_written(
            outcome, csp_nonce=request[CSP_NONCE], dialog_host=host, verdicts=verdicts
        )
    )


async def _asking(
    step: Callable[..., Awaitable[T]],
    req: RequestRecord,
    posted: Submission,
    verdicts: dict[str, tuple[str, str]],
) -> T:
    """`step` (the Submitter's `submit`, or `prepare` for a held remote submit) given what the
    post asks for; each provider's verdict lands in `verdicts` for the page."""
    return await step(
        req,
        posted.values,
        allow_tracked=posted.allow_tracked,
        fp_key=posted.fp_key,
        also=posted.also,
        check=posted.check,
        anyway=posted.anyway,
        on_checked=lambda found: verdicts.update((n, (v.status, v.text)) for n, v in found.items()),
    )


async def _hold(
    request: web.Request,
    req: RequestRecord,
    posted: Submission,
    verdicts: dict[str, tuple[str, str]],
) -> web.Response:
    """A remote submit, validated and checked as any other, then held for its code: the page
    shows the code, nothing is written yet. Errors are answered as a submit's."""
    try:
        prepared = await _asking(request.app[SUBMITTER].prepare, req, posted, verdicts)
        await _refuse_tracked(req, prepared.allow_tracked)
        code = request.app[STORE].hold(req, prepared)
    except Exception as exc:  # the handler boundary; the request stays open for a retry
        return await _answer(request, req, exc, posted)
    _log.info("page: request %s: held for its confirmation code", req.id)
    checked = {n: status for n, (status, _) in verdicts.items()}
    if request[WANTS_JSON]:
        return json_answer(
            {
                "status": "confirm",
                "confirm_code": code,
                "names": list(req.names),
                "checked": checked,
                "verdicts": {n: text for n, (_, text) in verdicts.items()},
                "html": render.confirm_section(req, code, verdicts),
            }
        )
    return html(render.render_confirm(req, code, csp_nonce=request[CSP_NONCE], verdicts=verdicts))


async def _refuse_tracked(req: RequestRecord, allowed: bool) -> None:
    """A held submit must be writable once its code comes back: a git-tracked destination the
    person did not allow is refused now, as the write itself would refuse it."""
    if allowed or req.sink.kind == "none":
        return
    target, _ = await _inspect(req)
    if target is not None and target.tracked:
        raise TrackedFile(
            f"{target.display} is tracked by git, so a secret written there could be committed;"
            " nothing was changed. Untrack it (git rm --cached) and ignore it, or allow the"
            " tracked file."
        )


async def _body(request: web.Request) -> dict[str, str]:
    """The posted form, read within BODY_TIMEOUT of its headers (DESIGN §6); a body that does
    not arrive in time has its connection dropped, unanswered, and nothing is written."""
    try:
        async with asyncio.timeout(loopback.BODY_TIMEOUT):
            return await read_form(request)
    except TimeoutError:
        _log.info("page: a form's body did not arrive within %g s; dropped", loopback.BODY_TIMEOUT)
        if request.transport is not None:
            request.transport.abort()
        raise refuse(408) from None


async def _answer(
    request: web.Request, req: RequestRecord, exc: Exception, posted: Submission | None
) -> web.Response:
    """A submit that wrote nothing, answered by its error's row (DESIGN §6, §16)."""
    answer = answer_for(exc)
    note = answer.logged(exc)
    if note:
        _log.log(answer.level, "page: request %s: %s", req.id, note)
    match answer.shape:
        case "closed":
            raise closed(req) from None
        case "message":
            raise refuse(answer.status_of(exc), answer.says(exc)) from None
        case "check" if isinstance(exc, CheckRejected) and posted is not None:
            return await _refused(request, req, exc, posted)
        case _:
            errors = exc.errors if isinstance(exc, ValidationFailed) else None
            return await _failed(
                request,
                req,
                answer.status_of(exc),
                answer.says(exc),
                errors=errors,
                tracked=answer.tracked,
            )


async def _refused(
    request: web.Request, req: RequestRecord, exc: CheckRejected, posted: Submission
) -> web.Response:
    """409: a provider refused a key, nothing was written (DESIGN §16). The values stay in this
    process for the fresh nonce's "Write anyway" post; the answer holds verdicts, never a value."""
    req.delivery.held = Held(posted.values, posted.allow_tracked, posted.also)
    nonce = request.app[STORE].renew_nonce(req)
    verdicts = {n: (v.status, v.text) for n, v in exc.verdicts.items()}
    refused = [n for n, (status, _) in verdicts.items() if status == "rejected"]
    if request[WANTS_JSON]:
        return json_answer(
            {
                "error": "Nothing was written: the provider refused "
                + ", ".join(refused)
                + ". Change it, or write it anyway.",
                "checked": {n: status for n, (status, _) in verdicts.items()},
                "verdicts": {n: text for n, (_, text) in verdicts.items()},
                "nonce": nonce,
            },
            409,
        )
    anyway = render.Anyway(nonce=nonce, allow_tracked=posted.allow_tracked, also=posted.also)
    state = render.FormState(verdicts=verdicts, anyway=anyway, retype=True)
    return await _form(request, req, status=409, state=state)


async def _failed(
    request: web.Request,
    req: RequestRecord,
    status: int,
    message: str | None = None,
    *,
    errors: dict[str, list[str]] | None = None,
    tracked: bool = False,
) -> web.Response:
    """A refused submit: the form again (HTML) or the reasons (JSON); never a value."""
    if request[WANTS_JSON]:
        body: dict[str, Any] = {"errors": errors or {}}
        if message:
            body["error"] = message
        if tracked:
            body["tracked"] = True
        return json_answer(body, status)
    state = render.FormState(errors=errors or {}, form_error=message, tracked=tracked, retype=True)
    return await _form(request, req, status=status, state=state)


def create_app(
    store: RequestStore, submitter: Submitter, *, settings: PageSettings | None = None
) -> web.Application:
    """The page application: its routes behind the guard middleware."""
    app = web.Application(middlewares=[_guard], client_max_size=MAX_BODY)
    app[STORE] = store
    app[SUBMITTER] = submitter
    app[SETTINGS] = settings or PageSettings()
    app.router.add_get("/r/{token}", _page, name="page")
    app.router.add_post("/r/{token}", _submit, name="submit")
    app.router.add_post("/r/{token}/claim", _claim, name="claim")
    app.router.add_get("/r/{token}/status", _status, name="status")
    return app


class _Redact(logging.Filter):
    """aiohttp's protocol errors can quote the request line, which carries the page token."""

    def filter(self, record: logging.LogRecord) -> bool:
        kind = type(record.exc_info[1]).__name__ if record.exc_info else "no detail"
        record.msg, record.args = "page: HTTP protocol error (%s)", (kind,)
        record.exc_info = record.exc_text = None
        record.stack_info = None
        return True


def protocol_logger() -> logging.Logger:
    """The logger aiohttp's protocol errors go to, with the token redacted."""
    logger = logging.getLogger("offprompt.page.http")
    if not any(isinstance(f, _Redact) for f in logger.filters):
        logger.addFilter(_Redact())
    return logger
