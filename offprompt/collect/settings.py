"""The environment's knobs (DESIGN §10), read once from one mapping and passed down.

Nothing below the doors reads `os.environ` for these: they receive `Settings` (or its `env`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from offprompt.sandbox import Detection, detect

__all__ = ["LOCAL_TTL", "REMOTE_TTL", "Settings"]

log = logging.getLogger("offprompt")

LOCAL_TTL = 300.0
REMOTE_TTL = 1800.0


def _number(env: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        log.warning("%s is not a number; using %s", name, default)
        return default
    return min(max(value, low), high)


def _port(env: Mapping[str, str]) -> tuple[int | None, str | None]:
    """OFFPROMPT_PORT as (port, None), (None, None) when unset, or (None, why it is no port)."""
    raw = env.get("OFFPROMPT_PORT", "").strip()
    if not raw:
        return None, None
    if raw.isascii() and raw.isdigit() and 1 <= int(raw) <= 65535:
        return int(raw), None
    return None, (
        f"OFFPROMPT_PORT={raw!r} is not a port number: set it to a port from 1 to 65535"
        " for the page on 127.0.0.1, or unset it for a random port."
    )


@dataclass(frozen=True)
class Settings:
    """A snapshot of the environment: changing the mapping later changes nothing."""

    env: Mapping[str, str] = field(repr=False)
    """The whole snapshot, for the parts that take a mapping (tunnel, opener, project)."""
    ttl: float
    await_seconds: float
    elicit_wait: float
    dialog_wait: float
    sandbox: Detection
    port: int | None = None
    """OFFPROMPT_PORT: the page server's fixed port on 127.0.0.1; None for a random one."""
    port_problem: str | None = None
    """Why OFFPROMPT_PORT is not a port, said to the person; every request is refused then."""

    @classmethod
    def read(cls, env: Mapping[str, str] | None = None, *, platform: str | None = None) -> Settings:
        """Settings from `env` (default: the process environment, copied now)."""
        snapshot = MappingProxyType(dict(os.environ if env is None else env))
        port, port_problem = _port(snapshot)
        return cls(
            env=snapshot,
            ttl=_number(snapshot, "OFFPROMPT_TTL", LOCAL_TTL, 1, 24 * 3600),
            await_seconds=_number(snapshot, "OFFPROMPT_AWAIT_SECONDS", 60, 0, 3600),
            elicit_wait=_number(snapshot, "OFFPROMPT_ELICIT_WAIT_MS", 1500, 0, 600_000) / 1000,
            dialog_wait=_number(snapshot, "OFFPROMPT_DIALOG_WAIT_MS", 10_000, 0, 600_000) / 1000,
            sandbox=detect(snapshot, platform),
            port=port,
            port_problem=port_problem,
        )

    @property
    def journal_path(self) -> Path:
        """Where writes are journaled (`OFFPROMPT_STATE_DIR`, else the user state dir)."""
        from offprompt.statedir import journal_path as default_path

        return default_path(self.env)
