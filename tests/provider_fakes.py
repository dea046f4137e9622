"""Every check host of the registry faked on loopback, and values built from the registry's own
rules, for tests of where a value may be sent to be checked (DESIGN §16).

`Recorders.start(aiohttp_server)` starts one server per check host on 127.0.0.1, each answering
200 `{}` and recording every request it receives; `env` is the `OFFPROMPT_CHECK_BASE` that sends
each host's checks to its own. `fresh()` is a canary of its own (the `canary` fixture's shape)
for a test that needs several; `carrying(prefix, body, *fields)` a value of the prefix and body
that passes the first field's rules and, where some length lets it, the others'.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web
from aiohttp.test_utils import TestServer

from offprompt import registry
from offprompt.registry import PROVIDERS, Credential, Field, Provider

AiohttpServer = Callable[[web.Application], Awaitable[TestServer]]

CHECKED: list[tuple[Provider, Credential]] = [
    (p, c) for p in PROVIDERS for c in p.credentials if c.check is not None
]
"""Every credential of the registry that has a check."""


def ref(p: Provider, c: Credential) -> str:
    return f"{p.id}/{c.key}"


def field_of(p: Provider, c: Credential) -> Field:
    found = registry.resolve("THE_KEY", ref(p, c))
    assert found is not None
    return found


def prefixes(c: Credential) -> list[tuple[str, bool]]:
    """Every prefix `c`'s rules declare (inside `either` too), with whether it is distinctive."""
    rules = [o for r in c.rules for o in (r.options if r.kind == "either" else (r,))]
    return [(pre, r.distinctive) for r in rules if r.kind == "prefix" for pre in r.prefixes]


def issuers(prefix: str) -> set[str]:
    """The ids of every provider with a credential that declares `prefix`, read from the data."""
    return {p.id for p in PROVIDERS for c in p.credentials if prefix in dict(prefixes(c))}


def own_prefixes(p: Provider, c: Credential) -> list[str]:
    """`c`'s distinctive prefixes that no other provider's credential declares."""
    return [pre for pre, d in prefixes(c) if d and issuers(pre) == {p.id}]


OWNED = [(p, c) for p, c in CHECKED if own_prefixes(p, c)]
"""The credentials with a check and a prefix of their own: their keys are checked by it."""

SHAPELESS = [(p, c) for p, c in CHECKED if not any(d for _, d in prefixes(c))]
"""The credentials with a check and no distinctive prefix: checked when their provider is named."""


def fresh() -> str:
    """A unique value like the `canary` fixture's, without its shared `canary-` prefix: capital
    letters and digits in turn, 24 characters, so it fits every key's character set."""
    letters, digits = "ABCDEFGHJKLMNPQRSTUVWXYZ", "23456789"
    return "".join(secrets.choice(letters) + secrets.choice(digits) for _ in range(12))


def carrying(prefix: str, body: str, *fields: Field) -> str | None:
    """`prefix`, `body`, then `0`s to the shortest length that passes every rule of `fields`,
    else of the first one alone; None when no length does."""
    start = prefix + body
    # The lengths worth trying: as it is, and each end of every length rule of the fields.
    ends = {r.min for f in fields for r in f.rules if r.kind == "length"}
    ends |= {r.max for f in fields for r in f.rules if r.kind == "length" and r.max < 1000}
    lengths = sorted(n for n in {len(start), *ends} if n >= len(start))
    for wanted in (fields, fields[:1]):
        for n in lengths:
            value = start + "0" * (n - len(start))
            if all(registry.check(f, value).ok for f in wanted):
                return value
    return None


@dataclass
class Seen:
    """One request a fake host received; `text` is all of it, a basic-auth pair decoded."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        parts = [self.method, self.path, *self.headers.values(), self.body.decode("latin-1")]
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            try:
                parts.append(base64.b64decode(auth.removeprefix("Basic ")).decode("latin-1"))
            except (binascii.Error, ValueError):
                pass
        return "\n".join(parts)


@dataclass
class Recorders:
    """One fake per check host: what each received, and the `OFFPROMPT_CHECK_BASE` to reach it."""

    seen: dict[str, list[Seen]] = field(default_factory=dict)
    bases: dict[str, str] = field(default_factory=dict)

    @property
    def env(self) -> str:
        return ",".join(f"{host}={base}" for host, base in self.bases.items())

    def all_seen(self) -> list[Seen]:
        return [s for seen in self.seen.values() for s in seen]

    def hosts_seeing(self, value: str) -> set[str]:
        """The hosts that received `value` in any request, anywhere in it."""
        return {host for host, seen in self.seen.items() if any(value in s.text for s in seen)}

    @classmethod
    async def start(cls, aiohttp_server: AiohttpServer) -> Recorders:
        out = cls()
        for host in sorted({c.check.host for _, c in CHECKED if c.check is not None}):
            seen: list[Seen] = []

            async def handle(request: web.Request, seen: list[Seen] = seen) -> web.Response:
                body = await request.read()
                seen.append(Seen(request.method, request.path, dict(request.headers), body))
                return web.json_response({})

            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", handle)
            server = await aiohttp_server(app)
            out.seen[host] = seen
            out.bases[host] = f"http://127.0.0.1:{server.port}"
        return out
