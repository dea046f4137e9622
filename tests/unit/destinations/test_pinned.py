"""The target checked is the target used (DESIGN §13): the program is told the target offprompt
checked, so project files changed after the check cannot redirect a value; and the project's
files are read only when they are small regular files, with a time limit."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_programs import FakePrograms, git
from helpers import assert_no_part

from offprompt.errors import NotLinked
from offprompt.sinks import destinations
from offprompt.sinks.destinations import linked as linked_files
from offprompt.sinks.destinations import runner
from offprompt.sinks.destinations.cloudflare import CloudflareSpec
from offprompt.sinks.destinations.fly import FlySpec
from offprompt.sinks.destinations.github import GithubSpec
from offprompt.sinks.destinations.vercel import VercelSpec
from offprompt.spec import DestinationSpec

GITHUB = GithubSpec()
VERCEL = VercelSpec(environments=("production",))
CLOUDFLARE = CloudflareSpec()
FLY = FlySpec()

# Every project file a program reads its target from, pointed at an attacker's target.
EVIL = {
    ".git/config": '[remote "origin"]\n\turl = git@github.com:evil/app.git\n',
    ".vercel/project.json": json.dumps(
        {"projectId": "prj_evil", "orgId": "team_evil", "projectName": "web"}
    ),
    "wrangler.toml": 'name = "evil-app"\n[env.staging]\nname = "evil-app"\n',
    "fly.toml": 'app = "evil-app"\n',
}


def within(seconds: float, work: Callable[[], Any]) -> Any:
    """`work()`'s answer or exception; fails the test (instead of hanging it) past `seconds`."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["answer"] = work()
        except BaseException as e:
            box["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("answer")


@pytest.mark.parametrize(
    ("spec", "checked"),
    [
        (GITHUB, "acme/web"),
        (VERCEL, "team_9/prj_123"),
        (CLOUDFLARE, "web-worker"),
        (CloudflareSpec(env="staging"), "web-worker-staging"),
        (FLY, "acme-web"),
    ],
)
def test_files_changed_while_the_program_starts_do_not_redirect_the_value(
    linked: Path, fakes: FakePrograms, canary: str, spec: DestinationSpec, checked: str
) -> None:
    """The fakes rewrite every project file to name `evil` just as they start and then find
    their target as the real program does: the one they use is still the checked one, and
    the result names it."""
    environ = fakes.env()
    planned = destinations.plan(linked, [spec], ["K"], env=environ)
    fakes.retarget(EVIL)
    (result,) = destinations.send(linked, planned, {"K": canary}, {0}, env=environ, timeout=10)
    (call,) = fakes.calls()
    assert "evil" in (linked / "fly.toml").read_text()  # the race really happened
    assert call.target == checked
    assert result.status == "sent"
    assert "evil" not in result.target


def test_vercel_gets_the_checked_ids_and_no_other_variable(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """VERCEL_ORG_ID and VERCEL_PROJECT_ID hold the ids read at the check, replacing any the
    server was started with; they are the only variables offprompt sets for it."""
    environ = fakes.env(VERCEL_ORG_ID="team_evil", VERCEL_PROJECT_ID="prj_evil")
    planned = destinations.plan(linked, [VERCEL], ["K"], env=environ)
    destinations.send(linked, planned, {"K": canary}, {0}, env=environ, timeout=10)
    (call,) = fakes.calls()
    assert (call.env["VERCEL_ORG_ID"], call.env["VERCEL_PROJECT_ID"]) == ("team_9", "prj_123")
    added = set(call.env) - set(environ)
    assert added <= {"NO_COLOR"}


@pytest.mark.parametrize(
    ("spec", "argv"),
    [
        (GITHUB, ["secret", "set", "K", "--repo", "acme/web"]),
        (CLOUDFLARE, ["secret", "put", "K", "--name", "web-worker"]),
        (CloudflareSpec(env="staging"), ["secret", "put", "K", "--name", "web-worker-staging"]),
        (FLY, ["secrets", "import", "--app", "acme-web"]),
    ],
)
def test_argv_names_the_checked_target(
    linked: Path, fakes: FakePrograms, canary: str, spec: DestinationSpec, argv: list[str]
) -> None:
    """gh gets --repo, wrangler --name (the worker itself) and --config (a private file of the
    checked worker alone), fly --app."""
    environ = fakes.env()
    planned = destinations.plan(linked, [spec], ["K"], env=environ)
    destinations.send(linked, planned, {"K": canary}, {0}, env=environ, timeout=10)
    (call,) = fakes.calls()
    if spec.kind == "cloudflare":
        assert call.argv[call.argv.index("--config") + 1].endswith("/wrangler.json")
    assert [call.plain_argv()] == [argv]


def test_the_page_names_the_vercel_project_by_the_id_it_uses(linked: Path) -> None:
    """The target shows projectId (what vercel is given), the name beside it from the same
    read; without a name, the id alone."""
    (link,) = (p.link for p in destinations.plan(linked, [VERCEL], ["K"], env={"PATH": ""}))
    assert link.target == "prj_123 (web) in production"
    (linked / ".vercel" / "project.json").write_text(
        json.dumps({"projectId": "prj_123", "orgId": "team_9"})
    )
    (link,) = (p.link for p in destinations.plan(linked, [VERCEL], ["K"], env={"PATH": ""}))
    assert link.target == "prj_123 in production"


def test_page_command_lines_name_the_checked_targets(linked: Path) -> None:
    """What the page shows to run is what runs."""
    specs = [CLOUDFLARE, FLY]
    commands = [p.command for p in destinations.plan(linked, specs, ["K"], env={"PATH": ""})]
    assert commands == [
        "wrangler secret put K --name web-worker",
        "fly secrets import (K) --app acme-web",
    ]


def test_vercel_without_org_id_is_not_linked(linked: Path) -> None:
    """Both ids are needed to pin the project: a project.json without orgId is no link."""
    (linked / ".vercel" / "project.json").write_text(json.dumps({"projectId": "prj_123"}))
    with pytest.raises(NotLinked, match="no orgId"):
        destinations.KINDS["vercel"].link(linked, VERCEL, {})


@pytest.mark.parametrize("bad", ["prj 1", "prj_1\n", "", "-x", "a" * 200])
def test_vercel_ids_that_are_not_ids_are_not_linked(linked: Path, bad: str) -> None:
    """An id goes into a variable: only the shape Vercel's ids have is accepted."""
    (linked / ".vercel" / "project.json").write_text(
        json.dumps({"projectId": bad, "orgId": "team_9"})
    )
    with pytest.raises(NotLinked):
        destinations.KINDS["vercel"].link(linked, VERCEL, {})


CONFIGS = {
    "fly": ("fly.toml", FLY),
    "wrangler": ("wrangler.toml", CLOUDFLARE),
    "vercel": (".vercel/project.json", VERCEL),
}


@pytest.mark.parametrize("which", sorted(CONFIGS))
def test_a_fifo_project_file_is_not_linked_and_never_hangs(linked: Path, which: str) -> None:
    """A FIFO where a project file should be (nobody will ever write to it) is `not linked`
    at once, not a wait for a writer."""
    file, spec = CONFIGS[which]
    (linked / file).unlink()
    os.mkfifo(linked / file)
    with pytest.raises(NotLinked, match="not a regular file"):
        within(5, lambda: destinations.KINDS[spec.kind].link(linked, spec, {}))


def test_a_fifo_git_config_is_not_linked_and_never_hangs(linked: Path) -> None:
    """The same for the git config the remote is read from."""
    (linked / ".git" / "config").unlink()
    os.mkfifo(linked / ".git" / "config")
    with pytest.raises(NotLinked, match="not a regular file"):
        within(5, lambda: destinations.KINDS["github"].link(linked, GITHUB, {}))


@pytest.mark.parametrize("which", sorted(CONFIGS))
def test_a_link_out_of_the_project_is_not_linked(linked: Path, tmp_path: Path, which: str) -> None:
    """A symlink to a file outside the project (a device, another project's config) is no
    link, even when what it points at would be a valid config."""
    file, spec = CONFIGS[which]
    outside = tmp_path / "elsewhere"
    outside.write_bytes((linked / file).read_bytes())
    (linked / file).unlink()
    (linked / file).symlink_to(outside)
    with pytest.raises(NotLinked, match="outside the project"):
        within(5, lambda: destinations.KINDS[spec.kind].link(linked, spec, {}))
    (linked / file).unlink()
    (linked / file).symlink_to("/dev/zero")
    with pytest.raises(NotLinked):
        within(5, lambda: destinations.KINDS[spec.kind].link(linked, spec, {}))


def test_a_link_inside_the_project_still_links(linked: Path) -> None:
    """A symlink to another regular file in the project reads as that file."""
    (linked / "deploy").mkdir()
    (linked / "fly.toml").rename(linked / "deploy" / "fly.toml")
    (linked / "fly.toml").symlink_to("deploy/fly.toml")
    assert destinations.KINDS["fly"].link(linked, FLY, {}).ident == "acme-web"


def test_a_device_project_file_is_not_linked(linked: Path) -> None:
    """A character device (here, a copy of /dev/zero's node) is no config."""
    (linked / "fly.toml").unlink()
    try:
        os.mknod(linked / "fly.toml", 0o600 | 0o020000, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("mknod is not allowed here")
    with pytest.raises(NotLinked, match="not a regular file"):
        within(5, lambda: destinations.KINDS["fly"].link(linked, FLY, {}))


def test_a_project_file_over_one_mib_is_not_linked(linked: Path) -> None:
    """Size is checked before reading: 1 MiB and one byte is refused."""
    (linked / "fly.toml").write_text('app = "acme-web"\n' + "#" * (1024 * 1024))
    with pytest.raises(NotLinked, match="larger than 1 MiB"):
        destinations.KINDS["fly"].link(linked, FLY, {})


def test_a_read_that_does_not_finish_in_time_is_not_linked(
    linked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read stuck in the file system (a hung network mount) ends at the time limit."""
    gate = threading.Event()

    def stuck(project: Path, rel: str) -> bytes:
        gate.wait(10)
        return b""

    monkeypatch.setattr(linked_files, "READ_SECONDS", 0.3)
    monkeypatch.setattr(linked_files, "_read_file", stuck)
    try:
        with pytest.raises(NotLinked, match="not read in time"):
            within(5, lambda: destinations.KINDS["fly"].link(linked, FLY, {}))
    finally:
        gate.set()


def test_git_is_never_asked_about_a_repository_outside_the_project(
    project: Path, tmp_path: Path
) -> None:
    """The remote comes from the project's own .git only; `.git` linked elsewhere is no link."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "remote", "add", "origin", "git@github.com:evil/app.git")
    (project / ".git").symlink_to(other / ".git")
    with pytest.raises(NotLinked, match="outside the project"):
        within(5, lambda: destinations.KINDS["github"].link(project, GITHUB, {}))


def test_last_line_withholds_any_four_character_stretch_of_a_value(canary: str) -> None:
    """Four characters of a value are enough to withhold the line; three are not (they turn
    up in ordinary words too often to mean anything)."""
    own = canary[len("canary-") :]
    for start in range(len(own) - 3):
        line = f"error: near {own[start : start + 4]} in input".encode()
        shown = runner.last_line(line, [canary])
        assert "quoted part of a value" in shown
        assert_no_part(canary, shown)
    assert runner.last_line(f"error: {own[:3]}!".encode(), [canary]) == f"error: {own[:3]}!"


def test_last_line_withholds_a_stretch_in_another_case(canary: str) -> None:
    """A program that upper- or lower-cases what it echoes is still caught."""
    own = canary[len("canary-") :]
    line = f"bad token {own[2:8].lower()}".encode()
    assert "quoted part of a value" in runner.last_line(line, [canary])


def test_a_wrangler_environment_with_its_own_account_is_not_linked(project: Path) -> None:
    """wrangler is given the worker's name without --env, so it would use the top-level
    account_id: an environment naming another account is refused, one repeating it is not."""
    (project / "wrangler.toml").write_text(
        'name = "edge"\naccount_id = "a1"\n[env.staging]\naccount_id = "b2"\n'
        '[env.qa]\naccount_id = "a1"\n'
    )
    kind = destinations.KINDS["cloudflare"]
    with pytest.raises(NotLinked, match="account_id of its own"):
        kind.link(project, CloudflareSpec(env="staging"), {})
    assert kind.link(project, CloudflareSpec(env="qa"), {}).ident == "edge-qa"


def test_wrangler_service_environments_are_not_linked(project: Path) -> None:
    """With legacy_env = false an environment is no worker of its own that --name can say."""
    (project / "wrangler.toml").write_text('name = "edge"\nlegacy_env = false\n[env.staging]\n')
    with pytest.raises(NotLinked, match="service environments"):
        destinations.KINDS["cloudflare"].link(project, CloudflareSpec(env="staging"), {})


def test_an_account_changed_since_the_page_opened_is_not_sent(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """The worker's account_id is part of the link checked again before wrangler runs."""
    (linked / "wrangler.toml").write_text('name = "web-worker"\naccount_id = "a1"\n')
    environ = fakes.env()
    planned = destinations.plan(linked, [CLOUDFLARE], ["K"], env=environ)
    (linked / "wrangler.toml").write_text('name = "web-worker"\naccount_id = "evil"\n')
    (result,) = destinations.send(linked, planned, {"K": canary}, {0}, env=environ, timeout=10)
    assert result.status == "failed"
    assert "link changed" in result.detail
    assert fakes.calls() == []


def test_an_account_rewritten_while_wrangler_starts_does_not_redirect_the_value(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """wrangler reads its account from its config as it starts, and the config outranks
    CLOUDFLARE_ACCOUNT_ID: it is pointed at a private config holding the checked worker and
    account alone, so a project file rewritten in that instant changes nothing."""
    (linked / "wrangler.toml").write_text('name = "web-worker"\naccount_id = "a1"\n')
    environ = fakes.env()
    planned = destinations.plan(linked, [CLOUDFLARE], ["K"], env=environ)
    fakes.retarget({"wrangler.toml": 'name = "web-worker"\naccount_id = "evil"\n'})
    (result,) = destinations.send(linked, planned, {"K": canary}, {0}, env=environ, timeout=10)
    (call,) = fakes.calls()
    assert "evil" in (linked / "wrangler.toml").read_text()  # the race really happened
    assert ("web-worker@a1", "sent") == (call.target, result.status)
    config = call.argv[call.argv.index("--config") + 1]
    assert not Path(config).exists()  # the private config is gone after the send
    assert not Path(config).is_relative_to(linked)
