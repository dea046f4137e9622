"""The machine the agents are looked at on (HOME, the environment, the OS): below the agents'
interface and their masks, so both can take it without importing each other."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Machine"]


@dataclass(frozen=True)
class Machine:
    """What the agents look at: HOME, the environment (PATH, XDG_*, CODEX_HOME…) and the OS.

    Passed in rather than read from globals, so tests give each run its own fake machine.
    """

    home: Path
    environ: Mapping[str, str] = field(repr=False)
    platform: str  # sys.platform: "linux", "darwin", "win32"

    @classmethod
    def current(cls) -> Machine:
        return cls(home=Path.home(), environ=dict(os.environ), platform=sys.platform)

    def which(self, name: str) -> str | None:
        """The program `name` on this machine's PATH, or None."""
        return shutil.which(name, path=self.environ.get("PATH", os.defpath))

    def env_path(self, name: str) -> Path | None:
        """The environment variable `name` as an absolute path, or None when unset or relative."""
        value = self.environ.get(name, "").strip()
        if not value:
            return None
        path = Path(value).expanduser()
        return path if path.is_absolute() else None

    def config_home(self) -> Path:
        """Where Linux programs keep user settings: $XDG_CONFIG_HOME, else ~/.config."""
        return self.env_path("XDG_CONFIG_HOME") or self.home / ".config"

    def app_data(self) -> Path:
        """Where desktop apps keep user data: %APPDATA%, ~/Library/Application Support, or
        the XDG config home (Electron's rule, which VS Code follows)."""
        if self.platform == "win32":
            return self.env_path("APPDATA") or self.home / "AppData" / "Roaming"
        if self.platform == "darwin":
            return self.home / "Library" / "Application Support"
        return self.config_home()

    def shown(self, path: Path) -> str:
        """`path` for a person: `~/…` under HOME, else as it is."""
        try:
            rest = path.relative_to(self.home)
        except ValueError:
            return str(path)
        return "~" if rest == Path() else f"~{os.sep}{rest}"
