"""Tool results (DESIGN §3.2): names, status, fingerprint and what the model should do next.

Everything the model must act on is in structuredContent (`tell_user` first, then `note`, `url`):
hosts hand the model only that JSON. Never a value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from offprompt.mcp.tool import ToolResult

if TYPE_CHECKING:
    from collections.abc import Sequence

    from offprompt.spec import ConfirmAnswer, WriteOutcome
    from offprompt.store import RequestRecord

NEVER_OPEN = (
    "Do not open, print or read {file} or the values; to see which keys it holds and which are "
    "still missing, call secret_status."
)


def build(
    request: RequestRecord,
    *,
    url: str | None,
    expires_in: int,
    opened: bool,
    link_note: str | None = None,
    declined: bool = False,
    repeated: bool = False,
    confirmed: ConfirmAnswer | None = None,
) -> ToolResult:
    """The result for `request` in its current state; `link_note` follows an awaiting note;
    `declined`: the person just declined the host's dialog (DESIGN §4.1); `repeated`: the
    model asked again for the keys of this open request, and got it instead of a new one;
    `confirmed`: what the confirmation code the model just passed did (DESIGN §17).

    Never the confirmation code: only whether one is awaited, and how many tries are left."""
    sink = {"kind": request.sink.kind, "path": request.display}
    out: dict[str, Any] = {}
    status = request.shown_status
    outcome = request.outcome
    delivery = request.delivery
    if status == "written" and outcome is not None:
        sink["path"] = outcome.file
        if outcome.fingerprint:
            out["tell_user"] = f"Fingerprint {outcome.fingerprint}"
        out["note"] = _written_note(outcome.file, outcome.fingerprint, outcome.kept)
        if outcome.destinations:
            out["note"] += " " + _destinations_note(outcome)
        if outcome.mask_problem:
            out["note"] += " Tell the person: " + outcome.mask_problem
    elif status == "confirm":
        out["note"] = _confirm_note(request.id, delivery.tries_left, wrong=confirmed == "wrong")
    elif status == "awaiting":
        if confirmed == "none":
            out["note"] = _no_code_yet_note(request.id)
        elif repeated:
            out["note"] = _repeated_note(request.id, request.names, url is not None)
        elif declined and url is not None:
            out["note"] = _declined_note(request.id, request.names)
        else:
            out["note"] = _awaiting_note(request.id, url is not None, opened)
        if link_note:
            out["note"] += " " + link_note
        if url is not None:
            out["url"] = url
    elif status == "expired":
        out["note"] = (
            "The request expired before the person submitted the page; nothing was written. "
            "Call collect_secret again if the values are still needed."
        )
    elif delivery.confirm_reason is not None:
        out["note"] = (
            f"The request was cancelled: {delivery.confirm_reason} Tell the person. Call "
            "collect_secret again only if they still want to provide the values."
        )
    else:
        out["note"] = "The request was cancelled; nothing was written and nothing typed was kept."
    if delivery.opened_elsewhere:
        out["note"] += " " + OPENED_ELSEWHERE
    out["request_id"] = request.id
    out["status"] = status
    if status in ("awaiting", "confirm"):
        out["expires_in"] = expires_in
    if status == "confirm":
        out["tries_left"] = delivery.tries_left
    out["names"] = list(request.names)
    if outcome is not None and status == "written":
        if outcome.kept:
            out["kept"] = list(outcome.kept)
        if outcome.fingerprint:
            out["fingerprint"] = outcome.fingerprint
        if request.sink.kind == "dotenv":
            out["file_keys"] = list(outcome.file_keys)
    out["sink"] = sink
    if outcome is not None and status == "written" and request.also:
        out["destinations"] = [d.to_dict() for d in outcome.destinations]
    if outcome is not None and status == "written" and outcome.checked:
        out["checked"] = dict(outcome.checked)
        if outcome.unchecked:
            out["note"] += " " + unchecked_note(outcome.unchecked)
    if delivery.opened_elsewhere:
        out["opened_elsewhere"] = True
    first = None
    if status == "written" and outcome is not None:
        first = outcome.headline()
    return ToolResult.of(out, headline=first)


def unchecked_note(unchecked: Sequence[tuple[str, str]]) -> str:
    """The names the person asked to check with their provider that were not, and why (DESIGN
    §16's `skipped`): said, so nobody takes a written key for a working one."""
    said = "; ".join(f"{name} was not checked with a provider: {why}" for name, why in unchecked)
    return f"{said}. Tell the person, since a key that was not checked may still be the wrong one."


OPENED_ELSEWHERE = (
    "Tell the person: the page was opened in another browser. If that was not them, they "
    "should type nothing there and say so; then call cancel_secret and collect_secret again "
    "for a new link."
)
"""Said in every result once a second browser opened the page (DESIGN §17)."""


def _confirm_note(request_id: str, tries_left: int, *, wrong: bool) -> str:
    """The person submitted a remote page: the values wait for the code it now shows."""
    first = (
        f"That confirmation code was wrong; {tries_left} "
        f"{'try' if tries_left == 1 else 'tries'} left before the request is cancelled. Ask "
        "the person to read the code on their offprompt page again and type it here."
        if wrong
        else "The person submitted the page, and offprompt holds the values until they confirm "
        "it: their offprompt page now shows a confirmation code of 7 characters. Ask the person "
        "to type that code here in the chat (it is not a secret, and grants nothing once used)."
    )
    return (
        f"{first} Then call await_secret with request_id {request_id} and confirm set to the "
        "code exactly as they typed it. Never guess or make up a code, and never open the page "
        f"yourself: {tries_left} wrong {'code cancels' if tries_left == 1 else 'codes cancel'} "
        "the request."
    )


def _no_code_yet_note(request_id: str) -> str:
    return (
        "No submission is waiting for a confirmation code yet: the person has not submitted "
        f"the page. Call await_secret with request_id {request_id} (without confirm) to wait; "
        "ask for a code only once a result has status confirm."
    )


def _written_note(file: str, fp: str | None, kept: tuple[str, ...]) -> str:
    parts = []
    if fp:
        parts.append(
            f"Tell the person now: Fingerprint {fp}. It must match the four emoji on their page; "
            "if it does not, they should say so."
        )
    if kept:
        parts.append(f"{', '.join(kept)} already had values in {file} and were kept.")
    if file:
        parts.append(NEVER_OPEN.format(file=file))
    return " ".join(parts)


def _destinations_note(outcome: WriteOutcome) -> str:
    """Each destination's status in one sentence; failures and skips are for the person."""
    parts = [f"{d.kind} {d.target}: {d.status}" for d in outcome.destinations]
    line = "Also sent where the page listed: " + "; ".join(parts) + "."
    trouble = [d for d in outcome.destinations if d.status != "sent"]
    if trouble:
        said = "; ".join(f"{d.kind} {d.target} {d.status} ({d.detail})" for d in trouble)
        line += (
            f" Tell the person which did not get the values: {said}. The local write stands; "
            "never ask for the values in the chat."
        )
    return line


def no_tunnel_note(problem: str, port: int) -> str:
    """What the model must tell the person when a remote link is a loopback one."""
    return (
        f"There is no tunnel ({problem}), so the link is on this machine's 127.0.0.1:{port}: "
        f"it opens only where port {port} is forwarded to the same port on the person's "
        f"computer (their editor's port forwarding, or `ssh -L {port}:127.0.0.1:{port}` to "
        "this machine). Tell the person so when you show the link."
    )


def _awaiting_note(request_id: str, link: bool, opened: bool) -> str:
    if link:
        return (
            "Show the person the url below on its own line and ask them to open it and type "
            "the values there (never in the chat). Then call await_secret with request_id "
            f"{request_id} to wait for the write."
        )
    where = "in the person's browser" if opened else "for the person"
    return (
        f"The page is open {where} and still waiting. Call await_secret with request_id "
        f"{request_id} to keep waiting; never ask for the values in the chat."
    )


def _repeated_note(request_id: str, names: tuple[str, ...], link: bool) -> str:
    then = (
        "show the person the url below on its own line (the same page as before), then call "
        f"await_secret with request_id {request_id}"
        if link
        else "tell the person the page is open, and wait for the result of your first call (or "
        f"your host's notification of it), or call await_secret with request_id {request_id}"
    )
    return (
        f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} already being collected by "
        f"request {request_id}, which is still open, so no second page was opened. Do not call "
        f"collect_secret again for these keys: {then}. Never ask for the values in the chat."
    )


def _declined_note(request_id: str, names: tuple[str, ...]) -> str:
    return (
        f"The person declined the dialog that offered the page for {', '.join(names)}. Ask "
        "them whether they still want to type the values (on the page, never in the chat). "
        "If they do, show them the url below on its own line and call "
        f"await_secret with request_id {request_id}; if not, call cancel_secret with "
        f"request_id {request_id}."
    )
