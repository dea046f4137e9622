"""The file sink: one value, exactly its bytes as UTF-8, as the whole of a 0600 file."""

from __future__ import annotations

import stat
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from offprompt import log
from offprompt.disk import walk
from offprompt.errors import RefusedRequest, WriteError
from offprompt.sinks import atomic
from offprompt.sinks.interface import WriteResult
from offprompt.sinks.local import LocalFileSink

__all__ = ["FileSink"]


class FileSink(LocalFileSink):
    kind = "file"

    def check_takes(self, names: Sequence[str]) -> None:
        super().check_takes(names)
        if len(names) != 1:
            raise RefusedRequest("A file sink holds exactly one secret; ask for one name.")

    def check_values(self, values: Mapping[str, str]) -> dict[str, str]:
        problems: dict[str, str] = {}
        for name, value in values.items():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                problems[name] = "It is not valid Unicode text; type or paste it again."
        return problems

    def unsafe_message(self, names: Collection[str], shown: str) -> str:
        return f"The value of {', '.join(names)} is not valid Unicode text; nothing was written."

    def look(
        self, folder: walk.Folder, path: Path, shown: str, names: Sequence[str]
    ) -> tuple[frozenset[str], str | None]:
        # any bytes at all are one whole value
        return self.present(folder, path.name, shown, names), None

    def present(
        self, folder: walk.Folder, name: str, shown: str, names: Sequence[str]
    ) -> frozenset[str]:
        """All of `names` when the file `name` in `folder` holds anything, else none; WriteError
        if unreadable."""
        try:
            st = folder.lstat(name)
        except OSError as e:
            raise WriteError(f"{shown} cannot be inspected ({atomic.reason(e)}).") from None
        if st is None:
            return frozenset()
        if not stat.S_ISREG(st.st_mode):
            raise WriteError(f"{shown} is not a regular file; offprompt only replaces files.")
        return frozenset(names) if st.st_size > 0 else frozenset()

    def write_locked(
        self,
        folder: walk.Folder,
        path: Path,
        shown: str,
        values: Mapping[str, str],
        keep_if_present: Collection[str],
        owner: tuple[int, int] | None,
    ) -> WriteResult:
        ((name, value),) = values.items()
        present = bool(self.present(folder, path.name, shown, (name,)))
        if name in keep_if_present and present:
            return WriteResult(
                path=path,
                display=shown,
                added=(),
                replaced=(),
                kept=(name,),
                file_keys=(),
                read_back={},
            )
        atomic.replace(folder, path.name, value.encode("utf-8"), shown, owner)
        data = atomic.read_existing(folder, path.name, shown) or b""
        try:
            read_back = {name: data.decode("utf-8")}
        except UnicodeDecodeError:
            read_back = {}
            log.get().warning("%s changed under the write; its fingerprint will differ", shown)
        return WriteResult(
            path=path,
            display=shown,
            added=() if present else (name,),
            replaced=(name,) if present else (),
            kept=(),
            file_keys=(),
            read_back=read_back,
        )
