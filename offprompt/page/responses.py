"""How the page answers (DESIGN §6): the refusal texts by status, a closed request's answer,
the headers every answer carries (CSP, no-referrer, no-store…), and HTML or JSON bodies.

Pure shaping of aiohttp responses; the handlers in `page.server` decide which to give.
"""

from typing import Any, Final

from aiohttp import web

from offprompt.errors import Refusal
from offprompt.store import RequestRecord

__all__ = ["closed", "harden", "html", "json_answer", "refuse"]


_DEFAULTS: Final[dict[int, tuple[str, str]]] = {
    400: ("Bad request", "The form could not be read. Reload the page and try again."),
    403: ("Refused", "This page only accepts requests made by itself."),
    404: ("Not found", "This link is not known here: it may be mistyped, or from an earlier run."),
    405: ("Method not allowed", "This address does not accept that kind of request."),
    408: ("Too slow", "The form did not arrive in time, so it was not read. Nothing was written."),
    409: ("Busy", "Another submission of this form is being written. Reload in a moment."),
    413: ("Too large", "The form is larger than 64 KiB, so it was not read."),
    415: ("Unsupported form", "The form must be sent as a normal HTML form (UTF-8)."),
    421: ("Wrong address", "This page is served on 127.0.0.1 and localhost only."),
    500: ("Something went wrong", "offprompt could not handle that. Nothing was written."),
}


def refuse(status: int, text: str | None = None) -> Refusal:
    title, default = _DEFAULTS.get(status, ("Error", "That request could not be handled."))
    return Refusal(status, title, text or default)


def closed(request: RequestRecord) -> Refusal:
    if request.status == "awaiting":  # claimed: a write is in progress right now
        return refuse(409)
    text = {
        "written": "These values were already written. There is nothing more to do here.",
        "cancelled": "The agent cancelled this request. Nothing was written from this page.",
        "expired": "This request expired before anything was written. Ask the agent again.",
    }[request.status]
    return Refusal(410, "Closed", text)


_FORM_ACTION: Final = {False: "'self'", True: "'none'"}


def _csp(nonce: str, *, sealed: bool = False) -> str:
    # A remote page posts only through its script, sealed: `form-action 'none'` stops the
    # browser from ever sending the plain form, whatever happens to the script.
    return (
        "default-src 'none'; "
        f"script-src 'nonce-{nonce}'; "
        f"style-src 'nonce-{nonce}'; "
        "img-src 'self' data:; "
        "connect-src 'self'; "
        f"form-action {_FORM_ACTION[sealed]}; "
        "frame-ancestors 'none'; "
        "base-uri 'none'"
    )


def harden(response: web.StreamResponse, nonce: str, *, sealed: bool = False) -> None:
    headers = response.headers
    headers["Content-Security-Policy"] = _csp(nonce, sealed=sealed)
    headers["Referrer-Policy"] = "no-referrer"
    headers["Cache-Control"] = "no-store"
    headers["X-Content-Type-Options"] = "nosniff"
    headers["X-Frame-Options"] = "DENY"
    headers["Cross-Origin-Opener-Policy"] = "same-origin"
    headers["Cross-Origin-Resource-Policy"] = "same-origin"


def html(body: str, status: int = 200) -> web.Response:
    return web.Response(text=body, status=status, content_type="text/html", charset="utf-8")


def json_answer(data: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(data, status=status)
