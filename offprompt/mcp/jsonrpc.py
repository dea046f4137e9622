"""JSON-RPC 2.0 pieces the MCP layer needs: error codes, the error type, and message shapes.

Parsing is strict about what a request is and lenient about what it ignores (see `classify`).
Text that is not valid Unicode (a JSON escape of a lone surrogate) is refused where it arrives:
in an id (-32600, id null), a method (-32600) or params outside a tool's `arguments` (-32602);
inside `arguments` the tool's schema refuses it. Nothing sent can then fail to encode.
"""

from __future__ import annotations

import json

from offprompt.errors import RpcError
from offprompt.utf8 import is_text

# This module is on the path to the first reply, which loads neither `typing` nor
# `dataclasses` (a few ms each of a ~20 ms budget, DESIGN §2): types are for mypy only, and the
# messages are plain slotted classes, made once by `classify` and only read after.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    JSON: TypeAlias = dict[str, Any]
    RequestId: TypeAlias = str | int
    Message: TypeAlias = "Request | Notification | Response | Invalid | None"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
MISSING_CLIENT_CAPABILITY = -32021  # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28


class Request:
    __slots__ = ("id", "method", "params")
    id: RequestId
    method: str
    params: JSON | None

    def __init__(self, id: RequestId, method: str, params: JSON | None) -> None:
        self.id = id
        self.method = method
        self.params = params


class Notification:
    __slots__ = ("method", "params")
    method: str
    params: JSON | None

    def __init__(self, method: str, params: JSON | None) -> None:
        self.method = method
        self.params = params


class Response:
    """A client's answer to a request the server sent."""

    __slots__ = ("error", "id", "result")
    id: RequestId
    result: Any
    error: JSON | None

    def __init__(self, id: RequestId, result: Any, error: JSON | None) -> None:
        self.id = id
        self.result = result
        self.error = error


class Invalid:
    """A message to answer with an error (id is None when none could be read)."""

    __slots__ = ("error", "id")
    id: RequestId | None
    error: RpcError

    def __init__(self, id: RequestId | None, error: RpcError) -> None:
        self.id = id
        self.error = error


def _valid_id(value: Any) -> bool:
    # bool is an int subclass in Python; JSON true/false is not a valid id.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def unreadable_text(value: Any, where: str, skip: str | None = None) -> str | None:
    """Where in `value` a string or key is not valid Unicode, or None; `skip` is a top-level key
    left to someone else (a tool's `arguments`, which its schema checks)."""
    stack: list[tuple[Any, str, bool]] = [(value, where, True)]
    while stack:
        item, at, top = stack.pop()
        if isinstance(item, str):
            if not is_text(item):
                return at
        elif isinstance(item, dict):
            for key, sub in item.items():
                if not isinstance(key, str) or not is_text(key):
                    return f"a field name in {at}"
                if not (top and key == skip):
                    stack.append((sub, f"{at}.{key}", False))
        elif isinstance(item, list):
            stack.extend((sub, f"{at}[{i}]", False) for i, sub in enumerate(item))
    return None


def classify(line: bytes | str) -> Message:
    """Turn one line into a message; None for a blank line or something to ignore silently."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError:
            return Invalid(None, RpcError(PARSE_ERROR, "Parse error: not UTF-8"))
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return Invalid(None, RpcError(PARSE_ERROR, "Parse error: not JSON"))
    if isinstance(obj, list):
        return Invalid(
            None, RpcError(INVALID_REQUEST, "Invalid Request: batches are not supported")
        )
    if not isinstance(obj, dict):
        return Invalid(None, RpcError(INVALID_REQUEST, "Invalid Request: not an object"))
    raw_id = obj.get("id")
    rid: RequestId | None = raw_id if _valid_id(raw_id) else None
    if isinstance(rid, str) and not is_text(rid):
        if "method" not in obj:
            return None  # a response with an id we never sent: nothing to answer
        # An id that cannot be written back is no id: JSON-RPC answers such a request with null.
        return Invalid(None, RpcError(INVALID_REQUEST, "Invalid Request: id is not valid Unicode"))
    if obj.get("jsonrpc") != "2.0":
        return Invalid(rid, RpcError(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"'))
    method = obj.get("method")
    if method is None:
        if ("result" in obj or "error" in obj) and rid is not None:
            error = obj.get("error")
            return Response(rid, obj.get("result"), error if isinstance(error, dict) else None)
        if "result" in obj or "error" in obj:
            return None  # a response we cannot correlate: nothing to answer
        return Invalid(rid, RpcError(INVALID_REQUEST, "Invalid Request: no method"))
    if not isinstance(method, str):
        return Invalid(rid, RpcError(INVALID_REQUEST, "Invalid Request: method must be a string"))
    params = obj.get("params")
    if "id" not in obj:
        if not is_text(method) or unreadable_text(params, "params") is not None:
            return None  # a notification is never answered, and this one means nothing
        return Notification(method, params if isinstance(params, dict) else None)
    if rid is not None and not is_text(method):
        return Invalid(
            rid, RpcError(INVALID_REQUEST, "Invalid Request: method is not valid Unicode")
        )
    if rid is None:
        return Invalid(
            None, RpcError(INVALID_REQUEST, "Invalid Request: id must be a string or integer")
        )
    if params is not None and not isinstance(params, dict):
        return Invalid(rid, RpcError(INVALID_PARAMS, "Invalid params: params must be an object"))
    bad = unreadable_text(params, "params", skip="arguments" if method == "tools/call" else None)
    if bad is not None:
        shown = bad if len(bad) <= 120 else bad[:120] + "…"
        return Invalid(
            rid, RpcError(INVALID_PARAMS, f"Invalid params: {shown} is not valid Unicode")
        )
    return Request(rid, method, params)


def dumps(message: JSON) -> bytes:
    """One message as one line: compact, UTF-8, newline-terminated (json escapes raw newlines).

    Never fails on text: should a lone surrogate get this far, it goes out as a JSON escape.
    """
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return data + b"\n"


def result(rid: RequestId, value: Any) -> JSON:
    return {"jsonrpc": "2.0", "id": rid, "result": value}


def error(rid: RequestId | None, err: RpcError) -> JSON:
    return {"jsonrpc": "2.0", "id": rid, "error": err.to_json()}


def request(rid: RequestId, method: str, params: JSON | None) -> JSON:
    msg: JSON = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: JSON | None) -> JSON:
    msg: JSON = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg
