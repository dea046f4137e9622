"""Sending values to linked destinations through their programs: exact argv, the value on
stdin only, a time limit, failures reported and never fatal (DESIGN §13)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from fake_programs import FakePrograms
from helpers import as_shown

from offprompt.sinks import destinations
from offprompt.sinks.destinations import runner
from offprompt.sinks.destinations.cloudflare import CloudflareSpec
from offprompt.sinks.destinations.fly import FlySpec
from offprompt.sinks.destinations.github import GithubSpec
from offprompt.sinks.destinations.interface import DestinationResult
from offprompt.sinks.destinations.vercel import VercelSpec
from offprompt.spec import DestinationSpec

GITHUB = GithubSpec()
VERCEL = VercelSpec(environments=("production", "preview"))
CLOUDFLARE = CloudflareSpec()
FLY = FlySpec()


def send(
    project: Path,
    fakes: FakePrograms,
    specs: Sequence[DestinationSpec],
    values: dict[str, str],
    ticked: Sequence[int] | None = None,
    **env: str,
) -> tuple[DestinationResult, ...]:
    environ = fakes.env(**env)
    planned = destinations.plan(project, specs, list(values), env=environ)
    chosen = range(len(specs)) if ticked is None else ticked
    return destinations.send(project, planned, values, set(chosen), env=environ, timeout=10)


def assert_only_on_stdin(fakes: FakePrograms, canary: str) -> None:
    calls = fakes.calls()
    assert calls
    for call in calls:
        assert canary not in " ".join(call.argv)
        assert canary not in call.cmdline
        assert all(canary not in k and canary not in v for k, v in call.env.items())
        assert canary in call.stdin


def test_github_once_and_vercel_per_environment_with_the_value_on_stdin(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """The done-when case: gh runs once, vercel twice, each with exactly the value on stdin."""
    results = send(linked, fakes, [GITHUB, VERCEL], {"STRIPE_KEY": canary})
    assert [r.status for r in results] == ["sent", "sent"]
    calls = fakes.calls()
    assert [(c.name, c.argv) for c in calls] == [
        ("gh", ["secret", "set", "STRIPE_KEY", "--repo", "acme/web"]),
        ("vercel", ["env", "add", "STRIPE_KEY", "production", "--force"]),
        ("vercel", ["env", "add", "STRIPE_KEY", "preview", "--force"]),
    ]
    assert [c.stdin for c in calls] == [canary] * 3
    assert {c.cwd for c in calls} == {str(linked)}
    assert_only_on_stdin(fakes, canary)
    assert results[0].to_dict() == {
        "kind": "github",
        "target": "acme/web",
        "status": "sent",
        "detail": "sent STRIPE_KEY",
    }
    assert all(canary not in str(r.to_dict()) for r in results)


def test_every_kind_with_several_names(linked: Path, fakes: FakePrograms, canary: str) -> None:
    """Per-name runs for gh and wrangler (with --env), one import of NAME=VALUE lines for fly."""
    a, b = canary + "a", canary + "b"
    specs = [
        GithubSpec(environment="production"),
        CloudflareSpec(env="staging"),
        FLY,
    ]
    results = send(linked, fakes, specs, {"A_KEY": a, "B_KEY": b})
    assert [r.status for r in results] == ["sent"] * 3
    got = [(c.name, c.plain_argv(), c.stdin) for c in fakes.calls()]
    assert got == [
        ("gh", ["secret", "set", "A_KEY", "--repo", "acme/web", "--env", "production"], a),
        ("gh", ["secret", "set", "B_KEY", "--repo", "acme/web", "--env", "production"], b),
        ("wrangler", ["secret", "put", "A_KEY", "--name", "web-worker-staging"], a),
        ("wrangler", ["secret", "put", "B_KEY", "--name", "web-worker-staging"], b),
        ("fly", ["secrets", "import", "--app", "acme-web"], f"A_KEY={a}\nB_KEY={b}\n"),
    ]
    assert results[1].target == "web-worker-staging (env staging)"
    assert_only_on_stdin(fakes, canary)


def test_proc_cmdline_and_environ_of_the_running_program_hold_no_value(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """Seen from outside while gh runs, /proc/<pid>/cmdline and environ hold no value."""
    fakes.hold("gh")
    out: list[tuple[DestinationResult, ...]] = []
    worker = threading.Thread(
        target=lambda: out.append(send(linked, fakes, [GITHUB], {"K": canary}))
    )
    worker.start()
    try:
        pid = fakes.wait_pid("gh")
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    finally:
        fakes.release("gh")
        worker.join(30)
    assert b"secret\0set\0K\0--repo\0acme/web" in cmdline
    assert canary.encode() not in cmdline
    assert canary.encode() not in environ
    assert out[0][0].status == "sent"


def test_a_failing_program_is_reported_without_the_value_and_the_others_still_run(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """gh fails quoting the value it read: its last line is kept with the value removed; vercel
    and fly still run."""
    fakes.fail("gh", 1, "HTTP 403: cannot set {stdin} on acme/web")
    results = send(linked, fakes, [GITHUB, VERCEL, FLY], {"K": canary})
    assert [r.status for r in results] == ["failed", "sent", "sent"]
    line = as_shown("HTTP 403: cannot set [value removed] on acme/web", canary)
    assert results[0].detail == f"K: {line} (exit status 1)"
    assert [c.name for c in fakes.calls()] == ["gh", "vercel", "vercel", "fly"]
    assert all(canary not in r.detail for r in results)


def test_a_line_quoting_part_of_a_value_is_withheld(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """A last line sharing a stretch of the value is not shown at all."""
    fakes.fail("vercel", 2, "bad value starting " + canary[:12])
    (result,) = send(linked, fakes, [VERCEL], {"K": canary})
    assert result.status == "failed"
    assert canary[:12] not in result.detail
    assert "quoted part of a value" in result.detail


def test_one_environment_failing_still_sends_the_other(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """A failed environment is reported; the next one still runs."""
    fakes.fail("vercel", 1, "Error: rate limited")
    (result,) = send(linked, fakes, [VERCEL], {"K": canary})
    assert result.status == "failed"
    assert result.detail.startswith("K in production: Error: rate limited (exit status 1)")
    assert len(fakes.calls()) == 2


def test_a_missing_program_is_skipped_with_why(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """No wrangler on PATH: skipped, saying so; the next destination runs."""
    fakes.remove("wrangler")
    results = send(linked, fakes, [CLOUDFLARE, GITHUB], {"K": canary})
    assert results[0].status == "skipped"
    assert results[0].detail == "wrangler is not installed here (not found on PATH)"
    assert results[1].status == "sent"


def test_plan_says_which_program_is_missing_before_the_submit(
    linked: Path, fakes: FakePrograms
) -> None:
    """The plan knows a missing program before any value exists."""
    fakes.remove("gh")
    planned = destinations.plan(linked, [GITHUB, FLY], ["K"], env=fakes.env())
    assert planned[0].missing == "gh is not installed here (not found on PATH)"
    assert planned[1].missing is None
    assert planned[0].command == "gh secret set K --repo acme/web"


def test_flyctl_is_used_when_fly_is_absent(linked: Path, fakes: FakePrograms, canary: str) -> None:
    """flyctl stands in for fly."""
    fakes.remove("fly")
    (result,) = send(linked, fakes, [FLY], {"K": canary})
    assert result.status == "sent"
    assert [(c.name, c.argv) for c in fakes.calls()] == [
        ("flyctl", ["secrets", "import", "--app", "acme-web"])
    ]


def test_an_unticked_destination_does_not_run(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """An unticked destination is skipped and its program never starts."""
    results = send(linked, fakes, [GITHUB, VERCEL], {"K": canary}, ticked=[1])
    assert (results[0].status, results[0].detail) == ("skipped", "unticked on the page")
    assert {c.name for c in fakes.calls()} == {"vercel"}


def test_a_program_past_its_time_limit_is_stopped(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """A program still running at the limit is killed and reported failed."""
    fakes.fail("gh", 0, "never printed", sleep=30)
    planned = destinations.plan(linked, [GITHUB], ["K"], env=fakes.env())
    (result,) = destinations.send(linked, planned, {"K": canary}, {0}, env=fakes.env(), timeout=1)
    assert result.status == "failed"
    assert "stopped after 1 s" in result.detail


def test_targeting_variables_do_not_reach_the_program(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """Each variable THREAT_MODEL names would pick a target the page did not show; the
    programs run without them (and keep the rest, e.g. tokens); vercel gets its two back,
    holding the checked ids."""
    env = {
        "FLY_APP": "evil",
        "VERCEL_PROJECT_ID": "prj_evil",
        "VERCEL_ORG_ID": "team_evil",
        "CLOUDFLARE_ENV": "evil",
        "WRANGLER_ENV": "evil",
        "GH_REPO": "evil/x",
        "GH_HOST": "evil.example",
        "GH_TOKEN": "t0ken",
    }
    send(linked, fakes, [GITHUB, VERCEL, CLOUDFLARE, FLY], {"K": canary}, **env)
    for call in fakes.calls():
        pinned = {"VERCEL_ORG_ID": "team_9", "VERCEL_PROJECT_ID": "prj_123"}
        if call.name != "vercel":
            pinned = {}
        assert {k: call.env[k] for k in set(env) & set(call.env) - {"GH_TOKEN"}} == pinned
        assert call.env["GH_TOKEN"] == "t0ken"


@pytest.mark.parametrize(
    ("spec", "value", "why"),
    [
        (GITHUB, "{c}\n", "gh drops the line break"),
        (CLOUDFLARE, "{c} ", "wrangler drops the blanks"),
        (FLY, "{c} #x", "fly secrets import would not read"),
        (FLY, '"{c}"', "fly secrets import would not read"),
        (FLY, "a\n{c}", "fly secrets import would not read"),
    ],
)
def test_a_value_the_program_would_change_is_not_sent(
    linked: Path, fakes: FakePrograms, canary: str, spec: DestinationSpec, value: str, why: str
) -> None:
    """Never send an altered value: report it and run nothing for it."""
    (result,) = send(linked, fakes, [spec], {"K": value.format(c=canary)})
    assert result.status == "failed"
    assert why in result.detail
    assert result.detail.endswith("so it was not sent")
    assert canary not in result.detail
    assert fakes.calls() == []


def test_a_link_changed_since_the_page_opened_is_not_sent(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """The values go where the page said, or nowhere."""
    planned = destinations.plan(linked, [FLY], ["K"], env=fakes.env())
    (linked / "fly.toml").write_text('app = "other-app"\n')
    (result,) = destinations.send(linked, planned, {"K": canary}, {0}, env=fakes.env())
    assert result.status == "failed"
    assert "link changed" in result.detail
    assert fakes.calls() == []


def test_no_values_sends_nothing(linked: Path, fakes: FakePrograms) -> None:
    """Kept or generated-only writes have no typed value to send."""
    (result,) = send(linked, fakes, [GITHUB], {})
    assert result.status == "skipped"
    assert fakes.calls() == []


def test_last_line_strips_colour_and_every_line_of_a_multiline_value(canary: str) -> None:
    """ANSI colour goes; the value and each of its lines are removed."""
    value = f"-----BEGIN KEY-----\n{canary}\n-----END KEY-----"
    out = f"ok\n\x1b[31merror:\x1b[0m got {canary} and -----END KEY-----\r\n\n".encode()
    shown = as_shown("error: got [value removed] and [value removed]", value)
    assert runner.last_line(out, [value]) == shown


def test_last_line_spells_out_controls_and_is_short() -> None:
    """Controls are spelled out, the line is cut at 200, blank output is empty."""
    assert runner.last_line(b"a\x07b", []) == "a\\u0007b"
    assert len(runner.last_line(b"x" * 1000, [])) == 200
    assert runner.last_line(b"\n\n", []) == ""


def test_wrangler_sign_off_line_is_not_the_detail(
    linked: Path, fakes: FakePrograms, canary: str
) -> None:
    """wrangler ends every failure with where its log went; the line before is the detail."""
    fakes.fail("wrangler", 1, "✘ [ERROR] Authentication error\n🪵  Logs were written to /x.log")
    (result,) = send(linked, fakes, [CLOUDFLARE], {"K": canary})
    assert result.detail == "K: ✘ [ERROR] Authentication error (exit status 1)"


def test_a_program_that_ended_is_not_held_by_what_it_left_running(tmp_path: Path) -> None:
    """A program that exits at once but leaves a process of its own session holding its
    output: the answer comes at the time limit, with the program's own exit status."""
    script = tmp_path / "prog"
    script.write_text("#!/bin/sh\nsetsid sleep 6 &\necho done\nexit 0\n")
    script.chmod(0o755)
    start = time.monotonic()

    ran = runner.run(str(script), [], b"", cwd=tmp_path, env=dict(os.environ), values=(),
                     timeout=1)  # fmt: skip

    assert time.monotonic() - start < 4
    assert ran.ok


def test_a_program_is_looked_for_in_absolute_folders_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty PATH entry or `.` is the project folder: a `gh` there is never the program."""
    (tmp_path / "gh").write_text("#!/bin/sh\n")
    (tmp_path / "gh").chmod(0o755)
    monkeypatch.chdir(tmp_path)

    assert runner.find_program(["gh"], {"PATH": ":.:/nonexistent"}) is None
    assert runner.find_program(["gh"], {"PATH": str(tmp_path)}) == str(tmp_path / "gh")
