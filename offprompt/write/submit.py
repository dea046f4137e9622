"""The one path from submitted fields to disk: claim, validate, generate, write, fingerprint.

The page, the CLI and the tools call `Submitter.submit` (or its two halves: `prepare`, then
`commit` once a remote request's confirmation code came back); nothing else turns values into
a file.
Its other steps (the provider check, the destinations, the mask, the journal) are handed in
through the interfaces of `write.steps`, so this room imports no installer.
"""

import asyncio
import base64
import logging
import os
import secrets
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Final

from offprompt import sinks
from offprompt.crypto.fingerprint import fingerprint
from offprompt.crypto.tokens import new_fp_key
from offprompt.errors import (
    CheckRejected,
    OffpromptError,
    RequestClosed,
    ValidationFailed,
    WriteError,
)
from offprompt.offloop import run_off_loop
from offprompt.spec import (
    SKIPPED,
    DestinationResult,
    GenerateSpec,
    Prepared,
    SecretSpec,
    Verdict,
    WriteOutcome,
)
from offprompt.statedir import MASK_RECORD
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import JournalEntry
from offprompt.write.mask_step import MaskStep
from offprompt.write.steps import DestinationSender, JournalStep, MaskKeeper, ProviderChecker

OnChecked = Callable[[Mapping[str, Verdict]], None]

__all__ = ["MAX_VALUE_BYTES", "Submitter", "is_blank"]

MAX_VALUE_BYTES: Final = 16 * 1024
"""The longest value accepted, in UTF-8 bytes."""

REQUIRED: Final = "Required"
TOO_LONG: Final = "Too long: at most 16 KiB"
NOT_TEXT: Final = "Not valid text: it holds a lone UTF-16 surrogate"

# A field holding only these is empty (Required, or generated), on the page and here alike.
_BLANKS: Final = " \t\r\n"

_log = logging.getLogger("offprompt")


def is_blank(value: str) -> bool:
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


def _check_fp_key(fp_key: bytes | None) -> None:
    if fp_key is not None and len(fp_key) != 32:
        raise ValueError("a fingerprint key is exactly 32 bytes")


def _in_order(names: tuple[str, ...], subset: Collection[str]) -> tuple[str, ...]:
    members = frozenset(subset)
    return tuple(n for n in names if n in members)


def _provider_checker() -> ProviderChecker:
    # Loaded on the first check, as before the steps were handed in.
    from offprompt.write import provider

    return provider


def _destination_sender() -> DestinationSender:
    # Loaded only for a request with `also` destinations: their programs' code is not small.
    from offprompt.sinks import destinations

    return destinations


