"""A scripted model on loopback for each host: Anthropic Messages (Claude Code), OpenAI
Responses (Codex) and Gemini's generateContent (Gemini CLI), all as SSE, recording every request
body the host sends.

The script: while the conversation holds no result of our `collect_secret` call, answer with
that call; afterwards, answer with text that repeats what the last result said: the
fingerprint, or, when the request is still `awaiting`, the link on its own line together with an
`await_secret` call, as the result's note asks. A call the host moved to the background (Claude
Code) gets words saying the page is open, and its result comes later as a `<task-notification>`
in a user turn, read like a tool result. Requests that are not the conversation (title
generation, token counting, model lists) get a short generic answer, so each host's side traffic
is handled without knowing it in advance.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

SERVER = "offprompt"
TOOL = "collect_secret"
AWAIT = "await_secret"
CLAUDE_TOOL = f"mcp__{SERVER}__{TOOL}"
CLAUDE_AWAIT = f"mcp__{SERVER}__{AWAIT}"
OURS = (TOOL, AWAIT)
CODEX_NAMESPACE = f"mcp__{SERVER}"
FINGERPRINT = re.compile(r'"fingerprint":"([^"]+)"')
URL = re.compile(r'"url":"(http[^"]+)"')


AWAITING = re.compile(r'"status":"awaiting"')
CONFIRM = re.compile(r'"status":"confirm"')
# What the model says on a result with status confirm (DESIGN §17): it asks the person for the
# code their page shows, as the result's note tells it to, and ends its turn.
ASK_CODE = "Your offprompt page now shows a confirmation code. Please type it here."
# A confirmation code as a person types it in the chat (what the page shows: `ABCD-EFG`).
TYPED_CODE = re.compile(r"(?<![0-9A-Za-z])([0-9A-Za-z]{4}-?[0-9A-Za-z]{3})(?![0-9A-Za-z])")
REQUEST_ID = re.compile(r'"request_id":"([^"]+)"')
# Claude Code's answer for a call it moved to the background (still running after
# CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS, or at once when the person sends a message meanwhile), and
# the later user turn that carries the call's result.
BACKGROUNDED = re.compile(
    r'MCP tool "offprompt/\w+" (is still running after \d+s\. It was moved|was moved to the '
    r"background as task \w+ so that a message)"
)
NOTIFICATION = re.compile(r"<task-notification>(.*?)</task-notification>", re.S)
NOTIFIED_RESULT = re.compile(r"<result>\s*(.*?)\s*</result>", re.S)
OPEN_WORDS = "The page is open in your browser: type the key there, and I will wait for it."


def notified_results(text: str) -> list[str]:
    """The result of each task notification in `text` that reports one of our calls."""
    out = []
    for note in NOTIFICATION.findall(text):
        if f"({SERVER}/" in note and (found := NOTIFIED_RESULT.search(note)):
            out.append(found.group(1))
    return out


def reply_for(result: str) -> tuple[str, dict[str, str] | None]:
    """What the model says after reading a tool result, and the await_secret arguments when
    it should wait for the person: the fingerprint, else the link."""
    found = FINGERPRINT.search(result)
    if found:
        return f"Done. Fingerprint {found.group(1)} is what you should see on the page.", None
    if BACKGROUNDED.search(result):
        return OPEN_WORDS, None
    link = URL.search(result)
    request = REQUEST_ID.search(result)
    if link and request and AWAITING.search(result):
        words = f"Open this link to type the key:\n{link.group(1)}"
        return words, {"request_id": request.group(1)}
    return "The tool gave no fingerprint: " + result[:200], None


@dataclass
class Recorded:
    """One request the host made: path and JSON body (None when the body was not JSON)."""

    path: str
    body: Any
    raw: bytes = field(repr=False)


class ScriptedModel:
    """One host's provider on 127.0.0.1, serving from its own thread and event loop."""

    def __init__(
        self,
        kind: str,
        arguments: dict[str, Any],
        *,
        again_after_background: bool = False,
        code_in_turn: Callable[[], str | None] | None = None,
    ) -> None:
        """`again_after_background`: a model that, told its call moved to the background,
        calls collect_secret again with the same arguments (once), as the instructions say not
        to. `code_in_turn`: for a host with nobody at its prompt (print mode), the person's
        answer to the model's question for the confirmation code, given within the same turn
        (None until the person has it); without it the model asks and ends its turn, and reads
        the code from the person's next message."""
        assert kind in {"anthropic", "openai", "google"}
        self.kind = kind
        self.arguments = arguments
        self.again_after_background = again_after_background
        self.code_in_turn = code_in_turn
        self.requests: list[Recorded] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._serve, name=f"model-{kind}", daemon=True)

    # -- lifecycle ----------------------------------------------------------------------------

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the scripted model did not start")
        return self

    def __exit__(self, *_exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- what the model received --------------------------------------------------------------

    def conversation(self) -> list[Recorded]:
        """The requests that carried our tool (the agent's turns, not side requests)."""
        return [r for r in self.requests if isinstance(r.body, dict) and self._offers_tool(r.body)]

    def raw(self) -> bytes:
        return b"\n".join(r.raw for r in self.requests)

    def tool_results(self) -> list[str]:
        """Each distinct result of our call, as the host handed it to the model."""
        seen: list[str] = []
        for r in self.conversation():
            for text in self._results(r.body):
                if text not in seen:
                    seen.append(text)
        return seen

    def fingerprints(self) -> list[str]:
        """The fingerprints the model was given, one per distinct tool result that held one."""
        return [m.group(1) for t in self.tool_results() if (m := FINGERPRINT.search(t))]

    def notified(self) -> list[str]:
        """Each distinct result of our calls the host handed over in a task notification."""
        seen: list[str] = []
        for r in self.conversation():
            for text in self._notifications(r.body):
                if text not in seen:
                    seen.append(text)
        return seen

    def calls_made(self, body: dict[str, Any]) -> int:
        """How many times the model called collect_secret in the conversation `body` carries."""
        return sum(
            1
            for message in body.get("messages") or []
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_use" and block.get("name") == self._claude_name(TOOL)
        )

    # -- the script -----------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.requests.append(Recorded(request.path_qs, body, raw))
        if request.method != "POST" or not isinstance(body, dict):
            return web.json_response({"object": "list", "data": [], "models": []})
        if self.kind == "anthropic":
            if request.path.endswith("/count_tokens"):
                return web.json_response({"input_tokens": 100})
            return await self._anthropic(request, body)
        if self.kind == "google":
            return await self._google(request, body)
        return await self._openai(request, body)

    def _offers_tool(self, body: dict[str, Any]) -> bool:
        for tool in body.get("tools") or []:
            if self.kind == "google":
                if self._gemini_name(TOOL) in json.dumps(tool):
                    return True
            elif tool.get("name") == CLAUDE_TOOL or CODEX_NAMESPACE in json.dumps(tool):
                return True
        return False

    def _results(self, body: dict[str, Any]) -> list[str]:
        """The text of every result of our call in this request."""
        out = []
        if self.kind == "anthropic":
            ours = set()
            for message in body.get("messages") or []:
                content = message.get("content")
                if not isinstance(content, list):
                    continue
                for block in content:
                    named = str(block.get("name", "")).removeprefix(f"mcp__{SERVER}__")
                    if block.get("type") == "tool_use" and named in OURS:
                        ours.add(block.get("id"))
                    if block.get("type") == "tool_result" and block.get("tool_use_id") in ours:
                        inner = block.get("content")
                        if isinstance(inner, list):
                            inner = "".join(b.get("text", "") for b in inner)
                        out.append(str(inner))
                    if block.get("type") == "text" and message.get("role") == "user":
                        out += notified_results(str(block.get("text", "")))
        elif self.kind == "google":
            names = {self._gemini_name(n) for n in OURS}
            for part in _gemini_parts(body):
                answer = part.get("functionResponse")
                if isinstance(answer, dict) and answer.get("name") in names:
                    out.append(_gemini_text(answer.get("response")))
        else:
            ours = set()
            for item in body.get("input") or []:
                if item.get("type") == "function_call" and item.get("name") in OURS:
                    ours.add(item.get("call_id"))
                if item.get("type") == "function_call_output" and item.get("call_id") in ours:
                    output = item.get("output")
                    if not isinstance(output, str):
                        output = json.dumps(output, ensure_ascii=False)
                    out.append(output)
        return out

    def _notifications(self, body: dict[str, Any]) -> list[str]:
        """The results of our calls that reached the model as task notifications (Claude Code)."""
        out = []
        for message in body.get("messages") or [] if self.kind == "anthropic" else []:
            content = message.get("content")
            if message.get("role") != "user" or not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "text":
                    out += notified_results(str(block.get("text", "")))
        return out

    def _gemini_name(self, name: str) -> str:
        """The name a call of `name` goes out under in Gemini CLI: one of our MCP tools."""
        return f"mcp_{SERVER}_{name}"

    def _claude_name(self, name: str) -> str:
        """The name a call of `name` goes out under in Claude Code: one of our MCP tools."""
        return f"mcp__{SERVER}__{name}"

    def _codex_name(self, name: str) -> dict[str, str]:
        """The name fields of a call of `name` in Codex: one of our MCP tools."""
        return {"name": name, "namespace": CODEX_NAMESPACE}

    def _turn(self, body: dict[str, Any]) -> tuple[str, tuple[str, str] | None]:
        """What to answer: words (maybe empty) and a call (tool name, JSON arguments) or None."""
        if not self._offers_tool(body):
            return "Collecting an API key", None
        results = self._results(body)
        if not results:
            return "", (TOOL, json.dumps(self.arguments))
        again = self.again_after_background and self.kind == "anthropic"
        if again and BACKGROUNDED.search(results[-1]) and self.calls_made(body) == 1:
            return "", (TOOL, json.dumps(self.arguments))
        if CONFIRM.search(results[-1]) and (request := REQUEST_ID.search(results[-1])):
            typed = self._person_said(body) or self._code_in_turn()
            if typed is None:
                return ASK_CODE, None
            confirm = {"request_id": request.group(1), "confirm": typed}
            return "", (AWAIT, json.dumps(confirm))
        words, wait = reply_for(results[-1])
        return words, (AWAIT, json.dumps(wait)) if wait else None

    def _person_said(self, body: dict[str, Any]) -> str | None:
        """A confirmation code in what the person typed after the last tool result (the
        answer to ASK_CODE), as they typed it; None when they typed none."""
        after: list[str] = []
        if self.kind == "anthropic":
            for message in body.get("messages") or []:
                content = message.get("content")
                blocks = content if isinstance(content, list) else [content]
                if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
                    after = []
                elif message.get("role") == "user":
                    after += [b if isinstance(b, str) else str(b.get("text", "")) for b in blocks]
        elif self.kind == "openai":
            for item in body.get("input") or []:
                if str(item.get("type", "")).endswith("_output"):
                    after = []
                elif item.get("type") == "message" and item.get("role") == "user":
                    content = item.get("content")
                    parts = content if isinstance(content, list) else [{"text": content}]
                    after += [str(p.get("text", "")) for p in parts if isinstance(p, dict)]
        # The host's own notes in a user turn (Claude Code's <system-reminder>) are no answer.
        said = [t for t in after if not t.lstrip().startswith("<")]
        found = [m.group(1) for t in said for m in TYPED_CODE.finditer(t)]
        return found[-1] if found else None

    def _code_in_turn(self) -> str | None:
        """The person's answer in print mode: waited for (10 s at most) from `code_in_turn`."""
        if self.code_in_turn is None:
            return None
        deadline = time.monotonic() + 10
        while (code := self.code_in_turn()) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        return code

    # -- Anthropic Messages ---------------------------------------------------------------------

    async def _anthropic(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        words, call = self._turn(body)
        n = len(self.requests)
        blocks: list[tuple[dict[str, Any], dict[str, Any], Any]] = []
        if words:
            blocks.append(
                ({"type": "text", "text": ""}, {"type": "text_delta", "text": words}, words)
            )
        if call:
            name, arguments = call
            start = {"type": "tool_use", "id": f"toolu_{n:02d}", "name": self._claude_name(name)}
            delta = {"type": "input_json_delta", "partial_json": arguments}
            blocks.append(({**start, "input": {}}, delta, json.loads(arguments)))
        stop = "tool_use" if call else "end_turn"
        message = {
            "id": f"msg_{n:02d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        if not body.get("stream"):
            content = [
                {**start, **({"text": whole} if start["type"] == "text" else {"input": whole})}
                for start, _delta, whole in blocks
            ]
            return web.json_response({**message, "content": content, "stop_reason": stop})
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": message})
        ]
        for index, (start, delta, _whole) in enumerate(blocks):
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return await _sse(request, events)

    # -- OpenAI Responses -----------------------------------------------------------------------

    async def _openai(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        words, call = self._turn(body)
        n = len(self.requests)
        rid = f"resp_{n:02d}"
        items: list[dict[str, Any]] = []
        if words:
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{n:02d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": words, "annotations": []}],
                }
            )
        if call:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{n:02d}",
                    "call_id": f"call_{n:02d}",
                    **self._codex_name(call[0]),
                    "arguments": call[1],
                    "status": "completed",
                }
            )
        usage = {
            "input_tokens": 10,
            "input_tokens_details": None,
            "output_tokens": 5,
            "output_tokens_details": None,
            "total_tokens": 15,
        }
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": {"id": rid}})
        ]
        for index, item in enumerate(items):
            for kind in ("response.output_item.added", "response.output_item.done"):
                events.append((kind, {"type": kind, "output_index": index, "item": item}))
        completed = {"id": rid, "output": items, "usage": usage}
        events.append(("response.completed", {"type": "response.completed", "response": completed}))
        return await _sse(request, events)

    # -- Gemini generateContent ---------------------------------------------------------------

    async def _google(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        if not body.get("tools"):
            # Gemini CLI's side requests (its model router, its next-speaker check) ask for JSON
            # of a schema; one object carrying the fields each one wants.
            side = {
                "complexity_reasoning": "A simple request.",
                "complexity_score": 1,
                "reasoning": "The model answered.",
                "model_choice": "flash",
                "next_speaker": "user",
            }
            parts: list[dict[str, Any]] = [{"text": json.dumps(side)}]
        else:
            words, call = self._turn(body)
            parts = [{"text": words}] if words else []
            if call:
                name, arguments = call
                call_part = {"name": self._gemini_name(name), "args": json.loads(arguments)}
                parts.append({"functionCall": call_part})
        chunk = {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
        }
        if "streamGenerateContent" not in request.path:
            return web.json_response(chunk)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
        await response.write_eof()
        return response


def _gemini_text(response: object) -> str:
    """A tool result as Gemini CLI hands it to the model: `{"output": text}` (or `{"error": …}`)."""
    if isinstance(response, dict) and isinstance(response.get("output"), str):
        return response["output"]
    return json.dumps(response, ensure_ascii=False)


def _gemini_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for content in body.get("contents") or []
        for part in content.get("parts") or []
        if isinstance(part, dict)
    ]


