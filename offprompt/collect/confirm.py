"""The confirmation code's steps (DESIGN §17): a typed code tried against the held submit, and
the code asked for in the host's form dialog where the client declared one.

Part of the collect core (`Collector.confirm`, `ask_code`, `answer_code`): it speaks no
JSON-RPC; the door turns an `AskCode` into its form. Nothing of a code is ever logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from offprompt.collect.steps import AskCode, Client, Refused, Report
from offprompt.errors import OffpromptError

if TYPE_CHECKING:
    from offprompt.collect.parts import Parts
    from offprompt.store import RequestRecord

__all__ = ["CODE_MESSAGE", "Codes"]

log = logging.getLogger("offprompt")

CODE_MESSAGE: Final = "Type the code the offprompt page shows"
"""What the host's form dialog says when it asks for the confirmation code."""


def message(request: RequestRecord, *, wrong: bool) -> str:
    """The dialog's message; after a wrong code, how many tries are left first."""
    if not wrong:
        return CODE_MESSAGE
    left = request.delivery.tries_left
    return f"That code was wrong ({left} {'try' if left == 1 else 'tries'} left). {CODE_MESSAGE}"


class Codes:
    """The code's steps for one collect core; `parts()` gives its store and submitter."""

    def __init__(self, parts: Callable[[], Parts], wait: float) -> None:
        """`wait`: how long a legacy form dialog is waited for (the await window)."""
        self._parts = parts
        self._wait = wait
        self._asking: set[str] = set()  # requests whose legacy code dialog is out now

    async def confirm(self, request: RequestRecord, typed: str) -> Report | Refused:
        """Try `typed`: the right code writes the held submission; a wrong one costs a try,
        and the last try cancels the request. A write that fails after the right code is a
        refusal, and the request stays open for a new submit. Only what the try did is
        logged, never the code."""
        parts = self._parts()
        answer = parts.store.try_code(request, typed)
        log.info("request %s: confirmation code: %s", request.id, answer)
        if answer != "right":
            return Report(request, confirmed=answer)
        prepared = parts.store.take_pending(request)
        if prepared is None:  # cannot happen: `right` means a submission is held
            return Report(request, confirmed="none")
        try:
            await parts.submitter.commit(request, prepared)
        except OffpromptError as err:
            log.warning(
                "request %s: the confirmed write failed (%s)", request.id, type(err).__name__
            )
            if request.status != "awaiting":
                return Report(request, confirmed="closed")
            return Refused(
                f"the confirmation code was right, but the write failed: {err} Nothing was "
                f"written and the held values were dropped; request {request.id} is still "
                "open. Tell the person, and ask them to submit the page again (it will show a "
                f"new code), then call await_secret with request_id {request.id}.",
                "write",
            )
        log.info("request %s: confirmed and written", request.id)
        return Report(request, confirmed="right")

    async def ask(self, report: Report, client: Client) -> Report | AskCode | Refused:
        """A submit held for its code: ask the host for it in its form dialog, where the
        client declared one. 2026-07-28: an `AskCode` (the retry brings the answer to
        `answer`). Legacy: the dialog is sent and answered here, once more after each wrong
        code, each within the await window. Otherwise, or when the person declines or
        dismisses the dialog, `report` as it is: its result asks through the agent."""
        request = report.request
        if request.shown_status != "confirm" or not client.form_elicitation:
            return report
        wrong = report.confirmed == "wrong"
        if client.modern:
            store = self._parts().store
            # The state need not outlive the request it asks about.
            ttl = max(60.0, float(store.expires_in(request)))
            return AskCode(request.id, message(request, wrong=wrong), ttl)
        if not client.can_send_requests or request.id in self._asking:
            return report  # one dialog at a time; this call answers through the agent
        self._asking.add(request.id)
        try:
            while request.shown_status == "confirm":
                client.progress("Waiting for the confirmation code")
                typed = await client.elicit_code(
                    message=message(request, wrong=wrong), wait=self._wait
                )
                if typed is None:  # declined, dismissed, or no answer: ask through the agent
                    log.info("request %s: no code from the host's dialog", request.id)
                    return Report(request, confirmed="wrong" if wrong else None)
                done = await self.confirm(request, typed)
                if isinstance(done, Refused) or done.confirmed != "wrong":
                    return done
                wrong = True
            return Report(request)
        finally:
            self._asking.discard(request.id)

    async def answer(
        self, request: RequestRecord, client: Client, typed: str | None, answered: bool
    ) -> Report | AskCode | Refused:
        """A 2026-07-28 retry after an `AskCode`: `typed` is the code from the form; None when
        the person declined or dismissed it (`answered`: the result then asks through the
        agent) or the retry carried no answer (asked again). A wrong code asks again, with one
        try fewer; once the request is written or closed, an answer changes nothing."""
        if typed is None:
            return Report(request) if answered else await self.ask(Report(request), client)
        done = await self.confirm(request, typed)
        if isinstance(done, Report) and done.confirmed == "wrong":
            return await self.ask(done, client)
        return done
