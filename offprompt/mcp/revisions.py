"""The two protocol revisions' vocabulary: which versions are spoken, and what a client
declares in each (the handshake era's `initialize`, 2026-07-28's per-request `_meta`).
"""

from __future__ import annotations

from offprompt.errors import RpcError
from offprompt.mcp import jsonrpc as rpc

TYPE_CHECKING = False  # not typing's: the first reply does without it (see jsonrpc)
if TYPE_CHECKING:
    from offprompt.mcp.jsonrpc import JSON

__all__ = [
    "CACHE_TTL_MS",
    "LEGACY_VERSIONS",
    "META_CAPS",
    "META_INFO",
    "META_VERSION",
    "MODERN",
    "MODERN_VERSIONS",
    "SUPPORTED",
    "Era",
    "Legacy",
    "handshake",
    "modern_era",
]

MODERN = "2026-07-28"
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
MODERN_VERSIONS = (MODERN,)
SUPPORTED = [MODERN, LEGACY_VERSIONS[0]]
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_INFO = "io.modelcontextprotocol/clientInfo"
CACHE_TTL_MS = 300_000


class Legacy:
    """Connection state that `initialize` creates (the handshake era only)."""

    __slots__ = ("capabilities", "client_info", "initialized", "version")

    def __init__(
        self, version: str, capabilities: JSON, client_info: JSON, initialized: bool = False
    ) -> None:
        self.version = version
        self.capabilities = capabilities
        self.client_info = client_info
        self.initialized = initialized


class Era:
    """How one request is to be served: its revision and the client's declarations."""

    __slots__ = ("capabilities", "client_info", "version")

    def __init__(self, version: str, capabilities: JSON, client_info: JSON) -> None:
        self.version = version
        self.capabilities = capabilities
        self.client_info = client_info


def handshake(params: JSON) -> Legacy:
    """The connection an `initialize` opens: the client's version if we speak it, else ours."""
    asked = params.get("protocolVersion")
    version = asked if asked in LEGACY_VERSIONS else LEGACY_VERSIONS[0]
    caps = params.get("capabilities")
    info = params.get("clientInfo")
    return Legacy(
        version=version,
        capabilities=caps if isinstance(caps, dict) else {},
        client_info=info if isinstance(info, dict) else {},
    )


def modern_era(meta: JSON) -> Era:
    """What a 2026-07-28 request's `_meta` declares; RpcError when it is not one we serve."""
    version = meta.get(META_VERSION)
    if not isinstance(version, str):
        raise RpcError(rpc.INVALID_PARAMS, f"Invalid params: {META_VERSION} must be a string")
    if version not in MODERN_VERSIONS:
        raise RpcError(
            rpc.UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": SUPPORTED, "requested": version},
        )
    caps = meta.get(META_CAPS)
    if not isinstance(caps, dict):
        raise RpcError(rpc.INVALID_PARAMS, f"Invalid params: missing _meta keys {META_CAPS}")
    info = meta.get(META_INFO)
    return Era(MODERN, caps, info if isinstance(info, dict) else {})
