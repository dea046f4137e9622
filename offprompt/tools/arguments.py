"""Tool arguments → a collect request, and the project a call writes in (DESIGN §3.1, §8)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from offprompt.collect.request import CollectRequest, validate
from offprompt.mcp.tool import ToolContext

__all__ = ["collect_request", "project_for"]


def collect_request(args: Mapping[str, Any]) -> CollectRequest:
    """Schema-valid `collect_secret` arguments → the one validated request (RefusedRequest)."""
    return validate(args)


async def project_for(ctx: ToolContext, *, cwd: Path, env: Mapping[str, str]) -> Path:
    """The server's working directory, or a host's hint when that cannot be the project;
    ProjectError when nothing can."""
    from offprompt import project

    roots: list[str] = []
    if not project.usable(cwd) and ctx.supports_roots():
        roots = await ctx.roots(timeout=5.0) or []
    found = project.candidates(cwd=cwd, env=env, roots=roots, meta=ctx.meta)
    return project.choose(found, cwd)
