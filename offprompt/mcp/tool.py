"""The seam between the protocol and the tools: what a tool's handler gets and returns.

A handler receives validated arguments and a `ToolContext` that hides the difference between
the two revisions as far as it honestly can (URL elicitation, progress, roots). Loaded at the
first tool call; what a tool declares for `tools/list` is in `declaration`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from offprompt.mcp.revisions import MODERN
from offprompt.utf8 import is_text

if TYPE_CHECKING:
    from offprompt.mcp.jsonrpc import JSON, RequestId
    from offprompt.spec import DialogAnswer

REFUSAL_PREFIX = "offprompt refused that request: "


@dataclass(frozen=True)
class ToolResult:
    """A `CallToolResult`: content blocks, optional structured content, error flag."""

    content: tuple[JSON, ...]
    structured: JSON | None = None
    is_error: bool = False

    @classmethod
    def refused(cls, reason: str) -> ToolResult:
        """A tool failure the model can act on: one text block, no structured content."""
        return cls(({"type": "text", "text": REFUSAL_PREFIX + reason},), None, True)

    @classmethod
    def of(cls, structured: JSON, headline: str | None = None) -> ToolResult:
        """A success: structured content plus the same JSON as text, after an optional headline."""
        blocks: list[JSON] = []
        if headline:
            blocks.append({"type": "text", "text": headline})
        text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
        blocks.append({"type": "text", "text": text})
        return cls(tuple(blocks), structured, False)

    def to_json(self) -> JSON:
        out: JSON = {"content": list(self.content)}
        if self.structured is not None:
            out["structuredContent"] = self.structured
        if self.is_error:
            out["isError"] = True
        return out


@dataclass(frozen=True)
class InputRequired:
    """What a modern handler returns to end this round with `input_required` (2026-07-28).

    `data` is the tool's own payload, signed into `requestState` (living `ttl` seconds) and
    handed back as `ToolContext.state` on the client's retry. Made by `ToolContext.ask_url`.
    """

    input_requests: dict[str, JSON]
    data: dict[str, Any]
    ttl: float


class Peer(Protocol):
    """What a context needs from the server: talk back to the client of this call."""

    @property
    def can_send_requests(self) -> bool: ...

    async def send_request(self, method: str, params: JSON, timeout: float) -> Any: ...

    def notify(self, method: str, params: JSON) -> None: ...


@dataclass
class ToolContext:
    """Everything a handler may know about the call besides its arguments."""

    tool: str
    revision: str
    client_info: Mapping[str, Any]
    client_capabilities: Mapping[str, Any]
    meta: Mapping[str, Any]
    peer: Peer = field(repr=False)
    state: dict[str, Any] | None = None
    input_responses: dict[str, Any] | None = None
    progress_token: RequestId | None = None
    _progress: int = 0
    _last_message: str | None = None

    @property
    def modern(self) -> bool:
        return self.revision == MODERN

    @property
    def client_name(self) -> str:
        name = self.client_info.get("name")
        return name if isinstance(name, str) else ""

    def supports_url_elicitation(self) -> bool:
        """True only when the client declared `elicitation.url` (form-only `{}` does not count)."""
        elicitation = self.client_capabilities.get("elicitation")
        return isinstance(elicitation, dict) and isinstance(elicitation.get("url"), dict)

    def supports_form_elicitation(self) -> bool:
        """True when the client declared form elicitation: `elicitation.form`, or the bare
        `elicitation: {}` that means form only (an `elicitation` with only `url` does not)."""
        elicitation = self.client_capabilities.get("elicitation")
        if not isinstance(elicitation, dict):
            return False
        return isinstance(elicitation.get("form"), dict) or not elicitation

    def supports_roots(self) -> bool:
        return isinstance(self.client_capabilities.get("roots"), dict)

    def progress(self, message: str | None = None) -> None:
        """Send `notifications/progress` (strictly increasing) when the call carried a token."""
        if message is not None:
            self._last_message = message
        if self.progress_token is None:
            return
        self._progress += 1
        params: JSON = {"progressToken": self.progress_token, "progress": self._progress}
        if self._last_message:
            params["message"] = self._last_message
        self.peer.notify("notifications/progress", params)

    def ask_url(
        self, *, key: str, url: str, message: str, data: dict[str, Any], state_ttl: float
    ) -> InputRequired:
        """Modern: the answer that asks the client to show `url` in a URL elicitation and retry
        with its answer under `key`; `data` comes back as `state` on the retry."""
        params: JSON = {"mode": "url", "url": url, "message": message}
        return InputRequired(
            {key: {"method": "elicitation/create", "params": params}}, data, state_ttl
        )

    def ask_form(
        self,
        *,
        key: str,
        message: str,
        schema: JSON,
        data: dict[str, Any],
        state_ttl: float,
    ) -> InputRequired:
        """Modern: the answer that asks the client to show a form (`schema`, a flat object of
        primitives) and retry with its answer under `key`; `data` comes back as `state`."""
        params: JSON = {"mode": "form", "message": message, "requestedSchema": schema}
        return InputRequired(
            {key: {"method": "elicitation/create", "params": params}}, data, state_ttl
        )

    def form_answer(self, key: str) -> FormAnswer | None:
        """Modern retry: the form's answer found under `key` in `inputResponses`; None when the
        retry carried none there (then ask again)."""
        answer = (self.input_responses or {}).get(key)
        if answer is None:
            return None
        return _form_answer(answer)

    async def elicit_form(self, *, message: str, schema: JSON, wait: float) -> FormAnswer:
        """Legacy: send a form `elicitation/create` and wait up to `wait` seconds for the
        answer. A modern call asks with `ask_form` instead, so here it is "unsupported"."""
        if not self.supports_form_elicitation() or self.modern:
            return FormAnswer("unsupported")
        if not self.peer.can_send_requests:
            return FormAnswer("unsupported")
        params: JSON = {"mode": "form", "message": message, "requestedSchema": schema}
        try:
            answer = await self.peer.send_request("elicitation/create", params, wait)
        except TimeoutError:
            return FormAnswer("timeout")
        except ClientError:
            return FormAnswer("error")
        return _form_answer(answer)

    def elicitation_answer(self, key: str) -> DialogAnswer | None:
        """Modern retry: the action found under `key` in `inputResponses`; None when the retry
        carried no answer there (then ask again)."""
        answer = (self.input_responses or {}).get(key)
        if answer is None:
            return None
        action = answer.get("action") if isinstance(answer, dict) else None
        return action if action in ("accept", "decline", "cancel") else "error"

    async def elicit_url(
        self, *, url: str, message: str, elicitation_id: str, wait: float
    ) -> DialogAnswer:
        """Legacy: send `elicitation/create` for `url` and wait up to `wait` seconds for the
        answer. A modern call asks with `ask_url` instead, so here it is "unsupported"."""
        if not self.supports_url_elicitation() or self.modern:
            return "unsupported"
        if not self.peer.can_send_requests:
            return "unsupported"
        params: JSON = {
            "mode": "url",
            "url": url,
            "message": message,
            "elicitationId": elicitation_id,
        }
        try:
            answer = await self.peer.send_request("elicitation/create", params, wait)
        except TimeoutError:
            return "timeout"
        except ClientError:
            return "error"
        action = answer.get("action") if isinstance(answer, dict) else None
        return action if action in ("accept", "decline", "cancel") else "error"

    def elicitation_complete(self, elicitation_id: str) -> None:
        """Tell a legacy client its URL elicitation finished (2026-07-28 has no such note)."""
        if not self.modern and self.peer.can_send_requests:
            self.peer.notify(
                "notifications/elicitation/complete", {"elicitationId": elicitation_id}
            )

    async def roots(self, timeout: float = 5.0) -> list[str] | None:
        """The client's root URIs (legacy `roots/list`), or None when unavailable."""
        if self.modern or not self.supports_roots() or not self.peer.can_send_requests:
            return None
        try:
            answer = await self.peer.send_request("roots/list", {}, timeout)
        except (TimeoutError, ClientError):
            return None
        roots = answer.get("roots") if isinstance(answer, dict) else None
        if not isinstance(roots, list):
            return None
        return [
            r["uri"]
            for r in roots
            if isinstance(r, dict) and isinstance(r.get("uri"), str) and is_text(r["uri"])
        ]


@dataclass(frozen=True)
class FormAnswer:
    """How a form elicitation ended; `content` is the form's fields on `accept` (else None).
    Its fields may hold what the person typed: never logged, never repr'd."""

    action: DialogAnswer
    content: Mapping[str, Any] | None = field(default=None, repr=False)

    def text(self, name: str) -> str | None:
        """The accepted form's string field `name`, else None."""
        if self.action != "accept" or self.content is None:
            return None
        value = self.content.get(name)
        return value if isinstance(value, str) and is_text(value) else None


def _form_answer(answer: Any) -> FormAnswer:
    action = answer.get("action") if isinstance(answer, dict) else None
    if action not in ("accept", "decline", "cancel"):
        return FormAnswer("error")
    content = answer.get("content") if action == "accept" else None
    return FormAnswer(action, content if isinstance(content, dict) else None)


class ClientError(Exception):
    """The client answered a server→client request with a JSON-RPC error.

    Outside the error root on purpose: ToolContext turns it into an elicitation outcome at once.
    """
