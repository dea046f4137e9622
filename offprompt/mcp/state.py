"""Signing of the 2026-07-28 `requestState`: HMAC-SHA256 under a per-process key, single use.

The state binds the tool name, a digest of the arguments, the client's name and an expiry, and
carries the tool's own small payload. The client sees it (integrity only, not confidentiality).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from typing import Any

from offprompt.errors import RpcError
from offprompt.mcp.jsonrpc import INVALID_PARAMS

_VERSION = "s1"
_MAX_LEN = 8192


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def arguments_digest(arguments: dict[str, Any]) -> str:
    # ASCII escapes, so arguments holding a lone surrogate digest too (and then match nothing).
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _bad(reason: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: requestState {reason}")


class StateSigner:
    """Signs request states and verifies them; each state verifies once (replays are refused)."""

    def __init__(self, *, key: bytes | None = None, clock: Callable[[], float] = time.time) -> None:
        self._key = key or secrets.token_bytes(32)
        self._clock = clock
        self._used: dict[str, float] = {}  # state id -> expiry, for single use

    def sign(
        self,
        *,
        tool: str,
        arguments: dict[str, Any],
        client: str,
        data: dict[str, Any],
        ttl: float,
    ) -> str:
        body = {
            "v": _VERSION,
            "j": secrets.token_hex(8),
            "t": tool,
            "a": arguments_digest(arguments),
            "c": client,
            "x": round(self._clock() + ttl, 3),
            "d": data,
        }
        payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        mac = hmac.new(self._key, payload, hashlib.sha256).digest()
        return f"{_b64(payload)}.{_b64(mac)}"

    def verify(
        self, state: Any, *, tool: str, arguments: dict[str, Any], client: str
    ) -> dict[str, Any]:
        """The tool's payload; -32602 for tampered, expired, replayed or mismatched state."""
        if not isinstance(state, str) or not state or len(state) > _MAX_LEN:
            raise _bad("is not a state this server issued")
        head, _, tail = state.partition(".")
        try:
            payload, mac = _unb64(head), _unb64(tail)
        except (ValueError, TypeError):
            raise _bad("is malformed") from None
        expected = hmac.new(self._key, payload, hashlib.sha256).digest()
        if not hmac.compare_digest(mac, expected):
            raise _bad("failed verification")
        body = json.loads(payload)
        now = self._clock()
        if body.get("v") != _VERSION or not isinstance(body.get("d"), dict):
            raise _bad("is not a state this server issued")
        if body["x"] < now:
            raise _bad("has expired; call the tool again without it")
        if body["t"] != tool or body["a"] != arguments_digest(arguments):
            raise _bad("belongs to another tool call")
        if body["c"] != client:
            raise _bad("belongs to another client")
        self._forget_expired(now)
        if body["j"] in self._used:
            raise _bad("was already used; call the tool again without it")
        self._used[body["j"]] = body["x"]
        data: dict[str, Any] = body["d"]
        return data

    def _forget_expired(self, now: float) -> None:
        for jti in [j for j, exp in self._used.items() if exp < now]:
            del self._used[jti]
