"""What a collect request asks for, once validated: the frozen values every layer passes around.

Built by the tools layer (or the CLI) from arguments; read by the request store, the page and the
sinks. Holds names and settings only, never a secret value.
"""

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal, Protocol

# Each literal is defined once, here; the tools' schemas take their enums from these.
Encoding = Literal["base64url", "base64", "hex"]
SinkKind = Literal["dotenv", "file", "none"]
RequestStatus = Literal["awaiting", "written", "expired", "cancelled"]
"""Where a collect request is in its life (the store's state machine)."""
ShownStatus = Literal["awaiting", "confirm", "written", "expired", "cancelled"]
"""A request's state as results and the page's status say it: `confirm` is an awaiting request
whose submit is held until the person's confirmation code comes back (DESIGN §17)."""
ConfirmAnswer = Literal["right", "wrong", "cancelled", "closed", "none"]
"""What the store made of a typed confirmation code: `right` (the caller writes the held
submission), `wrong` (one try fewer), `cancelled` (that was the last try: the values are
dropped and the request closed), `closed` (no longer open, or being written), `none` (no
submission is held yet)."""
ReasonAuthor = Literal["agent", "person", "offprompt"]
"""Who wrote a request's reason, as the page says it: the agent (the MCP door), the person at
the terminal (`offprompt collect --reason`), or offprompt itself (no --reason given)."""
SendStatus = Literal["sent", "failed", "skipped"]
"""What happened at one `also` destination."""
CheckStatus = Literal["ok", "rejected", "unreachable", "skipped"]
"""What asking a key's provider said of it (DESIGN §16): its verdict's status, as the page, the
results' `checked` and the journal say it."""
DialogAnswer = Literal["accept", "decline", "cancel", "timeout", "unsupported", "error"]
"""How a URL elicitation ended: the person's answer, or why there was none. The protocol layer
reports it (`offprompt.mcp.tool`, for types only) and the ladder decides on it."""


@dataclass(frozen=True)
class GenerateSpec:
    """A value offprompt makes itself: `bytes` random bytes in `encoding`."""

    bytes: int = 32
    encoding: Encoding = "base64url"


@dataclass(frozen=True)
class SecretSpec:
    """One key the agent asked for."""

    name: str
    generate: GenerateSpec | None = None
    provider: str | None = None
    format: str | None = None
    secret: bool = True
    caption: str | None = None

    @property
    def enforced(self) -> bool:
        """The agent named a provider or format: a value that fails its rules is refused, not
        only advised against (a key matched by its name alone is advised only)."""
        return self.generate is None and (self.provider is not None or self.format is not None)


@dataclass(frozen=True)
class SinkSpec:
    """Where the values go: a dotenv file (upserted), a plain file holding one value, or no
    file at all (`none`, only beside `also` destinations)."""

    kind: SinkKind = "dotenv"
    path: str = ".env"


class DestinationSpec(Protocol):
    """One more place the values go (DESIGN §13): only what the entry may choose, never the
    target (that comes from the project's files). Each destination's module defines its own
    frozen, hashable dataclass for it (`offprompt.sinks.destinations.interface` says why);
    `kind` names that module's destination."""

    @property
    def kind(self) -> str: ...


@dataclass(frozen=True)
class DestinationResult:
    """What happened at one `also` destination, as results, the written page and the journal
    say it: never a value (`detail` is the program's scrubbed last line, or why not run)."""

    kind: str
    target: str
    status: SendStatus
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "target": self.target,
            "status": self.status,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Verdict:
    """One name's verdict from its provider (DESIGN §16); `text` is for the page only (it may
    name the account)."""

    status: CheckStatus
    text: str = field(default="", repr=False)

    @property
    def asked_but_skipped(self) -> bool:
        """A check the person asked for that was not made: the checker says why in `text` (a
        skip they chose, the box unticked or checks off, carries none)."""
        return self.status == "skipped" and bool(self.text)


SKIPPED: Final = Verdict("skipped")
"""Not asked: no check for its credential, checks off, or a file sink."""


