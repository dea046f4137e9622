"""Vercel environment variables: `vercel env add NAME ENV --force` per environment, the value
on stdin.

Linked when `.vercel/project.json` exists (written by `vercel link`). vercel reads the value
from stdin when it is not a terminal; `--force` replaces a variable that exists already.

vercel would read project.json again when it starts; the ids checked go to it instead in
VERCEL_ORG_ID and VERCEL_PROJECT_ID, which it takes over the file. The page names the project by
that id; the name beside it is only ever from the same read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from offprompt.errors import FieldPath, NotLinked, RefusedRequest
from offprompt.sinks.destinations import linked
from offprompt.sinks.destinations.interface import Call, Destination, Link

__all__ = ["DESTINATION", "ENVIRONMENTS", "VercelDestination", "VercelSpec"]

KIND: Final = "vercel"
ENVIRONMENTS: Final = ("production", "preview", "development")
# Vercel's ids (`prj_…`, `team_…`, a user's id): they go into variables, so nothing else does.
_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_NAME: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")


@dataclass(frozen=True)
class VercelSpec:
    """Vercel environment variables of the linked project, in each of `environments` (≥1)."""

    kind: ClassVar[str] = KIND
    environments: tuple[str, ...]


class VercelDestination(Destination[VercelSpec]):
    kind = KIND
    label = "Vercel environment variable"
    linked_by = ".vercel/project.json"
    cli_form = f"vercel:ENV[,ENV] ({', '.join(ENVIRONMENTS)})"
    programs = ("vercel",)
    command = "vercel env add"
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

    def properties(self) -> dict[str, Any]:
        return {
            "environments": {
                "type": "array",
                "minItems": 1,
                "maxItems": len(ENVIRONMENTS),
                "uniqueItems": True,
                "items": {"type": "string", "enum": list(ENVIRONMENTS)},
                "description": "vercel (required): the environments to set it in.",
            }
        }

    def from_cli(self, option: str | None) -> dict[str, Any] | None:
        # Always the list, empty without an option: the request's validation then says it
        # needs one, in the same words as to an agent.
        return {"environments": option.split(",") if option else []}

    def link(self, project: Path, spec: VercelSpec, env: Mapping[str, str]) -> Link:
        try:
            data = linked.read_config(project, ".vercel/project.json")
        except ValueError as e:
            raise NotLinked(f"the project's Vercel link is unusable: {e}.") from None
        if data is None:
            raise NotLinked(
                "the project is not linked to Vercel: there is no .vercel/project.json "
                "(run `vercel link` in the project)."
            )
        project_id, org_id = str(data.get("projectId") or ""), str(data.get("orgId") or "")
        for key, got in (("projectId", data.get("projectId")), ("orgId", data.get("orgId"))):
            if not isinstance(got, str) or not got:
                raise NotLinked(
                    f"the project's Vercel link is unusable: .vercel/project.json has no {key} "
                    "(run `vercel link` again)."
                )
            if not _ID.fullmatch(got):
                raise NotLinked(
                    f"the project's Vercel link is unusable: .vercel/project.json's {key} is "
                    "not a Vercel id (run `vercel link` again)."
                )
        name = data.get("projectName")
        beside = f" ({name})" if isinstance(name, str) and _NAME.fullmatch(name) else ""
        return Link(
            kind=self.kind,
            ident=project_id,
            target=f"{project_id}{beside} in {', '.join(spec.environments)}",
            env=(("VERCEL_ORG_ID", org_id), ("VERCEL_PROJECT_ID", project_id)),
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


DESTINATION: Final = VercelDestination()
