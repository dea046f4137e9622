"""Our exact argv against the real programs' own argument parsers, stopped before the network:
`gh` (no credentials), `vercel` (a fake token and `--api` at a local stub that refuses), and
`wrangler` (no API token). Each has a control with one bogus option that the parser refuses,
so a pass means the parser accepted ours.

`gh` comes from apt (`apt-get install gh`, which .ci/run does), `vercel` and `wrangler` from
scripts/test-tools; each skips locally when absent and fails in CI.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from fake_programs import link_all
from helpers import tool_or_skip

from offprompt.sinks import destinations
from offprompt.sinks.destinations import runner
from offprompt.sinks.destinations.cloudflare import CloudflareSpec
from offprompt.sinks.destinations.github import GithubSpec
from offprompt.sinks.destinations.vercel import VercelSpec
from offprompt.spec import DestinationSpec

NAME = "STRIPE_KEY"


def program_or_skip(name: str) -> str:
    if name in ("vercel", "wrangler"):
        return tool_or_skip(name)
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is missing in CI; .ci/run must install it")
        pytest.skip(f"{name} is not installed (see this module's docstring)")
    return found


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    """No credentials of anyone's: a fresh HOME and config dirs, telemetry off."""
    home = tmp_path / "home"
    home.mkdir()
    node = shutil.which("node")
    path = os.pathsep.join(
        p
        for p in (os.path.dirname(node) if node else "", "/usr/local/bin", "/usr/bin", "/bin")
        if p
    )
    return {
        "PATH": path,
        "HOME": str(home),
        "GH_CONFIG_DIR": str(home / "gh"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "VERCEL_TELEMETRY_DISABLED": "1",
        "WRANGLER_SEND_METRICS": "false",
        "NO_COLOR": "1",
    }


def our_args(
    project: Path, spec: DestinationSpec, canary: str
) -> tuple[tuple[str, ...], bytes, dict[str, str]]:
    """Our argv, stdin and the variables the checked link adds (Vercel's ids)."""
    dest = destinations.KINDS[spec.kind]
    link = dest.link(project, spec, {})
    (call, *_) = dest.calls(link, spec, {NAME: canary})
    return call.args, call.stdin, dict(link.env)


def run(
    program: str, args: tuple[str, ...], stdin: bytes, project: Path, env: dict[str, str]
) -> runner.Ran:
    """Through our own runner (no shell, stdin), with the kind's noise lines skipped."""
    kind = {"gh": "github", "vercel": "vercel", "wrangler": "cloudflare"}[Path(program).name]
    noise = destinations.KINDS[kind].noise
    return runner.run(
        program, args, stdin, cwd=project, env=env, values=[], timeout=60, noise=noise
    )


def test_gh_accepts_our_secret_set_argv(
    project: Path, clean_env: dict[str, str], canary: str
) -> None:
    """gh parses `secret set NAME --repo OWNER/REPO --env ENV`, documents reading the value from
    stdin without --body, and without credentials stops at `gh auth login`."""
    gh = program_or_skip("gh")
    link_all(project)
    args, stdin, _ = our_args(project, GithubSpec(environment="production"), canary)
    helped = run(gh, (*args, "--help"), b"", project, clean_env)
    assert helped.ok, helped.detail
    control = subprocess.run(
        [gh, *args, "--bogus", "--help"], capture_output=True, text=True, env=clean_env, check=False
    )
    assert control.returncode != 0
    assert "unknown flag: --bogus" in control.stderr
    ran = run(gh, args, stdin, project, clean_env)
    assert not ran.ok
    assert "gh auth login" in ran.detail or "GH_TOKEN" in ran.detail, ran.detail
    text = subprocess.run(
        [gh, "secret", "set", "--help"], capture_output=True, text=True, env=clean_env, check=False
    ).stdout
    assert "reads from standard input if not specified" in text


class _Refuse(http.server.BaseHTTPRequestHandler):
    """The Vercel API, as a local stub that refuses everything: the CLI gets past its parser
    and stops here, never reaching the network."""

    seen: ClassVar[list[str]] = []

    def _answer(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        body = json.dumps({"error": {"code": "forbidden", "message": "Not authorized"}}).encode()
        self.send_response(403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def vercel_api() -> Iterator[str]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_vercel_accepts_our_env_add_argv(
    project: Path, clean_env: dict[str, str], vercel_api: str, tmp_path: Path, canary: str
) -> None:
    """vercel parses `env add NAME ENV --force` (its parser refuses an unknown option) and goes
    on to fetch the project named by VERCEL_ORG_ID/VERCEL_PROJECT_ID, from the local stub,
    even when .vercel/project.json was changed to another project since the check."""
    vercel = program_or_skip("vercel")
    link_all(project)
    config = tmp_path / "vercel-config"
    config.mkdir()
    (config / "auth.json").write_text('{"token": "not-a-real-token"}')
    (config / "config.json").write_text("{}")
    spec = VercelSpec(environments=("production", "preview"))
    args, stdin, pins = our_args(project, spec, canary)
    (project / ".vercel" / "project.json").write_text(
        json.dumps({"projectId": "prj_evil", "orgId": "team_evil", "projectName": "web"})
    )
    env = {**clean_env, **pins}
    prefix = ("--global-config", str(config), "--api", vercel_api)
    control = run(vercel, (*prefix, *args, "--bogus"), stdin, project, env)
    assert not control.ok
    assert "unknown or unexpected option: --bogus" in control.detail
    _Refuse.seen.clear()
    ran = run(vercel, (*prefix, *args), stdin, project, env)
    assert not ran.ok
    assert "unknown or unexpected option" not in ran.detail
    assert any("/v9/projects/prj_123" in s for s in _Refuse.seen), (ran.detail, _Refuse.seen)
    assert not any("evil" in s for s in _Refuse.seen), _Refuse.seen
    assert any("teamId=team_9" in s for s in _Refuse.seen), _Refuse.seen
    assert canary not in ran.detail


def test_wrangler_accepts_our_secret_put_argv(
    project: Path, clean_env: dict[str, str], canary: str, tmp_path: Path
) -> None:
    """wrangler's strict parser takes `secret put NAME --name WORKER --config PRIVATE` (the
    private config of the checked worker alone, which it reads without complaint) and stops at
    the missing CLOUDFLARE_API_TOKEN; an unknown argument, or a config it cannot read, is
    refused instead."""
    wrangler = program_or_skip("wrangler")
    link_all(project)
    spec = CloudflareSpec(env="staging")
    args, stdin, _ = our_args(project, spec, canary)
    assert args == ("secret", "put", NAME, "--name", "web-worker-staging")
    dest = destinations.KINDS[spec.kind]
    pinned = destinations.pinned_args(dest, dest.link(project, spec, {}), tmp_path)
    assert pinned == ("--config", str(tmp_path / "wrangler.json"))
    control = run(wrangler, (*args, *pinned, "--bogus"), stdin, project, clean_env)
    assert not control.ok
    assert "Unknown argument: bogus" in control.detail
    broken = tmp_path / "broken" / "wrangler.json"
    broken.parent.mkdir()
    broken.write_text("{not json")
    unreadable = run(wrangler, (*args, "--config", str(broken)), stdin, project, clean_env)
    assert not unreadable.ok
    assert "CLOUDFLARE_API_TOKEN" not in unreadable.detail, unreadable.detail
    ran = run(wrangler, (*args, *pinned), stdin, project, clean_env)
    assert not ran.ok
    assert "CLOUDFLARE_API_TOKEN" in ran.detail, ran.detail
