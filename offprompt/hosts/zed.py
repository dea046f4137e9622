"""Zed's facts (offprompt.agents.zed sets it up): its client name. Zed has no hooks."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from offprompt.hosts.host import Host

__all__ = ["HOST"]

HOST: Host = {"name": "zed", "title": "Zed", "clients": {"zed": "Zed"}}
