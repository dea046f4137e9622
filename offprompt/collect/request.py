"""One validation of a collect request (DESIGN §3.1), made once into a frozen value, and the map
of every gate a name and a value pass on their way to disk.

Both doors call `validate`: the MCP tools after the schema check, `offprompt collect` with the
arguments an agent would pass.

The gates, in the order a request meets them. Each rule has one owner; a gate marked *repeats*
checks again what an earlier owner decided, so a caller that skipped that owner is still safe.

1. The schema, `offprompt.collect.schema.request_schema` (checked by `offprompt.schema`):
   owns the shape: closed objects, types, 1-12 entries, `reason` 1-2000 and `caption` 1-90
   characters, `generate` 16-64 bytes, the enums (provider refs and formats from the registry,
   sink and destination kinds), `sink.path` ≤ 1024 characters, 1-4 `also`, and no lone
   surrogate anywhere. *Repeats* the key-name pattern and length (owned by 2) and the
   destinations' environment patterns (owned by 3), so hosts that validate see them too.
2. Request validation, `validate` here: owns the key names (`check_names`: the pattern,
   ≤ 128 characters, none twice; `secret_status` calls it with 64 at most), no control
   characters in text the person reads (`reason`, `caption`), at most one of
   generate/provider/format, a provider ref that resolves to one credential
   (`offprompt.registry.resolve`), and the sink rules (`none` only with `also`, a `file` sink
   holds exactly one value and needs a path).
3. The destinations, `offprompt.sinks.destinations.parse` and each kind's `parse`: own an
   `also` entry's fields (which a kind takes, its environment names, no entry twice);
   `destinations.plan` then owns "linked by the project's own files" (`NotLinked`).
4. The sink path, `offprompt.sinks.paths.resolve_target` (through `sinks.display_of`): owns
   where a path may lead: inside the real project, not in `.git`, not a folder, UTF-8 without
   control characters, each part and the whole within the file system's limits.
5. The sink kind, `Sink.check_takes` (`offprompt.sinks.interface`): *repeats* 2 for its own
   kind (names bash can read, one name for a file sink) before every write.
6. The page's field rules, `offprompt.page.fields` with `web/rules.js`: *repeats* the
   registry's rules as advice while the person types; it refuses nothing.
7. The registry's rules, `offprompt.registry.check`: owns a value's shape (prefix, length,
   charset, format) for an entry whose provider or format was named (`SecretSpec.enforced`);
   the submit applies it (`offprompt.write.submit`), a name-only match is advice.
8. The submit, `offprompt.write.submit.Submitter.submit`: owns a value's own limits (required, at
   most 16 KiB of UTF-8, no lone surrogate; blanks only is empty) and raises
   `ValidationFailed` with 7's failures.
9. The writers: the dotenv serializer (`offprompt.sinks.dotenv_quoting.unsafe_reason`,
   `UnsafeValue`) owns "a dotenv form carries this value exactly for python-dotenv, Node and
   bash"; each destination's `Destination.unsafe` owns "its program receives it exactly".
   `check_values` of both *repeats* them before the write, so the page can say so first.
10. `secret_status` (`offprompt.status`): *repeats* 2 for its names and 4 for its path (it
   resolves like a dotenv sink); owns only what a stand-in looks like (`is_stand_in`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from offprompt.errors import FieldPath, RefusedRequest
from offprompt.names import MAX_NAME_LENGTH, MAX_NAMES, NAME_PATTERN, check_names
from offprompt.spec import DestinationSpec, GenerateSpec, ReasonAuthor, SecretSpec, SinkSpec

__all__ = [
    "MAX_NAMES",
    "MAX_NAME_LENGTH",
    "NAME_PATTERN",
    "CollectRequest",
    "check_names",
    "validate",
]

# The key-name rule itself (NAME_PATTERN, MAX_NAME_LENGTH) is offprompt.names'.


@dataclass(frozen=True)
class CollectRequest:
    """What a collect call asks for, once validated: names and settings, never a value."""

    secrets: tuple[SecretSpec, ...]
    sink: SinkSpec
    reason: str
    sandbox: bool | None = None
    """The `sandbox` argument: counts only where the environment cannot tell (DESIGN §5)."""
    also: tuple[DestinationSpec, ...] = ()
    """More destinations (DESIGN §13); their targets come from the project's files."""
    reason_by: ReasonAuthor = "agent"
    """Who wrote `reason`: an agent's arguments unless the terminal door says otherwise."""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.secrets)


