"""Asking the provider whether a key works before it is written (DESIGN §16): which values may be
sent where, one HTTPS request each, in parallel, and the verdict the page shows.

A value goes only to its own issuer: one of its provider's API hosts, in the place that provider
documents, and only when it is positively that credential's (`_issued`): it passes the
credential's shape rules and, by the longest prefix the registry knows that it starts with, is
that credential's own and no other provider's (registry.whose == "own"; `sk-proj-…` is OpenAI's,
`sk-ant-…` is Anthropic's, `sk-…`, `sk_live_…`, `whsec_…` and `AIza…` are shared and so nobody's
own); or, for a credential with no distinctive prefix at all (Mistral, Vercel, Cloudflare), it
carries no prefix the registry knows and the request named the provider (never when the
credential was found from the key's name alone). Never a `secret: false` field, whatever the
registry says, nor a generated value. Nothing of an answer is logged.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from offprompt import __version__
from offprompt.echo import echoes
from offprompt.spec import SKIPPED, Verdict
from offprompt.spec import CheckStatus as Status

if TYPE_CHECKING:
    import aiohttp

    from offprompt.registry.model import Check
    from offprompt.registry.results import Field
    from offprompt.spec import SecretSpec

__all__ = [
    "LIMIT_SECONDS",
    "SKIPPED",
    "Probe",
    "Status",
    "Verdict",
    "bases",
    "checkable",
    "enabled",
    "plan",
    "run",
    "verdicts",
    "why_skipped",
]

LIMIT_SECONDS: Final = 5.0
"""The longest all checks of one submit may take together."""

MAX_ANSWER: Final = 64 * 1024
"""The most of an answer read, and only when it must be (an ok field or an account name)."""

MAX_ACCOUNT: Final = 64
"""The longest account name shown on the page."""

_log = logging.getLogger("offprompt")


@dataclass(frozen=True)
class Probe:
    """One planned request: the value, its provider's name and check, and the basic-auth user
    name taken from the credential submitted beside it (`Check.user_from`)."""

    provider: str
    check: Check
    value: str = field(repr=False)
    user: str = field(default="", repr=False)


def enabled(env: Mapping[str, str]) -> bool:
    """False under `OFFPROMPT_CHECK=off`: no check is sent from this process."""
    return env.get("OFFPROMPT_CHECK", "").strip().lower() != "off"


def bases(env: Mapping[str, str]) -> dict[str, str]:
    """`OFFPROMPT_CHECK_BASE=host=URL[,host=URL…]` as `{host: "scheme://netloc"}` (tests, mirrors).

    An entry that is not `host=http(s)://netloc` is ignored with a warning: that host's checks go
    where its provider documents, as without the variable.
    """
    out: dict[str, str] = {}
    for entry in env.get("OFFPROMPT_CHECK_BASE", "").split(","):
        if not entry.strip():
            continue
        host, _, url = entry.strip().partition("=")
        parts = urlsplit(url.strip())
        if not host or parts.scheme not in ("http", "https") or not parts.netloc:
            _log.warning("OFFPROMPT_CHECK_BASE: ignored an entry that is not host=URL")
            continue
        out[host.strip().lower()] = f"{parts.scheme}://{parts.netloc}"
    return out


def _sendable(text: str) -> bool:
    """Printable ASCII without spaces: what can go in a header as it is, changed by nothing."""
    return bool(text) and all("!" <= c <= "~" for c in text)


def _shaped(field: Field, value: str) -> bool:
    """Whether `value` passes `field`'s rules and carries no prefix the registry knows for
    anything else (a basic-auth user name from the credential beside the checked one)."""
    from offprompt import registry

    if not _sendable(value) or not registry.check(field, value).ok:
        return False
    return registry.whose(field, value) != "claimed"


def _issued(secret: SecretSpec, field: Field, value: str) -> bool:
    """Whether `value` is positively `field`'s credential's, so its provider may see it (§16).

    Its own distinctive prefix, longest of those the registry knows and no other provider's,
    where the credential has one; where it has none, no prefix the registry knows at all and a
    provider named by the request, since nothing in the value then says whose it is.
    """
    from offprompt import registry

    if secret.generate is not None or not secret.secret or not field.secret:
        return False
    if not _sendable(value) or not registry.check(field, value).ok:
        return False
    whose = registry.whose(field, value)
    if whose == "own":
        return True
    return whose == "unclaimed" and secret.provider is not None and not registry.distinctive(field)


def _field(secret: SecretSpec) -> Field | None:
    from offprompt import registry

    try:
        return registry.resolve(secret.name, secret.provider, secret.format)
    except ValueError:  # RegistryError: refused when the request was made; never here
        return None


def _check_of(field: Field | None) -> Check | None:
    from offprompt import registry

    if field is None or field.provider_id is None:
        return None
    provider = registry.provider(field.provider_id)
    if provider is None:
        return None
    for credential in provider.credentials:
        if credential.key == field.credential:
            if credential.check is not None and credential.check.host in provider.hosts:
                return credential.check
            return None
    return None  # an offered format (a Neon URL) has no check


def checkable(field: Field | None) -> bool:
    """Whether values of `field` can be checked with their provider (the page's checkbox): not
    for a credential whose every distinctive prefix another provider issues too (Gemini's
    `AIza`, Google Cloud's as well), since no value of it is ever positively its own."""
    from offprompt import registry

    return (
        field is not None
        and field.secret
        and _check_of(field) is not None
        and registry.can_be_own(field)
    )


def plan(
    secrets: Sequence[SecretSpec], values: Mapping[str, str], names: Iterable[str]
) -> dict[str, Probe | None]:
    """For each of `names` (values the person supplied), the request to send, or None (skipped).

    Skipped: no check for its credential, not a secret (by the request or the registry), or a
    value that is not positively this credential's (`_issued`); a basic-auth check whose user
    name comes from a sibling credential that was not supplied beside it, fails its own rules or
    carries a prefix the registry knows for something else.
    """
    specs = {s.name: s for s in secrets}
    fields = {s.name: _field(s) for s in secrets}
    out: dict[str, Probe | None] = {}
    for name in names:
        f = fields.get(name)
        spec = specs.get(name)
        check = _check_of(f)
        value = values.get(name, "")
        if f is None or spec is None or check is None or not _issued(spec, f, value):
            out[name] = None
            continue
        user = check.user
        if check.user_from:
            sibling = [
                n
                for n, g in fields.items()
                if g is not None
                and g.provider_id == f.provider_id
                and g.credential == check.user_from
                and n in values
                and _shaped(g, values[n])  # may be `secret: false` (Twilio's Account SID)
            ]
            if len(sibling) != 1:
                out[name] = None
                continue
            user = values[sibling[0]]
        if check.auth == "basic" and ":" in user:
            out[name] = None
            continue
        out[name] = Probe(provider=f.provider_name or "", check=check, value=value, user=user)
    return out


def _request(probe: Probe, base: str | None) -> tuple[str, str, dict[str, str], bytes | None]:
    """Method, URL, headers and body of one check."""
    check = probe.check
    url = (base or f"https://{check.host}") + check.path
    headers = {"User-Agent": f"offprompt/{__version__}", "Accept": "application/json"}
    headers.update(dict(check.headers))
    if check.auth == "bearer":
        headers["Authorization"] = f"Bearer {probe.value}"
    elif check.auth == "basic":
        pair = f"{probe.user}:{probe.value}" if probe.user else f"{probe.value}:"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode("ascii")).decode()
    else:
        headers[check.auth.removeprefix("header:")] = probe.value
    body = check.body.encode("utf-8") if check.body else None
    return ("POST" if body is not None else "GET"), url, headers, body


async def _answer(response: aiohttp.ClientResponse) -> Any:
    """The JSON answer, at most MAX_ANSWER bytes of it, or None."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(8192):
        size += len(chunk)
        if size > MAX_ANSWER:
            return None
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks))
    except (ValueError, RecursionError):
        return None


def _walk(data: Any, path: str) -> Any:
    for step in path.split("."):
        if isinstance(data, dict):
            data = data.get(step)
        elif isinstance(data, list) and step.isdigit() and int(step) < len(data):
            data = data[int(step)]
        else:
            return None
    return data


def _account(raw: Any, value: str) -> str:
    """An account name fit to show: text, printable, at most MAX_ACCOUNT characters, and never
    one that holds the value or part of it (a provider that echoes a key's label): the rule of
    offprompt.echo, any 4 characters of it in any common encoding, as for a program's output."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        return ""
    text = "".join(c for c in str(raw).strip() if c.isprintable())[:MAX_ACCOUNT]
    if not text or text in value or value in text or echoes(text, (value,)):
        return ""
    return text


def _unreachable(provider: str) -> Verdict:
    return Verdict("unreachable", f"Could not reach {provider}")


async def _one(session: aiohttp.ClientSession, probe: Probe, base: str | None) -> Verdict:
    import aiohttp

    check = probe.check
    method, url, headers, body = _request(probe, base)
    name = probe.provider
    try:
        async with session.request(
            method, url, headers=headers, data=body, allow_redirects=False
        ) as response:
            status = response.status
            if status in check.rejected:
                return Verdict("rejected", f"{name} refused this key ({status})")
            if status in check.accepted:  # a key the provider knows, kept from this listing
                return Verdict("ok", "Works")
            if not 200 <= status < 300:
                return _unreachable(name)  # 3xx (never followed), 429, 5xx, undocumented
            wants_body = check.ok_field or check.account.startswith("json:")
            data = await _answer(response) if wants_body else None
            if check.ok_field:
                flag = _walk(data, check.ok_field)
                if flag is False:
                    return Verdict("rejected", f"{name} refused this key ({check.ok_field}: false)")
                if flag is not True:
                    return _unreachable(name)
            kind, _, where = check.account.partition(":")
            raw = _walk(data, where) if kind == "json" else response.headers.get(where, "")
            account = _account(raw, probe.value) if kind else ""
            return Verdict("ok", f"Works — account {account}" if account else "Works")
    except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
        # No answer (DNS, TLS, reset, timeout, a malformed one) is no verdict; the class only.
        _log.debug("check: %s unreachable (%s)", name, type(exc).__name__)
        return _unreachable(name)


async def run(probes: Mapping[str, Probe | None], env: Mapping[str, str]) -> dict[str, Verdict]:
    """Every probe's verdict, sent in parallel, all within LIMIT_SECONDS; None is `skipped`."""
    todo = {name: p for name, p in probes.items() if p is not None}
    out: dict[str, Verdict] = {name: SKIPPED for name in probes}
    if not todo:
        return out
    import aiohttp

    where = bases(env)
    timeout = aiohttp.ClientTimeout(total=LIMIT_SECONDS)
    async with aiohttp.ClientSession(
        timeout=timeout, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False
    ) as session:
        tasks = {
            name: asyncio.ensure_future(_one(session, p, where.get(p.check.host)))
            for name, p in todo.items()
        }
        done, pending = await asyncio.wait(tasks.values(), timeout=LIMIT_SECONDS + 0.5)
        for task in pending:
            task.cancel()
        for name, task in tasks.items():
            if task in done and not task.cancelled() and task.exception() is None:
                out[name] = task.result()
                continue
            if task in done and not task.cancelled():  # a fault of ours: said by its class only
                _log.warning("check: %s failed (%s)", name, type(task.exception()).__name__)
            # Not checked is what a failed check means: the write is held only by a refusal.
            out[name] = _unreachable(todo[name].provider)
        if pending:
            await asyncio.wait(pending)
    for name, verdict in out.items():
        if name in todo:
            _log.info("check: %s %s", name, verdict.status)
    return out


async def verdicts(
    secrets: Sequence[SecretSpec],
    values: Mapping[str, str],
    names: Sequence[str],
    env: Mapping[str, str],
) -> dict[str, Verdict]:
    """The verdict of each of `names` (values the person supplied): `plan`, then `run`; a
    skipped one's text says why it was not asked. With `enabled`, this module is the
    Submitter's provider checker (write/steps.py)."""
    out = await run(plan(secrets, values, names), env)
    specs = {s.name: s for s in secrets}
    for name, verdict in out.items():
        if verdict.status == "skipped" and name in specs:
            out[name] = Verdict("skipped", why_skipped(specs[name], values.get(name, "")))
    return out


def why_skipped(secret: SecretSpec, value: str) -> str:
    """Why `plan` sends nothing for `secret`, in words for the person; never a part of `value`,
    only which of §16's rules kept it home."""
    from offprompt import registry

    f = _field(secret)
    if f is None or f.provider_id is None:
        return "offprompt knows no provider for this key"
    who = f.provider_name or "its provider"
    if not secret.secret or not f.secret or secret.generate is not None:
        return "it is not a secret, so it is never sent to a provider"
    if _check_of(f) is None:
        return f"offprompt has no check for this {who} key"
    if secret.provider is None and not registry.distinctive(f):
        return (
            f"{who} was not named for it and its keys have no shape of their own,"
            " so it was not sent there"
        )
    if not registry.can_be_own(f) or not _issued(secret, f, value):
        return f"nothing in the value shows it is {who}'s own, so it was not sent there"
    return f"{who} checks it only together with the key beside it, which was not given"
