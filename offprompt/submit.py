"""The one path from submitted fields to disk: claim, validate, generate, write, fingerprint.

The page, the CLI and the tools call `Submitter.submit`; nothing else turns values into a file.
"""

import asyncio
import base64
import logging
import secrets
from collections.abc import Collection, Mapping
from typing import Final

from offprompt import sinks
from offprompt.crypto.fingerprint import fingerprint
from offprompt.crypto.tokens import new_fp_key
from offprompt.errors import OffpromptError
from offprompt.journal import Journal, JournalEntry
from offprompt.requests import Request, RequestStore
from offprompt.spec import GenerateSpec, SecretSpec, WriteOutcome

__all__ = ["MAX_VALUE_BYTES", "RequestClosed", "Submitter", "ValidationFailed"]

MAX_VALUE_BYTES: Final = 16 * 1024
"""The longest value accepted, in UTF-8 bytes."""

REQUIRED: Final = "Required"
TOO_LONG: Final = "Too long: at most 16 KiB"
NOT_TEXT: Final = "Not valid text: it holds a lone UTF-16 surrogate"

# A field holding only these is empty (Required, or generated), on the page and here alike.
_BLANKS: Final = " \t\r\n"

_log = logging.getLogger("offprompt")


class RequestClosed(OffpromptError):
    """The request was already written, cancelled or expired, or another write holds it."""

    def __init__(self, request_id: str) -> None:
        super().__init__(f"request {request_id} is closed; ask the agent for a new link")
        self.request_id = request_id


class ValidationFailed(OffpromptError):
    """Some fields failed their rules; `errors` maps each field name to its reasons.

    Reasons and the message name rules only, never a value.
    """

    def __init__(self, errors: Mapping[str, list[str]]) -> None:
        self.errors: dict[str, list[str]] = {name: list(rs) for name, rs in errors.items()}
        detail = "; ".join(f"{name}: {', '.join(rs)}" for name, rs in self.errors.items())
        super().__init__(f"some values were not accepted ({detail})")


def _is_blank(value: str) -> bool:
    """Whether `value` holds nothing but spaces, tabs and line breaks (or nothing at all).

    Such a field was left empty, not filled: no key is a few blanks. Every other value is
    written exactly as sent (DESIGN §8): the page offers to drop blanks around a value, visibly,
    and fingerprints what it sends, so trimming here would make the two fingerprints differ.
    """
    return not value.strip(_BLANKS)


def generate(spec: GenerateSpec) -> str:
    """A fresh random value: `spec.bytes` bytes from `secrets` in `spec.encoding`."""
    raw = secrets.token_bytes(spec.bytes)
    if spec.encoding == "hex":
        return raw.hex()
    if spec.encoding == "base64":
        return base64.b64encode(raw).decode("ascii")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _check_one(value: str) -> list[str]:
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return [NOT_TEXT]
    return [TOO_LONG] if size > MAX_VALUE_BYTES else []


def _registry_problems(secret: SecretSpec, value: str) -> list[str]:
    """The registry's failing lines for a key whose provider or format was named.

    A key matched by its name alone (OPENAI_API_KEY) is only advised on the page, never refused:
    projects keep keys of compatible services under such names, and a valid key must never be
    blocked. Lines name rules, counts and known prefixes only, never a stretch of the value.
    """
    if not secret.enforced:
        return []
    from offprompt import registry

    verdict = registry.check(registry.resolve(secret.name, secret.provider, secret.format), value)
    if verdict.ok:
        return []
    return [*verdict.reasons, *([verdict.hint] if verdict.hint else [])]


def _in_order(names: tuple[str, ...], subset: Collection[str]) -> tuple[str, ...]:
    members = frozenset(subset)
    return tuple(n for n in names if n in members)


class Submitter:
    """Turns one submission of a request's fields into a written file and an `WriteOutcome`."""

    def __init__(self, store: RequestStore, journal: Journal) -> None:
        self._store = store
        self._journal = journal

    async def submit(
        self,
        request: Request,
        fields: Mapping[str, str],
        *,
        allow_tracked: bool = False,
        fp_key: bytes | None = None,
    ) -> WriteOutcome:
        """Validate `fields`, write them, and close `request` as written.

        Raises RequestClosed when the request is not open, ValidationFailed with every field's
        reasons, or the sink's error (TrackedFile, UnsafeValue, WriteError); after any failure
        the request stays open so the person can fix it and submit again.
        """
        if fp_key is not None and len(fp_key) != 32:
            raise ValueError("a fingerprint key is exactly 32 bytes")
        if not self._store.claim(request):
            raise RequestClosed(request.id)
        try:
            outcome = await self._write(request, fields, allow_tracked=allow_tracked, fp_key=fp_key)
        except BaseException:
            self._store.release(request)
            raise
        self._store.complete(request, outcome)
        await self._record(request, outcome)
        return outcome

    async def _write(
        self,
        request: Request,
        fields: Mapping[str, str],
        *,
        allow_tracked: bool,
        fp_key: bytes | None,
    ) -> WriteOutcome:
        values, supplied, server_made = self._values(request, fields)
        result = await asyncio.to_thread(
            sinks.write,
            request.project,
            request.sink,
            values,
            keep_if_present=frozenset(server_made),
            allow_tracked=allow_tracked,
        )
        names = request.names
        kept = _in_order(names, result.kept)
        fp: str | None = None
        if supplied:
            # What the file holds, not what was sent: the person checks the write, not the form.
            # A name missing from read_back (the file changed under the write) is fingerprinted
            # as empty, so the person sees a mismatch rather than a reassuring match.
            pairs = [(name, result.read_back.get(name, "")) for name in supplied]
            fp = str(fingerprint(fp_key if fp_key is not None else new_fp_key(), pairs))
        return WriteOutcome(
            file=result.display,
            names=names,
            added=_in_order(names, result.added),
            replaced=_in_order(names, result.replaced),
            generated=tuple(n for n in server_made if n not in kept),
            kept=kept,
            file_keys=tuple(result.file_keys),
            fingerprint=fp,
        )

    def _values(
        self, request: Request, fields: Mapping[str, str]
    ) -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...]]:
        """Values to write, names the page supplied, names the server generated (request order)."""
        errors: dict[str, list[str]] = {}
        values: dict[str, str] = {}
        supplied: list[str] = []
        server_made: list[str] = []
        secret: SecretSpec
        for secret in request.secrets:
            raw = fields.get(secret.name)
            value = raw if isinstance(raw, str) else ""
            if not _is_blank(value):
                problems = _check_one(value) or _registry_problems(secret, value)
                if problems:
                    errors[secret.name] = problems
                    continue
                values[secret.name] = value
                supplied.append(secret.name)
            elif secret.generate is not None:
                values[secret.name] = generate(secret.generate)
                server_made.append(secret.name)
            else:
                errors[secret.name] = [REQUIRED]
        for name, reason in sinks.check_values(request.sink, values).items():
            errors.setdefault(name, []).append(reason)
        if errors:
            ordered = {s.name: errors[s.name] for s in request.secrets if s.name in errors}
            raise ValidationFailed(ordered)
        return values, tuple(supplied), tuple(server_made)

    async def _record(self, request: Request, outcome: WriteOutcome) -> None:
        # The file is written and the request closed: a journal that cannot be appended to is
        # reported, never turned into a failed write the person would retry.
        try:
            await asyncio.to_thread(
                self._journal.append, JournalEntry.from_outcome(request, outcome)
            )
        except (OSError, ValueError, OffpromptError) as exc:
            _log.warning(
                "journal: could not record request %s (%s)", request.id, type(exc).__name__
            )
