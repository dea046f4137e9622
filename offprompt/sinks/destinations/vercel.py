"""Vercel environment variables: `vercel env add NAME ENV --force` per environment, the value
on stdin.

Linked when `.vercel/project.json` exists (written by `vercel link`). vercel reads the value
from stdin when it is not a terminal; `--force` replaces a variable that exists already.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from offprompt.errors import FieldPath, NotLinked, RefusedRequest
from offprompt.sinks.destinations import linked
from offprompt.sinks.destinations.interface import Call, Destination, Link
from offprompt.spec import VercelSpec

__all__ = ["ENVIRONMENTS", "VercelDestination"]

ENVIRONMENTS: Final = ("production", "preview", "development")


class VercelDestination(Destination[VercelSpec]):
    kind = "vercel"
    programs = ("vercel",)
    command = "vercel env add"
    fields = frozenset({"environments"})
    # These name a project and team instead of .vercel/project.json.
    drop_env = frozenset({"VERCEL_PROJECT_ID", "VERCEL_ORG_ID"})

    def parse(self, raw: Mapping[str, Any], at: FieldPath) -> VercelSpec:
        envs = raw.get("environments")
        if not isinstance(envs, list) or not envs:
            raise RefusedRequest.about(
                at, f' needs "environments": one or more of {", ".join(ENVIRONMENTS)}.'
            )
        bad = [e for e in envs if e not in ENVIRONMENTS]
        if bad:
            raise RefusedRequest.about(
                (*at, "environments"),
                f": {bad[0]!r} is not a Vercel environment; use {', '.join(ENVIRONMENTS)}.",
            )
        if len(set(envs)) != len(envs):
            raise RefusedRequest.about((*at, "environments"), " names an environment twice.")
        return VercelSpec(environments=tuple(envs))

    def link(self, project: Path, spec: VercelSpec) -> Link:
        path = project / ".vercel" / "project.json"
        try:
            data = linked.read_config(path)
        except ValueError as e:
            raise NotLinked(f"the project's Vercel link is unusable: .vercel/{e}.") from None
        if data is None:
            raise NotLinked(
                "the project is not linked to Vercel: there is no .vercel/project.json "
                "(run `vercel link` in the project)."
            )
        project_id = data.get("projectId")
        if not isinstance(project_id, str) or not project_id:
            raise NotLinked(
                "the project's Vercel link is unusable: .vercel/project.json has no projectId "
                "(run `vercel link` again)."
            )
        name = data.get("projectName")
        shown = name if isinstance(name, str) and name else project_id
        return Link(
            kind=self.kind,
            ident=project_id,
            target=f"{shown} ({', '.join(spec.environments)})",
        )

    def calls(self, link: Link, spec: VercelSpec, values: Mapping[str, str]) -> list[Call]:
        return [
            Call(
                args=("env", "add", name, environment, "--force"),
                stdin=value.encode("utf-8"),
                label=f"{name} in {environment}",
            )
            for name, value in values.items()
            for environment in spec.environments
        ]

    def describe(self, link: Link, spec: VercelSpec, names: Sequence[str]) -> str:
        return f"{self.command} {' '.join(names)} {' '.join(spec.environments)} --force"
