"""AWS Secrets Manager (DESIGN §13.1): the secret holds one JSON object of names to values;
offprompt reads it, keeps every other key, and sends the merged object on the AWS CLI's stdin
(`put-secret-value --secret-string file:///dev/stdin`, or `create-secret --name ID …` where no
secret exists). A secret that holds anything but a JSON object is left alone.

Linked by the environment the server inherited: `aws` on PATH, credentials configured, and a
region known. The region, the endpoint (`AWS_ENDPOINT_URL_SECRETS_MANAGER`, else
`AWS_ENDPOINT_URL`) and the profile are read once when the request is made and passed as
`--region`/`--endpoint-url`/`--profile` on every run (the pip AWS CLI v1 does not read
`AWS_REGION` on its own); the variables that could name another target are kept from the
program, and an endpoint written in the person's AWS config is ignored, so the secret written
is the one the page showed. The credentials stay where the person keeps them; the program
inherits them, offprompt never reads them.

The current secret is read into memory to merge it and is never shown, logged or kept.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from offprompt.errors import FieldPath, NotLinked, RefusedRequest
from offprompt.sinks.destinations import runner
from offprompt.sinks.destinations.interface import Call, Destination, Link, Ran, RunCall, Sent
from offprompt.sinks.destinations.vault import store_address

__all__ = ["DESTINATION", "AwsDestination", "AwsSpec"]

KIND: Final = "aws"
_NAME: Final = r"[A-Za-z0-9/_+=.@-]{1,512}"
_ARN: Final = r"arn:aws[a-z-]{0,20}:secretsmanager:[a-z0-9-]{1,30}:\d{12}:secret:" + _NAME
SECRET_ID_PATTERN: Final = rf"^(?:{_ARN}|{_NAME})$"
_SECRET_ID: Final = re.compile(SECRET_ID_PATTERN)
_REGION: Final = re.compile(r"[a-z]{2}(-[a-z]+){1,3}-\d{1,2}")
_PROFILE: Final = re.compile(r"[A-Za-z0-9_.@+-]{1,64}")
_STDIN: Final = "file:///dev/stdin"
_MAX_CONFIG: Final = 1024 * 1024


@dataclass(frozen=True)
class AwsSpec:
    """One Secrets Manager secret, by name or ARN."""

    kind: ClassVar[str] = KIND
    secret_id: str


def _config_region(env: Mapping[str, str], profile: str | None) -> str | None:
    """The profile's `region` in the person's AWS config file, else None. Only a regular file
    under 1 MiB is read (the agent could leave a FIFO there)."""
    home = env.get("HOME", "")
    path = env.get("AWS_CONFIG_FILE") or (os.path.join(home, ".aws", "config") if home else "")
    if not path:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_CONFIG:
            return None
        text = os.read(fd, _MAX_CONFIG).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    section = "default" if profile in (None, "default") else f"profile {profile}"
    if not parser.has_section(section):
        return None
    region = parser.get(section, "region", fallback="").strip()
    return region or None


def _has_credentials(env: Mapping[str, str]) -> bool:
    if env.get("AWS_ACCESS_KEY_ID") or env.get("AWS_PROFILE"):
        return True
    home = env.get("HOME", "")
    files = (
        env.get("AWS_SHARED_CREDENTIALS_FILE") or os.path.join(home, ".aws", "credentials"),
        env.get("AWS_CONFIG_FILE") or os.path.join(home, ".aws", "config"),
    )
    return bool(home or env.get("AWS_SHARED_CREDENTIALS_FILE")) and any(
        os.path.isfile(f) for f in files
    )


class AwsDestination(Destination[AwsSpec]):
    kind = KIND
    label = "AWS Secrets Manager key"
    linked_by = "AWS credentials and a region (aws)"
    cli_form = "aws:SECRET_ID"
    programs = ("aws",)
    command = "aws secretsmanager put-secret-value"
    # Each would name another region, endpoint or profile than the page showed; the ones
    # checked go on argv instead.
    drop_env = frozenset(
        {
            "AWS_REGION",
            "AWS_DEFAULT_REGION",
            "AWS_ENDPOINT_URL",
            "AWS_ENDPOINT_URL_SECRETS_MANAGER",
            "AWS_PROFILE",
            "AWS_DEFAULT_PROFILE",
        }
    )

    def parse(self, raw: Mapping[str, Any], at: FieldPath) -> AwsSpec:
        secret_id = raw.get("secret_id")
        if not isinstance(secret_id, str) or not _SECRET_ID.fullmatch(secret_id):
            raise RefusedRequest.about(
                (*at, "secret_id"),
                ' needs "secret_id": a Secrets Manager secret\'s name (letters, digits and '
                "/_+=.@-) or its ARN.",
            )
        return AwsSpec(secret_id=secret_id)

    def properties(self) -> dict[str, Any]:
        return {
            "secret_id": {
                "type": "string",
                "pattern": SECRET_ID_PATTERN,
                "description": "aws (required): the Secrets Manager secret's name or ARN.",
            }
        }

    def from_cli(self, option: str | None) -> dict[str, Any] | None:
        return {"secret_id": option or ""}

    def link(self, project: Path, spec: AwsSpec, env: Mapping[str, str]) -> Link:
        if runner.find_program(self.programs, env) is None:
            raise NotLinked("the AWS CLI is not installed here (aws not found on PATH).")
        if not _has_credentials(env):
            raise NotLinked(
                "no AWS credentials are set up here: no AWS_ACCESS_KEY_ID, AWS_PROFILE or "
                "~/.aws/credentials in the environment offprompt was started with."
            )
        profile = env.get("AWS_PROFILE") or env.get("AWS_DEFAULT_PROFILE") or None
        if profile is not None and not _PROFILE.fullmatch(profile):
            raise NotLinked("AWS_PROFILE is not a profile name.")
        region = (
            env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or _config_region(env, profile)
        )
        if not region:
            raise NotLinked(
                "no AWS region is set up here: set AWS_REGION, or a region in the profile."
            )
        if not _REGION.fullmatch(region):
            raise NotLinked("the AWS region set here is not a region name.")
        endpoint = store_address(
            env,
            ("AWS_ENDPOINT_URL_SECRETS_MANAGER", "AWS_ENDPOINT_URL"),
            "a Secrets Manager endpoint",
        )
        pins: tuple[str, ...] = ("--region", region)
        shown = f"{spec.secret_id} in {region}"
        if endpoint is not None:
            pins += ("--endpoint-url", endpoint)
            shown += f" at {endpoint}"
        if profile is not None:
            pins += ("--profile", profile)
            shown += f" (profile {profile})"
        # No pager, and no endpoint from the person's config: the one shown, or AWS's own.
        quiet = (("AWS_PAGER", ""), ("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true"))
        return Link(
            kind=self.kind,
            ident=spec.secret_id,
            target=shown,
            env=quiet,
            args=(*pins, "--output", "json"),
        )

    def describe(self, link: Link, spec: AwsSpec, names: Sequence[str]) -> str:
        pins = " ".join(a for a in link.args if a not in ("--output", "json"))
        return (
            f"{self.command} --secret-id {spec.secret_id} {pins} --secret-string {_STDIN} "
            f"({', '.join(names)} merged into its JSON; create-secret where none exists)"
        )

    def unsafe(self, name: str, value: str) -> str | None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return f"{name}'s value is not UTF-8 text, which a JSON object carries"
        return None

    def send(self, link: Link, spec: AwsSpec, values: Mapping[str, str], run: RunCall) -> Sent:
        if not values:
            return Sent()
        label = ", ".join(values)
        sid = spec.secret_id
        read = run(
            Call(
                ("secretsmanager", "get-secret-value", "--secret-id", sid, *link.args), b"", "read"
            )
        )
        if read.ok:
            current = _secret_object(read.out)
            if current is None:
                return Sent(
                    problems=(
                        f"{label}: {sid} holds something other than a JSON object of names to "
                        "values, so it was left alone",
                    )
                )
            merged = {**current, **values}
            args = ("put-secret-value", "--secret-id", sid)
            done = " (its other keys kept)"
        elif b"ResourceNotFoundException" in read.err:
            if sid.startswith("arn:"):
                return Sent(problems=(f"{label}: no such secret: {sid} does not exist",))
            merged, args, done = dict(values), ("create-secret", "--name", sid), " (a new secret)"
        else:
            return Sent(problems=(f"{label}: {_why(read, link)}",))
        body = json.dumps(merged, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        wrote = run(
            Call(("secretsmanager", *args, "--secret-string", _STDIN, *link.args), body, label)
        )
        if not wrote.ok:
            return Sent(problems=(f"{label}: {_why(wrote, link)}",))
        return Sent((label,), done=f" to {sid}{done}")


def _secret_object(out: bytes) -> dict[str, Any] | None:
    """The secret's JSON object from `get-secret-value`'s answer; None when it holds anything
    else (binary, a plain string, a list)."""
    try:
        answer = json.loads(out.decode("utf-8"))
        text = answer.get("SecretString") if isinstance(answer, dict) else None
        held = json.loads(text) if isinstance(text, str) else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return held if isinstance(held, dict) else None


def _why(ran: Ran, link: Link) -> str:
    """The CLI's failure in words, never its output whole."""
    where = "Secrets Manager"
    if "--endpoint-url" in link.args:
        where = f"the endpoint {link.args[link.args.index('--endpoint-url') + 1]}"
    text = ran.err.decode("utf-8", "replace")
    if ran.stopped:
        return f"{where} did not answer ({ran.detail})"
    if ran.code is None:
        return ran.detail
    if "Could not connect to the endpoint URL" in text or "Connection was closed" in text:
        return f"{where} is unreachable"
    if "Read timeout on endpoint URL" in text or "Connect timeout" in text:
        return f"{where} did not answer in time"
    if "AccessDenied" in text:
        return "permission denied (403): the credentials may not write this secret"
    if re.search(r"UnrecognizedClient|InvalidClientTokenId|SignatureDoesNotMatch|Expired", text):
        return "the AWS credentials were refused"
    if "Unable to locate credentials" in text:
        return "no AWS credentials were found (set a profile, or log in with `aws configure`)"
    if "marked for deletion" in text:
        return "the secret is scheduled for deletion; restore it, then send again"
    return ran.detail


DESTINATION: Final = AwsDestination()