class Submitter:
    """Turns one submission of a request's fields into a written file and an `WriteOutcome`."""

    def __init__(
        self,
        store: RequestStore,
        journal: JournalStep,
        env: Mapping[str, str] | None = None,
        *,
        checker: ProviderChecker | None = None,
        sender: DestinationSender | None = None,
        mask: MaskKeeper | None = None,
    ) -> None:
        """`env`: the environment the `also` programs run with (PATH, their tokens), the
        provider checks read (`OFFPROMPT_CHECK`, `OFFPROMPT_CHECK_BASE`) and the mask is kept
        in (HOME, the agents' folders); default the process environment when they run.

        The steps: `checker` asks the providers (default `write.provider`), `sender` sends to
        the `also` destinations (default `sinks.destinations`), both loaded when first needed;
        `mask` keeps a masked project's mask after each write. It has no default here, since
        the mask belongs to the agents: without one (the page's and the store's tests), no
        mask is kept. The process's own Submitter gets the agents' (agents/mask/keeper.py) from
        `collect.parts.Parts.build`."""
        self._store = store
        self._journal = journal
        self._env = env
        self._checker = checker
        self._sender = sender
        self._mask = MaskStep(mask, journal.path.parent / MASK_RECORD, env)

    async def submit(
        self,
        request: RequestRecord,
        fields: Mapping[str, str],
        *,
        allow_tracked: bool = False,
        fp_key: bytes | None = None,
        also: Collection[int] = (),
        check: bool = False,
        anyway: bool = False,
        on_checked: OnChecked | None = None,
    ) -> WriteOutcome:
        """Validate `fields`, write them, send them to the ticked `also` destinations (indices
        in `also`), and close `request` as written: `prepare` and `commit` under one claim.

        `check`: ask each supplied value's provider first (DESIGN §16; off under
        OFFPROMPT_CHECK=off), in parallel, before anything is written; `on_checked` gets the
        verdicts (their texts are for the page only). A `rejected` one raises CheckRejected
        unless `anyway`. The outcome's `checked` holds the statuses of the supplied names.

        Raises RequestClosed when the request is not open, ValidationFailed with every field's
        reasons, CheckRejected, or the sink's error (TrackedFile, UnsafeValue, WriteError);
        after any failure the request stays open so the person can fix it and submit again.
        Destinations run only after the local write succeeded, and their failures are
        reported, never raised.
        """
        _check_fp_key(fp_key)
        if not self._store.claim(request):
            raise RequestClosed(request.id)
        try:
            prepared = await self._prepare(
                request,
                fields,
                allow_tracked=allow_tracked,
                fp_key=fp_key,
                also=also,
                check=(check, anyway, on_checked),
            )
            outcome, written = await self._write(request, prepared)
        except BaseException:
            self._store.release(request)
            raise
        return await self._finish(request, prepared, outcome, written)

    async def prepare(
        self,
        request: RequestRecord,
        fields: Mapping[str, str],
        *,
        allow_tracked: bool = False,
        fp_key: bytes | None = None,
        also: Collection[int] = (),
        check: bool = False,
        anyway: bool = False,
        on_checked: OnChecked | None = None,
    ) -> Prepared:
        """What `submit` does before the write, and nothing after: validate `fields`, generate
        what the server makes, and ask the providers (the same arguments and errors as
        `submit`). Nothing is written and no claim is held afterwards; the request stays open.

        The `Prepared` is written later by `commit`, with the verdicts found here (a remote
        request's submit waits for the person's confirmation code in between, DESIGN §17).
        """
        _check_fp_key(fp_key)
        # Claimed while the providers are asked, as in `submit`: one submission at a time.
        if not self._store.claim(request):
            raise RequestClosed(request.id)
        try:
            return await self._prepare(
                request,
                fields,
                allow_tracked=allow_tracked,
                fp_key=fp_key,
                also=also,
                check=(check, anyway, on_checked),
            )
        finally:
            self._store.release(request)

    async def commit(self, request: RequestRecord, prepared: Prepared) -> WriteOutcome:
        """Write a `prepare`d submission: claim, write, the `also` destinations, the mask,
        close the request as written, and the journal. The verdicts are `prepared`'s: no
        provider is asked again. Raises RequestClosed when the request is not open, or the
        sink's error (the request then stays open for a new submission)."""
        if not self._store.claim(request):
            raise RequestClosed(request.id)
        try:
            outcome, written = await self._write(request, prepared)
        except BaseException:
            self._store.release(request)
            raise
        return await self._finish(request, prepared, outcome, written)

    async def _prepare(
        self,
        request: RequestRecord,
        fields: Mapping[str, str],
        *,
        allow_tracked: bool,
        fp_key: bytes | None,
        also: Collection[int],
        check: tuple[bool, bool, OnChecked | None],
    ) -> Prepared:
        ticked = frozenset(also)
        values, supplied, server_made = self._values(request, fields, ticked)
        verdicts = await self._check(request, values, supplied, *check)
        return Prepared(
            values=values,
            supplied=supplied,
            server_made=server_made,
            checked=tuple((name, v.status) for name, v in verdicts),
            unchecked=tuple((name, v.text) for name, v in verdicts if v.asked_but_skipped),
            allow_tracked=allow_tracked,
            fp_key=fp_key,
            also=tuple(ticked),
        )

    async def _finish(
        self,
        request: RequestRecord,
        prepared: Prepared,
        outcome: WriteOutcome,
        written: dict[str, str],
    ) -> WriteOutcome:
        """After the local write: destinations, mask, the request closed, the journal."""
        if request.also:
            try:
                outcome = await self._send(request, written, outcome, frozenset(prepared.also))
            except BaseException:
                # Cancelled while the programs ran (shutdown): the file is written, so the
                # request is too; it must not stay claimed, nor be offered for a second write.
                self._store.complete(request, outcome)
                raise
        problem = await asyncio.to_thread(self._mask.keep, request, outcome)
        if problem is not None:
            outcome = replace(outcome, mask_problem=problem)
        self._store.complete(request, outcome)
        await self._record(request, outcome)
        return outcome

    async def _write(
        self, request: RequestRecord, prepared: Prepared
    ) -> tuple[WriteOutcome, dict[str, str]]:
        """The outcome, and the values the write made true (not the kept ones), for `also`."""
        values = dict(prepared.values)
        supplied, server_made, fp_key = prepared.supplied, prepared.server_made, prepared.fp_key
        # In offloop's bounded daemon threads, so a destination on a hung file system holds
        # neither the exit nor more threads; when none is free, a ProjectError before a byte is
        # written. A write cut short by the exit leaves the file as it was (atomic.replace).
        if request.sink.kind == "dotenv":
            await run_off_loop(self._refuse_file_sink, request)
        in_place = await run_off_loop(self._mask.in_place, request)
        result = await run_off_loop(
            sinks.write,
            request.project,
            request.sink,
            values,
            keep_if_present=frozenset(server_made),
            allow_tracked=prepared.allow_tracked,
            in_place=in_place,
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
        outcome = WriteOutcome(
            file=result.display,
            names=names,
            added=_in_order(names, result.added),
            replaced=_in_order(names, result.replaced),
            generated=tuple(n for n in server_made if n not in kept),
            kept=kept,
            file_keys=tuple(result.file_keys),
            fingerprint=fp,
            checked=prepared.checked,
            unchecked=prepared.unchecked,
        )
        return outcome, {n: v for n, v in values.items() if n not in kept}

    def _refuse_file_sink(self, request: RequestRecord) -> None:
        """A file sink's file holds one value as a whole (DESIGN §12): keys are never written into
        it as a dotenv file, wherever it was moved, renamed or linked to, or the write's
        `file_keys` would list names read inside the value. A journal that cannot be read is
        not a refusal here (status, keys and secret_status then show no names of their own)."""
        path = Path(request.project, *request.display.split("/"))
        try:
            recorded = self._journal.records_file_sink(path)
        except OSError as exc:
            _log.warning("journal: could not read it before a write (%s)", type(exc).__name__)
            return
        if recorded:
            raise WriteError(
                f"{request.display} is a file offprompt wrote as one whole secret (a file sink),"
                " so keys are not written into it as a dotenv file; nothing was changed. Choose"
                " another file for these keys."
            )

    @property
    def checks_on(self) -> bool:
        """False under `OFFPROMPT_CHECK=off`: no provider is asked, and the page offers no box."""
        checker = self._checker if self._checker is not None else _provider_checker()
        return checker.enabled(self._env if self._env is not None else os.environ)

    async def _check(
        self,
        request: RequestRecord,
        values: Mapping[str, str],
        supplied: tuple[str, ...],
        wanted: bool,
        anyway: bool,
        on_checked: OnChecked | None,
    ) -> tuple[tuple[str, Verdict], ...]:
        """The supplied values' verdicts from their providers (DESIGN §16), or all `skipped`; a
        file sink is never checked (one file, no credential). CheckRejected when a provider
        refused one and the person has not said to write it anyway."""
        if not supplied:
            return ()
        verdicts: Mapping[str, Verdict]
        if wanted and request.sink.kind != "file" and self.checks_on:
            checker = self._checker if self._checker is not None else _provider_checker()
            env = self._env if self._env is not None else os.environ
            verdicts = await checker.verdicts(request.secrets, values, supplied, env)
        else:
            verdicts = {name: SKIPPED for name in supplied}
        if not anyway and any(v.status == "rejected" for v in verdicts.values()):
            raise CheckRejected(dict(verdicts))
        if on_checked is not None:
            on_checked(verdicts)
        return tuple((name, verdicts[name]) for name in supplied)

    async def _send(
        self,
        request: RequestRecord,
        values: Mapping[str, str],
        outcome: WriteOutcome,
        ticked: frozenset[int],
    ) -> WriteOutcome:
        """The written values, once more, to each ticked destination (DESIGN §13).

        The file is written and stays written: whatever happens here is a per-destination
        status, and a crash of this step is one too, never an undone or repeated write.
        """
        sender = self._sender if self._sender is not None else _destination_sender()
        try:
            sent = await asyncio.to_thread(
                sender.send, request.project, request.also, values, ticked, env=self._env
            )
        except Exception as exc:  # the write stands; say the destinations did not get it
            _log.error("request %s: destinations failed (%s)", request.id, type(exc).__name__)
            sent = tuple(
                DestinationResult(p.kind, p.link.target, "failed", "offprompt could not run it")
                for p in request.also
            )
        for result in sent:
            _log.info(
                "request %s: %s %s: %s", request.id, result.kind, result.target, result.status
            )
        return replace(outcome, destinations=sent)

    def _values(
        self, request: RequestRecord, fields: Mapping[str, str], also: frozenset[int] = frozenset()
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
            if not is_blank(value):
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
        if request.also:
            # A value a ticked program would change is refused before anything is written:
            # never sent altered, and never written here but silently missing there.
            sender = self._sender if self._sender is not None else _destination_sender()
            for name, reason in sender.check_values(request.also, values, also).items():
                errors.setdefault(name, []).append(reason)
        if errors:
            ordered = {s.name: errors[s.name] for s in request.secrets if s.name in errors}
            raise ValidationFailed(ordered)
        return values, tuple(supplied), tuple(server_made)

    async def _record(self, request: RequestRecord, outcome: WriteOutcome) -> None:
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
