"""The request checks every page response passes first: Host, Sec-Fetch-Site/Origin, Accept.

Pure functions over header values (DESIGN §6 steps 1 and 2); the server's middleware applies them.
"""

import re
from collections.abc import Sequence
from typing import Final

from multidict import MultiMapping

# Any port (1-65535, checked by `_port_ok`), or none, is the contract; a Host header with a
# path, credentials, a trailing dot or an IPv6 literal is not a loopback name we serve.
_LOOPBACK_HOST: Final = re.compile(r"(?:127\.0\.0\.1|localhost)((?::[0-9]{1,5})?)", re.IGNORECASE)
_LOOPBACK_ORIGIN: Final = re.compile(r"http://(?:127\.0\.0\.1|localhost)(?::[0-9]{1,5})?")
_TUNNEL_HOST: Final = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?")
_PORT: Final = re.compile(r"(?::[0-9]{1,5})?")


def _port_ok(suffix: str) -> bool:
    """Whether `suffix` is no port at all or `:` and a port in 1-65535 (`:0`, `:99999` are not)."""
    return not suffix or 1 <= int(suffix[1:]) <= 65535


def normalize_tunnel_host(host: str | None) -> str | None:
    """A tunnel hostname as compared against Host, lowercased; None clears it."""
    if host is None:
        return None
    host = host.strip().lower()
    if not _TUNNEL_HOST.fullmatch(host):
        raise ValueError("a tunnel host is a bare DNS name, without scheme, port or path")
    return host


def host_allowed(values: Sequence[str], tunnel_host: str | None) -> bool:
    """Whether the request's Host header names this server (exactly one header)."""
    if len(values) != 1:
        return False
    host = values[0]
    loopback = _LOOPBACK_HOST.fullmatch(host)
    if loopback:
        return _port_ok(loopback.group(1))
    if tunnel_host is None:
        return False
    lowered = host.lower()
    if not lowered.startswith(tunnel_host):
        return False
    suffix = lowered[len(tunnel_host) :]
    return bool(_PORT.fullmatch(suffix)) and _port_ok(suffix)


def fetch_site_allowed(values: Sequence[str]) -> bool:
    """Whether Sec-Fetch-Site, when sent, says the request came from this origin or the person.

    Only `same-origin` and `none` pass; `cross-site`, `same-site` and values no browser sends
    are refused (fail closed).
    """
    if not values:
        return True
    return len(values) == 1 and values[0].strip().lower() in {"same-origin", "none"}


def origin_allowed(values: Sequence[str], tunnel_host: str | None) -> bool:
    """Whether Origin, when sent, is `null`, loopback on any port, or the tunnel's origin."""
    if not values:
        return True
    if len(values) != 1:
        return False
    origin = values[0]
    if origin == "null" or _LOOPBACK_ORIGIN.fullmatch(origin):
        return True
    return tunnel_host is not None and origin == f"https://{tunnel_host}"


def prefers_json(accept: str | None) -> bool:
    """Whether an Accept header ranks `application/json` above `text/html`."""
    if not accept:
        return False
    # Per type: (specificity of the range that matched, its q). The most specific range
    # decides (RFC 9110 §12.5.1).
    best = {"application/json": (-1, 0.0), "text/html": (-1, 0.0)}
    for item in accept.split(","):
        media, _, params = item.partition(";")
        media = media.strip().lower()
        q = _quality(params)
        for target, (rank, _) in list(best.items()):
            match = _specificity(media, target)
            if match is not None and match > rank:
                best[target] = (match, q)
    return best["application/json"][1] > best["text/html"][1]


def _quality(params: str) -> float:
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "q":
            try:
                q = float(val.strip())
            except ValueError:
                return 0.0
            return q if 0.0 <= q <= 1.0 else 0.0
    return 1.0


def _specificity(media: str, target: str) -> int | None:
    if media == target:
        return 2
    if media == target.split("/")[0] + "/*":
        return 1
    if media == "*/*":
        return 0
    return None


def on_loopback(values: Sequence[str]) -> bool:
    """Whether the Host header names 127.0.0.1 or localhost (not the tunnel): a cookie set there
    cannot ask for https."""
    return len(values) == 1 and _LOOPBACK_HOST.fullmatch(values[0]) is not None


# The headers by which browsers mark a fetch made ahead of the person (Chromium's speculation
# rules and <link rel=prefetch>, older Chromium, Firefox) or for a preview (Safari).
_SPECULATIVE: Final = (
    ("Sec-Purpose", "prefetch"),
    ("Purpose", "prefetch"),
    ("X-Moz", "prefetch"),
    ("X-Purpose", "prefetch"),
    ("X-Purpose", "preview"),
)


def speculative(headers: MultiMapping[str]) -> bool:
    """Whether a request is a browser's prefetch or preview, not the person opening the page:
    any of those headers naming it (`prefetch;prerender` included), whatever else it says."""
    return any(
        word in value.lower() for name, word in _SPECULATIVE for value in headers.getall(name, [])
    )