def validate(args: Mapping[str, Any]) -> CollectRequest:
    """Schema-valid `collect_secret` arguments → the request; RefusedRequest for what the
    schema cannot say."""
    entries: list[Mapping[str, Any]] = list(args["secrets"])
    check_names([str(e["name"]) for e in entries])
    _check_controls(("reason",), args["reason"], allowed="\t\n\r")
    secrets: list[SecretSpec] = []
    for i, entry in enumerate(entries):
        secrets.append(_secret(i, entry))
    sink = _sink(args.get("sink") or {"kind": "dotenv"}, len(secrets))
    also = _also(args.get("also"))
    if sink.kind == "none" and not also:
        raise RefusedRequest(
            'sink {"kind": "none"} writes no file, so it needs also: name the destinations '
            'the values go to, or use the default {"kind": "dotenv", "path": ".env"}.'
        )
    sandbox = args.get("sandbox")
    return CollectRequest(
        secrets=tuple(secrets),
        sink=sink,
        reason=str(args["reason"]),
        sandbox=sandbox if isinstance(sandbox, bool) else None,
        also=also,
    )


def _also(raw: Any) -> tuple[DestinationSpec, ...]:
    if raw is None:
        return ()
    from offprompt.sinks import destinations

    if not raw:
        raise RefusedRequest("also is empty; leave it out, or name 1-4 destinations.")
    return destinations.parse(list(raw))


def _secret(i: int, entry: Mapping[str, Any]) -> SecretSpec:
    name = str(entry["name"])
    if "caption" in entry:
        _check_controls(("secrets", i, "caption"), entry["caption"], allowed="")
    chosen = [k for k in ("generate", "provider", "format") if k in entry]
    if len(chosen) > 1:
        raise RefusedRequest.about(
            ("secrets", i),
            f" ({name}) sets {' and '.join(chosen)}; use at most one of generate, provider and "
            "format per key.",
        )
    if "provider" in entry or "format" in entry:
        _check_ref(name, entry.get("provider"), entry.get("format"))
    generate = None
    if "generate" in entry:
        g = entry["generate"]
        generate = GenerateSpec(
            bytes=int(g.get("bytes", 32)), encoding=g.get("encoding", "base64url")
        )
    return SecretSpec(
        name=name,
        generate=generate,
        provider=entry.get("provider"),
        format=entry.get("format"),
        secret=bool(entry.get("secret", True)),
        caption=entry.get("caption"),
    )


def _sink(raw: Mapping[str, Any], count: int) -> SinkSpec:
    kind = raw.get("kind", "dotenv")
    path = raw.get("path")
    if kind == "none":
        if path is not None:
            raise RefusedRequest('sink {"kind": "none"} writes no file; give it no path.')
        return SinkSpec(kind="none", path="")
    if kind == "file":
        if not path:
            raise RefusedRequest(
                'a file sink needs a path, e.g. {"kind": "file", "path": "key.pem"}.'
            )
        if count != 1:
            raise RefusedRequest(
                f"a file sink holds exactly one value, but {count} keys were asked for; "
                "use one collect_secret call per file, or the dotenv sink."
            )
    return SinkSpec(kind=kind, path=path or ".env")


def _check_controls(field: FieldPath, text: str, *, allowed: str) -> None:
    """Refuse control characters (NUL, escape sequences, ...) in text shown to the person: the
    page would show them differently from what the agent wrote, or not at all."""
    if any(unicodedata.category(ch) == "Cc" and ch not in allowed for ch in text):
        kept = " other than tabs and line breaks" if allowed else ""
        raise RefusedRequest.about(
            field,
            f" must not contain control characters{kept} (NUL, escape sequences...); "
            "write plain text.",
        )


def _check_ref(name: str, provider: str | None, format: str | None) -> None:
    """An ambiguous or unknown provider ref is refused with the refs to choose from."""
    from offprompt import registry

    try:
        registry.resolve(name, provider, format)
    except registry.RegistryError as err:
        raise RefusedRequest(f"{name}: {err}") from None