async def _sse(
    request: web.Request, events: list[tuple[str, dict[str, Any]]]
) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for name, data in events:
        line = f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
        await response.write(line.encode())
    await response.write_eof()
    return response


class ToolScript(ScriptedModel):
    """A model that calls the host's own tools, one call per turn in the order given, each
    `(tool name, arguments)`, then ends its turn; records every request like ScriptedModel."""

    def __init__(self, kind: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
        super().__init__(kind, {})
        self.calls = calls

    def _offers_tool(self, body: dict[str, Any]) -> bool:
        return bool(body.get("tools"))

    def _claude_name(self, name: str) -> str:
        return name

    def _codex_name(self, name: str) -> dict[str, str]:
        return {"name": name}

    def _gemini_name(self, name: str) -> str:
        return name

    def _turn(self, body: dict[str, Any]) -> tuple[str, tuple[str, str] | None]:
        if not self._offers_tool(body):
            return "Reading the project", None
        done = len(self.outputs(body))
        if done < len(self.calls):
            name, arguments = self.calls[done]
            return "", (name, json.dumps(arguments))
        return "Finished.", None

    def outputs(self, body: dict[str, Any] | None = None) -> list[str]:
        """The text of each tool result in `body` (default: the last turn), in order."""
        if body is None:
            turns = self.conversation()
            body = turns[-1].body if turns else {}
        out = []
        if self.kind == "anthropic":
            for message in body.get("messages") or []:
                content = message.get("content")
                for block in content if isinstance(content, list) else []:
                    if block.get("type") == "tool_result":
                        inner = block.get("content")
                        if isinstance(inner, list):
                            inner = "".join(b.get("text", "") for b in inner)
                        out.append(str(inner))
        elif self.kind == "google":
            for part in _gemini_parts(body):
                answer = part.get("functionResponse")
                if isinstance(answer, dict):
                    out.append(json.dumps(answer.get("response"), ensure_ascii=False))
        else:
            for item in body.get("input") or []:
                if str(item.get("type", "")).endswith("_output"):
                    output = item.get("output")
                    if not isinstance(output, str):
                        output = json.dumps(output, ensure_ascii=False)
                    out.append(output)
        return out
