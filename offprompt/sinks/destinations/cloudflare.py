"""Cloudflare Workers secrets: `wrangler secret put NAME --name WORKER`, the value on stdin.

Linked when `wrangler.json`, `wrangler.jsonc` or `wrangler.toml` (wrangler's own order) names
the worker. wrangler reads the value from stdin when it is not a terminal, drops whitespace at
its end, and creates or replaces the secret.

`--name` is the worker checked, the environment's own (`env.E.name`, else `NAME-E`), and no
`--env` goes with it: wrangler appends `-E` to `--name` when both are given (so an environment
with a name of its own would get a worker that does not exist), and with `--env` it would read
`legacy_env` from the config again when it starts, which moves the secret to a service
environment. With `--name` alone, the script wrangler writes to is exactly the one shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from offprompt.errors import FieldPath, NotLinked, RefusedRequest
from offprompt.sinks.destinations import linked
from offprompt.sinks.destinations.interface import Call, Destination, Link

__all__ = ["CONFIG_FILES", "DESTINATION", "CloudflareDestination", "CloudflareSpec"]

KIND: Final = "cloudflare"
CONFIG_FILES: Final = ("wrangler.json", "wrangler.jsonc", "wrangler.toml")
ENV_PATTERN: Final = "^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$"
_ENV: Final = re.compile(ENV_PATTERN)
_WORKER: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}")


@dataclass(frozen=True)
class CloudflareSpec:
    """Cloudflare Workers secrets of the configured worker; `env`: a wrangler environment."""

    kind: ClassVar[str] = KIND
    env: str | None = None


class CloudflareDestination(Destination[CloudflareSpec]):
    kind = KIND
    label = "Cloudflare Workers secret"
    linked_by = "the wrangler config's worker"
    cli_form = "cloudflare[:ENV]"
    programs = ("wrangler",)
    command = "wrangler secret put"
    # CLOUDFLARE_ENV picks a wrangler environment the page would not show.
    drop_env = frozenset({"CLOUDFLARE_ENV", "WRANGLER_ENV"})
    # Every failing run ends with where its log went; the line before says what failed.
    noise = (re.compile(r"^\W*Logs were written to "),)

    def parse(self, raw: Mapping[str, Any], at: FieldPath) -> CloudflareSpec:
        env = raw.get("env")
        if env is not None and not _ENV.fullmatch(str(env)):
            raise RefusedRequest.about(
                (*at, "env"),
                f" {env!r} is not a wrangler environment name (letters, digits, '-' and '_').",
            )
        return CloudflareSpec(env=env)

    def properties(self) -> dict[str, Any]:
        return {
            "env": {
                "type": "string",
                "pattern": ENV_PATTERN,
                "description": "cloudflare: a wrangler environment the config defines.",
            }
        }

    def from_cli(self, option: str | None) -> dict[str, Any] | None:
        return {} if option is None else {"env": option}

    def link(self, project: Path, spec: CloudflareSpec, env: Mapping[str, str]) -> Link:
        for file in CONFIG_FILES:
            try:
                config = linked.read_config(project, file)
            except ValueError as e:
                raise NotLinked(f"the project's wrangler config is unusable: {e}.") from None
            if config is not None:
                return self._linked(file, config, spec)
        raise NotLinked(
            "the project is not linked to Cloudflare Workers: there is no wrangler.toml, "
            "wrangler.json or wrangler.jsonc naming the worker."
        )

    def _linked(self, file: str, config: dict[str, Any], spec: CloudflareSpec) -> Link:
        name = config.get("name")
        if not isinstance(name, str) or not name:
            raise NotLinked(
                f"the project is not linked to Cloudflare Workers: {file} names no worker "
                '(set name = "my-worker").'
            )
        worker = name
        if spec.env is not None and config.get("legacy_env") is False:
            raise NotLinked(
                f"{file} uses service environments (legacy_env = false), which wrangler has "
                "deprecated; offprompt sends only to a worker it can name."
            )
        if spec.env is not None:
            envs = config.get("env")
            section = envs.get(spec.env) if isinstance(envs, dict) else None
            if not isinstance(section, dict):
                raise NotLinked(
                    f"the project is not linked to a Cloudflare Workers environment "
                    f"{spec.env!r}: {file} defines no env.{spec.env}."
                )
            own = section.get("name")
            worker = own if isinstance(own, str) and own else f"{name}-{spec.env}"
            account = section.get("account_id")
            if account is not None and account != config.get("account_id"):
                # Without --env wrangler takes the top-level account_id; sending there would be
                # another account than the environment's.
                raise NotLinked(
                    f"{file}'s env.{spec.env} names an account_id of its own, which offprompt "
                    "cannot pass to wrangler with the worker's name; set it at the top level."
                )
        if not _WORKER.fullmatch(worker):
            raise NotLinked(f"{file} names the worker {worker!r}, which is not a worker name.")
        env = f" (env {spec.env})" if spec.env is not None else ""
        # The account is part of what was checked: a config naming another one since the page
        # opened is a changed link. wrangler lets a config's account_id outrank this variable,
        # so `pinned_config` gives it a config of the checked facts alone (THREAT_MODEL 12).
        account = config.get("account_id")
        pins = (("CLOUDFLARE_ACCOUNT_ID", account),) if isinstance(account, str) else ()
        return Link(kind=self.kind, ident=worker, target=f"{worker}{env}", env=pins)

    def calls(self, link: Link, spec: CloudflareSpec, values: Mapping[str, str]) -> list[Call]:
        return [
            Call(
                args=("secret", "put", name, "--name", link.ident),
                stdin=value.encode("utf-8"),
                label=name,
            )
            for name, value in values.items()
        ]

    def pinned_config(self, link: Link) -> tuple[str, bytes] | None:
        # wrangler takes the account from its config when it starts, before anything else,
        # and the config outranks CLOUDFLARE_ACCOUNT_ID: pointed at the project's own file, a
        # rewrite in that instant would send the value to another account. Given a file with
        # the checked worker and account alone, it reads nothing of the project's.
        pinned: dict[str, str] = {"name": link.ident, **dict(link.env)}
        account = pinned.pop("CLOUDFLARE_ACCOUNT_ID", None)
        if account is not None:
            pinned["account_id"] = account
        return "wrangler.json", json.dumps(pinned).encode("utf-8")

    def unsafe(self, name: str, value: str) -> str | None:
        if value != value.rstrip():
            return f"wrangler drops the blanks at the end of {name}'s value"
        return None

    def describe(self, link: Link, spec: CloudflareSpec, names: Sequence[str]) -> str:
        return f"{self.command} {' '.join(names)} --name {link.ident}"


DESTINATION: Final = CloudflareDestination()
