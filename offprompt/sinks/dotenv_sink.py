"""The dotenv sink: upsert the asked names into a `.env`, keeping every other line, and only
when python-dotenv, Node and bash will each read back exactly the values written.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from offprompt import log
from offprompt.disk import walk
from offprompt.errors import WriteError
from offprompt.sinks import atomic, dotenv, dotenv_quoting, verify
from offprompt.sinks.interface import WriteResult
from offprompt.sinks.local import LocalFileSink

__all__ = ["DotenvSink"]


class DotenvSink(LocalFileSink):
    kind = "dotenv"

    def check_values(self, values: Mapping[str, str]) -> dict[str, str]:
        problems: dict[str, str] = {}
        for name, value in values.items():
            why = dotenv_quoting.unsafe_reason(value)
            if why is not None:
                problems[name] = why
        return problems

    def unsafe_message(self, names: Collection[str], shown: str) -> str:
        return (
            f"No .env quoting keeps the value of {', '.join(names)} exactly for python-dotenv,"
            f" Node and bash, so nothing was written to {shown}; {dotenv_quoting.FILE_SINK_HINT}."
        )

    def look(
        self, folder: walk.Folder, path: Path, shown: str, names: Sequence[str]
    ) -> tuple[frozenset[str], str | None]:
        old = dotenv.Parsed(
            _read_text(folder, path.name, shown)
        )  # read and parsed once for both answers
        return _present(old, names), _problem(old, names, shown)

    def write_locked(
        self,
        folder: walk.Folder,
        path: Path,
        shown: str,
        values: Mapping[str, str],
        keep_if_present: Collection[str],
        owner: tuple[int, int] | None,
    ) -> WriteResult:
        # The file is read once and each text parsed once, however many names are written: the
        # upsert, the three readers' checks and the result all use the same parses.
        text = _read_text(folder, path.name, shown)
        old = dotenv.Parsed(text)
        up = dotenv.upsert(text, values, keep_if_present, parsed=old)
        written = [n for n in values if n not in up.kept]
        after = old
        if written:
            # Readers must see exactly these values before anything is written: if an existing
            # line would swallow ours (an unclosed quote, a bare `X=` Node reads on past), stop.
            new = dotenv.Parsed(up.text, like=old)  # read again from the first change
            why = verify.hidden(
                up.text, text, {n: values[n] for n in written}, shown, new=new, old=old
            )
            if why is not None:
                raise WriteError(f"{why} Nothing was changed.")
            data = up.text.encode("utf-8")
            atomic.replace(folder, path.name, data, shown, owner, pad=True)
            # Read back what the file holds now; parsed again only if it is not what was written.
            back = atomic.read_existing(folder, path.name, shown)
            after = new if back == data else dotenv.Parsed(_decoded(back, shown))
        held = after.values
        read_back = {n: held[n] for n in written if n in held}
        if len(read_back) != len(written) or any(read_back[n] != values[n] for n in read_back):
            log.get().warning("%s changed under the write; its fingerprint will differ", shown)
        return WriteResult(
            path=path,
            display=shown,
            added=up.added,
            replaced=up.replaced,
            kept=up.kept,
            file_keys=_shown_keys(path, after),
            read_back=read_back,
        )


def _shown_keys(path: Path, after: dotenv.Parsed) -> tuple[str, ...]:
    """The names `file_keys` may give of the file written, by DESIGN §12's rule as status and
    `offprompt keys` apply it to the text: none when the file's name is not a dotenv file's, or
    a line is no assignment, comment or blank, or a name is outside §3.1's pattern."""
    from offprompt.sinks import dotenv_read

    if not dotenv_read.is_dotenv_name(path.name):
        return ()
    try:
        budget = atomic.read_budget(len(after.text))  # characters: never more than its bytes
        found = dotenv_read.read(after.text, time.monotonic() + budget)
    except dotenv_read.TooSlow:
        return ()
    return () if found.bare or found.opaque else tuple(after.keys)


def _present(old: dotenv.Parsed, names: Sequence[str]) -> frozenset[str]:
    held = old.values
    return frozenset(n for n in names if held.get(n))


def _problem(old: dotenv.Parsed, names: Sequence[str], shown: str) -> str | None:
    """Whether existing lines would hide any of `names` from a reader, tried with a stand-in."""
    stand_in = {n: "x" for n in names}
    new_text = dotenv.upsert(old.text, stand_in, parsed=old).text
    new = dotenv.Parsed(new_text, like=old)
    return verify.hidden(new_text, old.text, stand_in, shown, new=new, old=old)


def _read_text(folder: walk.Folder, name: str, shown: str) -> str:
    return _decoded(atomic.read_existing(folder, name, shown), shown)


def _decoded(data: bytes | None, shown: str) -> str:
    if data is None:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise WriteError(
            f"{shown} is not UTF-8 text; offprompt never rewrites a file it cannot read."
        ) from None
