"""OpenBao / HashiCorp Vault KV v2 (DESIGN §13.1): the values as one JSON object on `bao`'s
stdin, `kv patch` where a secret exists at the path (its other keys kept), else `kv put -cas=0`.

Linked by the environment the server inherited: `BAO_ADDR` (else `VAULT_ADDR`) names the store,
and `bao` (else `vault`) must be on PATH. The address, and the namespace where one is set, are
read once when the request is made and passed as `-address=`/`-namespace=` on every run; the
variables that could name another store are kept from the program. The token stays where the
person keeps it (`BAO_TOKEN`/`VAULT_TOKEN`, the token file): the program inherits it, offprompt
never reads it.

What runs, first to last: `kv metadata get` (is there a secret, is its latest version live?),
then `kv patch … -` or `kv put -cas=N … -`. A failure is told apart in words from the store's
own answer: unreachable, no answer, sealed, no such mount, permission denied. OpenBao answers a
mount that does not exist with the same 403 "preflight capability check" as a path the token
may not touch, even for root; `secrets list` (when the token may list mounts), else `token
capabilities` on the path, says which it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from offprompt.errors import FieldPath, NotLinked, RefusedRequest
from offprompt.sinks.destinations import runner
from offprompt.sinks.destinations.interface import Call, Destination, Link, Ran, RunCall, Sent

__all__ = ["DESTINATION", "VaultDestination", "VaultSpec", "store_address"]

KIND: Final = "vault"
_SEGMENT: Final = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}"
PATH_PATTERN: Final = rf"^{_SEGMENT}(/{_SEGMENT}){{1,15}}$"
NAMESPACE_PATTERN: Final = rf"^{_SEGMENT}(/{_SEGMENT}){{0,15}}/?$"
_PATH: Final = re.compile(PATH_PATTERN)
_NAMESPACE: Final = re.compile(NAMESPACE_PATTERN)
# An address as the page can show it and argv can carry it: scheme, host, port, no user part.
_ADDRESS: Final = re.compile(r"https?://[A-Za-z0-9.\[\]:_-]{1,253}(:\d{1,5})?/?", re.IGNORECASE)


@dataclass(frozen=True)
class VaultSpec:
    """A KV v2 secret: `path` is `MOUNT/PATH` (the first segment is the mount); `namespace`:
    an OpenBao / Vault Enterprise namespace, else the environment's, else none."""

    kind: ClassVar[str] = KIND
    path: str
    namespace: str | None = None


def store_address(env: Mapping[str, str], names: Sequence[str], what: str) -> str | None:
    """The first of `names` set in `env`, as an http(s) address; None when none is set.
    NotLinked when it is set but is not one (never echoed: it may carry a user part)."""
    for name in names:
        value = env.get(name, "").strip()
        if value:
            if not _ADDRESS.fullmatch(value):
                raise NotLinked(
                    f"{name} is not an http(s) address of {what} (scheme, host and port only)."
                )
            return value.rstrip("/")
    return None


