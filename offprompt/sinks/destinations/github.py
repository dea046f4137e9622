"""GitHub Actions secrets: `gh secret set NAME --repo OWNER/REPO [--env ENV]`, the value on stdin.

Linked when the project's first git remote is github.com/OWNER/REPO. gh reads the value from
stdin when `--body` is absent and stdin is not a terminal, and drops line breaks at its end.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from offprompt.errors import FieldPath, NotLinked, RefusedRequest
from offprompt.sinks.destinations import linked
from offprompt.sinks.destinations.interface import Call, Destination, Link
from offprompt.spec import GithubSpec

__all__ = ["GithubDestination"]

ENV_PATTERN: Final = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$"
_ENV: Final = re.compile(ENV_PATTERN)


class GithubDestination(Destination[GithubSpec]):
    kind = "github"
    programs = ("gh",)
    command = "gh secret set"
    fields = frozenset({"environment"})
    # GH_REPO would be overridden by --repo anyway; GH_HOST could point gh at another server.
    drop_env = frozenset({"GH_REPO", "GH_HOST"})

    def parse(self, raw: Mapping[str, Any], at: FieldPath) -> GithubSpec:
        environment = raw.get("environment")
        if environment is not None and not _ENV.fullmatch(str(environment)):
            raise RefusedRequest.about(
                (*at, "environment"),
                f" {environment!r} is not a GitHub environment name "
                "(letters, digits, '.', '-' and '_').",
            )
        return GithubSpec(environment=environment)

    def link(self, project: Path, spec: GithubSpec) -> Link:
        try:
            remote = linked.first_remote(project)
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            raise NotLinked(
                f"the project is not linked to GitHub: git could not list its remotes ({e})."
            ) from None
        if remote is None:
            raise NotLinked(
                "the project is not linked to GitHub: its git repository has no remote "
                "(add one with `git remote add origin git@github.com:OWNER/REPO.git`)."
            )
        name, url = remote
        repo = linked.github_repo(url)
        if repo is None:  # the url may carry a token: name the remote, never the url
            raise NotLinked(
                f"the project is not linked to GitHub: its first git remote, {name!r}, is not "
                "a github.com/OWNER/REPO address."
            )
        target = repo if spec.environment is None else f"{repo} (environment {spec.environment})"
        return Link(kind=self.kind, ident=repo, target=target)

    def calls(self, link: Link, spec: GithubSpec, values: Mapping[str, str]) -> list[Call]:
        env = ("--env", spec.environment) if spec.environment is not None else ()
        return [
            Call(
                args=("secret", "set", name, "--repo", link.ident, *env),
                stdin=value.encode("utf-8"),
                label=name,
            )
            for name, value in values.items()
        ]

    def unsafe(self, name: str, value: str) -> str | None:
        if value.endswith(("\r", "\n")):
            return f"gh drops the line break at the end of {name}'s value"
        return None

    def describe(self, link: Link, spec: GithubSpec, names: Sequence[str]) -> str:
        env = f" --env {spec.environment}" if spec.environment is not None else ""
        return f"{self.command} {' '.join(names)} --repo {link.ident}{env}"