@dataclass(frozen=True)
class WriteOutcome:
    """What a finished write reports: names, path and fingerprint, never a value.

    `file` is the destination relative to the project with `/` separators. `added`, `replaced`,
    `generated` and `kept` partition the requested names (generated ones may also be added or
    replaced); `file_keys` is every key the dotenv file holds after the write (empty for a file
    sink); `fingerprint` is four space-separated emoji, or None when the page supplied no value.
    With a `none` sink, `file` is empty and nothing was written locally.
    """

    file: str
    names: tuple[str, ...]
    added: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    generated: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    file_keys: tuple[str, ...] = ()
    fingerprint: str | None = None
    destinations: tuple[DestinationResult, ...] = ()
    """One per `also` entry, in its order (DESIGN §13)."""
    checked: tuple[tuple[str, str], ...] = ()
    """(name, `ok`|`rejected`|`unreachable`|`skipped`) for each name the page supplied, in
    request order (DESIGN §16); never an account or anything else of a provider's answer."""
    unchecked: tuple[tuple[str, str], ...] = ()
    """(name, why) for each `skipped` name the person asked to check (the box ticked, checks
    on): what the doors say of it, since `checked` alone cannot say why. Never a value."""
    mask_problem: str | None = None
    """Set when the project is masked (DESIGN §15) and the write could not bring its mask
    entry up to date: what to tell the person. Never holds a value."""

    def headline(self, *, fingerprint: bool = True) -> str:
        """The result's first line (DESIGN §3.2), said by both doors: `Wrote 1 value to .env ·
        fingerprint …`, `.env already held NAME`, or `Sent 2 values, no file written`."""
        written = len(self.names) - len(self.kept)
        fp = self.fingerprint if fingerprint else None
        count = f"{written} value" if written == 1 else f"{written} values"
        if not self.file:  # the `none` sink: no file, only the `also` destinations
            line = f"Sent {count}, no file written"
        elif written == 0:
            return f"{self.file} already held {', '.join(self.kept)}"
        else:
            line = f"Wrote {count} to {self.file}"
        return f"{line} · fingerprint {fp}" if fp else line


@dataclass(frozen=True)
class Prepared:
    """One submission, validated and checked with its providers, not yet written (DESIGN §16,
    §17): what `Submitter.prepare` returns and `Submitter.commit` writes. A remote request's
    submit is held as one of these until the person's confirmation code comes back.

    `values` holds every value to write (the supplied ones and those the server made), in
    request order; `supplied` and `server_made` name them; `checked` is each supplied name's
    verdict status; `also` the ticked destinations' indices, ascending.
    """

    values: Mapping[str, str] = field(repr=False)
    supplied: tuple[str, ...]
    server_made: tuple[str, ...] = ()
    checked: tuple[tuple[str, str], ...] = ()
    unchecked: tuple[tuple[str, str], ...] = ()
    """As `WriteOutcome.unchecked`: derived from `checked`, so not in the digest."""
    allow_tracked: bool = False
    fp_key: bytes | None = field(default=None, repr=False)
    also: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        # Frozen all the way down: the held submission is the person's, as they sent it.
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))
        object.__setattr__(self, "also", tuple(sorted(set(self.also))))

    def digest(self) -> bytes:
        """SHA-256 over a canonical encoding of everything that would be written, and how:
        the values, the names, the verdicts and every option. The confirmation code is made
        from it, so a code confirms this submission and no other."""
        canonical = {
            "values": [[name, value] for name, value in self.values.items()],
            "supplied": list(self.supplied),
            "server_made": list(self.server_made),
            "checked": [list(pair) for pair in self.checked],
            "allow_tracked": self.allow_tracked,
            "fp_key": None if self.fp_key is None else self.fp_key.hex(),
            "also": list(self.also),
        }
        text = json.dumps(canonical, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        return hashlib.sha256(
            b"offprompt/prepared/v1\n" + text.encode("utf-8", "surrogatepass")
        ).digest()