class VaultDestination(Destination[VaultSpec]):
    kind = KIND
    label = "OpenBao / Vault KV secret"
    linked_by = "BAO_ADDR or VAULT_ADDR (vault)"
    cli_form = "vault:MOUNT/PATH"
    programs = ("bao", "vault")
    command = "bao kv patch"
    # Each would name another store, namespace or agent than the one the page showed; the
    # address and namespace checked go on argv instead.
    drop_env = frozenset(
        {
            "BAO_ADDR",
            "VAULT_ADDR",
            "BAO_NAMESPACE",
            "VAULT_NAMESPACE",
            "BAO_AGENT_ADDR",
            "VAULT_AGENT_ADDR",
        }
    )

    def parse(self, raw: Mapping[str, Any], at: FieldPath) -> VaultSpec:
        path = raw.get("path")
        if not isinstance(path, str) or not _PATH.fullmatch(path):
            raise RefusedRequest.about(
                (*at, "path"),
                ' needs "path": MOUNT/PATH, the KV v2 mount then the secret\'s path '
                "(letters, digits, '.', '-', '_', segments joined by '/').",
            )
        namespace = raw.get("namespace")
        if namespace is not None and not _NAMESPACE.fullmatch(str(namespace)):
            raise RefusedRequest.about(
                (*at, "namespace"), f" {namespace!r} is not a namespace path."
            )
        return VaultSpec(path=path, namespace=namespace)

    def properties(self) -> dict[str, Any]:
        return {
            "path": {
                "type": "string",
                "pattern": PATH_PATTERN,
                "description": "vault (required): MOUNT/PATH of the KV v2 secret.",
            },
            "namespace": {
                "type": "string",
                "pattern": NAMESPACE_PATTERN,
                "description": "vault: the namespace (else BAO_NAMESPACE / VAULT_NAMESPACE).",
            },
        }

    def from_cli(self, option: str | None) -> dict[str, Any] | None:
        # Always the field, empty without an option: the validation says it needs one.
        return {"path": option or ""}

    def link(self, project: Path, spec: VaultSpec, env: Mapping[str, str]) -> Link:
        address = store_address(env, ("BAO_ADDR", "VAULT_ADDR"), "an OpenBao / Vault server")
        if address is None:
            raise NotLinked(
                "no OpenBao / Vault store is set up here: neither BAO_ADDR nor VAULT_ADDR is set "
                "in the environment offprompt was started with."
            )
        if runner.find_program(self.programs, env) is None:
            raise NotLinked("neither bao nor vault is installed here (not found on PATH).")
        namespace = spec.namespace
        if namespace is None:
            namespace = env.get("BAO_NAMESPACE") or env.get("VAULT_NAMESPACE") or None
            if namespace is not None and not _NAMESPACE.fullmatch(namespace):
                raise NotLinked("BAO_NAMESPACE / VAULT_NAMESPACE is not a namespace path.")
        pins: tuple[str, ...] = (f"-address={address}",)
        shown = f"{spec.path} at {address}"
        if namespace is not None:
            pins += (f"-namespace={namespace}",)
            shown += f" (namespace {namespace})"
        return Link(kind=self.kind, ident=spec.path, target=shown, args=pins)

    def describe(self, link: Link, spec: VaultSpec, names: Sequence[str]) -> str:
        mount, _, path = spec.path.partition("/")
        return (
            f"{self.command} {' '.join(link.args)} -mount={mount} {path} - ({', '.join(names)} "
            "as JSON on stdin; kv put -cas=0 where no secret is there yet)"
        )

    def unsafe(self, name: str, value: str) -> str | None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return f"{name}'s value is not UTF-8 text, which a JSON object carries"
        return None

    def send(self, link: Link, spec: VaultSpec, values: Mapping[str, str], run: RunCall) -> Sent:
        if not values:
            return Sent()
        mount, _, path = spec.path.partition("/")
        where = (*link.args, f"-mount={mount}")
        label = ", ".join(values)
        meta = run(Call(("kv", "metadata", "get", "-format=json", *where, path), b"", "read"))
        if meta.ok:
            version = _live_version(meta.out)
            if version is None:
                return Sent(
                    problems=(
                        f"{label}: {spec.path} answered in a way offprompt does not know; not sent",
                    )
                )
            live, current = version
            verb = ("patch",) if live else ("put", f"-cas={current}")
        elif _not_found(meta):
            verb, current = ("put", "-cas=0"), 0
        else:
            return Sent(problems=(f"{label}: {self._why(meta, link, spec, run)}",))
        body = json.dumps(dict(values), ensure_ascii=False, separators=(",", ":"))
        wrote = run(Call(("kv", *verb, *where, path, "-"), body.encode("utf-8"), label))
        if not wrote.ok:
            return Sent(problems=(f"{label}: {self._why(wrote, link, spec, run)}",))
        if verb[0] == "patch":
            kept = " (its other keys kept)"
        elif current:
            kept = " (a new version: the latest one there was deleted)"
        else:
            kept = " (a new secret)"
        return Sent((label,), done=f" to {spec.path}{kept}")

    def _why(self, ran: Ran, link: Link, spec: VaultSpec, run: RunCall) -> str:
        """The store's failure in words, never its output whole (it may name the token's
        accessor or a path's contents)."""
        address = link.args[0].removeprefix("-address=")
        mount = spec.path.partition("/")[0]
        text = (ran.err + ran.out).decode("utf-8", "replace")
        if ran.stopped:
            return f"the server at {address} did not answer ({ran.detail})"
        if ran.code is None:
            return ran.detail
        if re.search(r"connection refused|no such host|dial tcp|i/o timeout|EOF", text):
            return f"the server at {address} is unreachable"
        if "is sealed" in text:
            return f"the store at {address} is sealed (unseal it, then send again)"
        if "preflight capability check" in text:
            return self._mount_or_denied(link, spec, run, mount)
        if "Code: 403" in text or "permission denied" in text:
            return f"permission denied (403): the token may not write {spec.path}"
        if "missing client token" in text or "no token" in text.lower():
            return "no token: set BAO_TOKEN or VAULT_TOKEN, or log in with `bao login`"
        if "check-and-set" in text:
            return f"{spec.path} changed while offprompt wrote to it; send again"
        if "KV version 1" in text or "Metadata not supported" in text:
            return f"{mount} is a KV version 1 mount; offprompt writes to KV version 2 only"
        return ran.detail

    def _mount_or_denied(self, link: Link, spec: VaultSpec, run: RunCall, mount: str) -> str:
        """A 403 "preflight capability check": no mount named `mount`, or a token that may not
        touch the path. The list of mounts says which when the token may read it, else the
        token's own capabilities on the path (a token that holds some, root included, was
        stopped by a missing mount)."""
        denied = f"permission denied (403): the token may not write {spec.path}"
        missing = f"no such mount: {mount} is not a secrets engine at this store"
        listed = run(Call(("secrets", "list", "-format=json", *link.args), b"", "mounts"))
        if listed.ok:
            mounts = _json(listed.out)
            if isinstance(mounts, dict):
                return denied if f"{mount}/" in mounts else missing
        caps_of = f"{mount}/data/{spec.path.partition('/')[2]}"
        caps = run(
            Call(("token", "capabilities", "-format=json", *link.args, caps_of), b"", "caps")
        )
        held = _json(caps.out) if caps.ok else None
        if isinstance(held, list) and held:
            return denied if held == ["deny"] else missing
        return f"permission denied (403), or no mount named {mount}"


def _json(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _live_version(out: bytes) -> tuple[bool, int] | None:
    """(whether the latest version holds data, its number) from `kv metadata get`'s JSON."""
    meta = _json(out)
    data = meta.get("data") if isinstance(meta, dict) else None
    if not isinstance(data, dict):
        return None
    current = data.get("current_version")
    versions = data.get("versions")
    if not isinstance(current, int) or not isinstance(versions, dict):
        return None
    latest = versions.get(str(current))
    if current == 0 or not isinstance(latest, dict):
        return False, current
    live = not latest.get("destroyed") and not latest.get("deletion_time")
    return live, current


def _not_found(ran: Ran) -> bool:
    """`kv metadata get` of a path with no secret: exit 2 and "No value found"."""
    return ran.code == 2 and b"No value found at" in ran.err + ran.out


DESTINATION: Final = VaultDestination()
