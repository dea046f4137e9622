"""JSON-RPC 2.0 pieces the MCP layer needs: error codes, the error type, and message shapes.

Parsing is strict about what a request is and lenient about what it ignores (see `classify`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]
RequestId = str | int

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
MISSING_CLIENT_CAPABILITY = -32021  # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28


class RpcError(Exception):
    """An error answered to the peer as a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> JSON:
        err: JSON = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: JSON | None


@dataclass(frozen=True)
class Notification:
    method: str
    params: JSON | None


@dataclass(frozen=True)
class Response:
    """A client's answer to a request the server sent."""

    id: RequestId
    result: Any
    error: JSON | None


@dataclass(frozen=True)
class Invalid:
    """A message to answer with an error (id is None when none could be read)."""

    id: RequestId | None
    error: RpcError


Message = Request | Notification | Response | Invalid | None


def _valid_id(value: Any) -> bool:
    # bool is an int subclass in Python; JSON true/false is not a valid id.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


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
        return Notification(method, params if isinstance(params, dict) else None)
    if rid is None:
        return Invalid(
            None, RpcError(INVALID_REQUEST, "Invalid Request: id must be a string or integer")
        )
    if params is not None and not isinstance(params, dict):
        return Invalid(rid, RpcError(INVALID_PARAMS, "Invalid params: params must be an object"))
    return Request(rid, method, params)


def dumps(message: JSON) -> bytes:
    """One message as one line: compact, UTF-8, newline-terminated (json escapes raw newlines)."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


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
