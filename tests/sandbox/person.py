"""A person's browser without Chromium: load a remote page through the edge, seal, POST.

Used where a real browser adds nothing to what a test proves; the browser tests use Chromium.
"""

from __future__ import annotations

import json
import re
import secrets
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from http.cookiejar import CookieJar
from typing import Any

from offprompt.crypto.fingerprint import fingerprint
from offprompt.crypto.seal import b64u_decode, b64u_encode, plaintext, seal

NONCE = re.compile(r'<input type="hidden" name="nonce" value="([^"]+)">')


@dataclass(frozen=True)
class Answer:
    status: int
    body: str

    def json(self) -> Any:
        return json.loads(self.body)


# The person's browser keeps the claim cookie its page's script got (DESIGN §17).
_JAR = CookieJar()


def claim(page_url: str, nonce: str) -> Answer:
    """What the remote page's script does once loaded: claim the request for this browser."""
    body = urllib.parse.urlencode({"nonce": nonce}).encode()
    return fetch(f"{page_url}/claim", body, {"Accept": "application/json"})


def _opener(url: str) -> urllib.request.OpenerDirector:
    # The environment's HTTPS_PROXY (the edge) and SSL_CERT_FILE (its CA), as any client would;
    # loopback is reached directly.
    loopback = urllib.parse.urlsplit(url).hostname == "127.0.0.1"
    return urllib.request.build_opener(
        urllib.request.ProxyHandler({} if loopback else None),
        urllib.request.HTTPSHandler(context=ssl.create_default_context()),
        urllib.request.HTTPCookieProcessor(_JAR),
    )


def fetch(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> Answer:
    request = urllib.request.Request(url, data=data, headers=headers or {})  # noqa: S310
    try:
        with _opener(url).open(request, timeout=30) as reply:
            return Answer(reply.status, reply.read().decode())
    except urllib.error.HTTPError as err:
        with err:
            return Answer(err.code, err.read().decode())


def sealed_submit(link: str, values: dict[str, str]) -> tuple[Answer, str]:
    """Open `link` (with its #k=), seal `values` as the page does, POST; the answer and the
    fingerprint the page would show."""
    page_url, _, fragment = link.partition("#")
    point = b64u_decode(fragment.removeprefix("k="))
    page = fetch(page_url)
    found = NONCE.search(page.body)
    if page.status != 200 or found is None:
        raise RuntimeError(f"the page answered {page.status}")
    nonce = found.group(1)
    claimed = claim(page_url, nonce)
    if claimed.status != 204:
        raise RuntimeError(f"the claim answered {claimed.status}")
    token = urllib.parse.urlsplit(page_url).path.rsplit("/", 1)[1]
    fp_key = secrets.token_bytes(32)
    clear = plaintext(values, fp_key=b64u_encode(fp_key))
    body = urllib.parse.urlencode(
        {"nonce": nonce, "sealed": seal(point, clear, token=token, nonce=nonce)}
    ).encode()
    answer = fetch(page_url, body, {"Accept": "application/json"})
    return answer, str(fingerprint(fp_key, [(k, v) for k, v in values.items() if v]))
