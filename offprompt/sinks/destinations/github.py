"""GitHub Actions secrets: `gh secret set NAME --repo OWNER/REPO [--env ENV]`, the value on stdin.

Linked when the project's first git remote is github.com/OWNER/REPO. gh reads the value from
stdin when `--body` is absent and stdin is not a terminal, and drops line breaks at its end.
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

__all__ = ["DESTINATION", "GithubDestination", "GithubSpec", "github_repo"]

KIND: Final = "github"
ENV_PATTERN: Final = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$"
_ENV: Final = re.compile(ENV_PATTERN)
_OWNER: Final = r"(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))"
_REPO: Final = r"(?P<repo>[A-Za-z0-9._-]{1,100}?)"
_TAIL: Final = r"(?:\.git)?/?"
_GITHUB_URL: Final = re.compile(
    rf"(?:https?|git|ssh|git\+ssh)://(?:[^@/\s]+@)?github\.com(?::\d+)?/{_OWNER}/{_REPO}{_TAIL}",
    re.IGNORECASE,
)
_GITHUB_SCP: Final = re.compile(
    rf"(?:[^@/:\s]+@)?github\.com:/?{_OWNER}/{_REPO}{_TAIL}", re.IGNORECASE
)


@dataclass(frozen=True)
class GithubSpec:
    """GitHub Actions secrets of the project's repository; `environment`: one of its deployment
    environments, else the repository's own secrets."""

    kind: ClassVar[str] = KIND
    environment: str | None = None


def github_repo(url: str) -> str | None:
    """`OWNER/REPO` when `url` is a github.com remote (https, ssh or scp form), else None."""
    match = _GITHUB_URL.fullmatch(url) or _GITHUB_SCP.fullmatch(url)
    if match is None:
        return None
    repo = match["repo"]
    if repo in {".", ".."} or repo.endswith(".git"):
        return None
    return f"{match['owner']}/{repo}"


class GithubDestination(Destination[GithubSpec]):
    kind = KIND
    label = "GitHub Actions secret"
    linked_by = "its git remote on GitHub"
    cli_form = "github[:ENVIRONMENT]"
    programs = ("gh",)
    command = "gh secret set"
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

    def properties(self) -> dict[str, Any]:
        return {
            "environment": {
                "type": "string",
                "pattern": ENV_PATTERN,
                "description": "github: a deployment environment of the repository.",
            }
        }

    def from_cli(self, option: str | None) -> dict[str, Any] | None:
        return {} if option is None else {"environment": option}

    def link(self, project: Path, spec: GithubSpec, env: Mapping[str, str]) -> Link:
        try:
            remote = linked.first_remote(project)
        except (OSError, ValueError) as e:
            raise NotLinked(
                f"the project is not linked to GitHub: git could not list its remotes ({e})."
            ) from None
        if remote is None:
            raise NotLinked(
                "the project is not linked to GitHub: its git repository has no remote "
                "(add one with `git remote add origin git@github.com:OWNER/REPO.git`)."
            )
        name, url = remote
        repo = github_repo(url)
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


DESTINATION: Final = GithubDestination()
