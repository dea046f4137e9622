"""`also` through collect_secret: linked destinations only, ticked on the page, the value on
the programs' stdin only, failures reported while the local write stands (DESIGN §13)."""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from fake_programs import FakePrograms, link_all
from helpers import as_shown

from .harness import (
    FakeOpener,
    Session,
    as_person,
    connect,
    load,
    refusal,
    settings,
    structured,
    visit,
)

DONE_WHEN: list[dict[str, Any]] = [
    {"kind": "github"},
    {"kind": "vercel", "environments": ["production", "preview"]},
]
_BOX = re.compile(r'<input type="checkbox" form="collect" name="(also\.\d+)" value="1"[^>]*>')


@pytest.fixture
def fakes(tmp_path: Path) -> FakePrograms:
    return FakePrograms(tmp_path / "fakes")


@pytest.fixture
def opener() -> FakeOpener:
    return FakeOpener(visits=False)


@pytest.fixture
async def also_session(
    project: Path, tmp_path: Path, fakes: FakePrograms, opener: FakeOpener
) -> AsyncIterator[Session]:
    made = settings(tmp_path / "our-state", PATH=str(fakes.bin), HOME=os.environ["HOME"])
    client, service = await connect(project, made, opener)
    await client.initialize({})
    try:
        yield client
    finally:
        await client.close()
        await service.close()


def ask(also: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"secrets": [{"name": "STRIPE_KEY"}], "reason": "deploys", "also": also, **extra}


async def page_of(opener: FakeOpener) -> tuple[str, str]:
    for _ in range(200):
        if opener.opened:
            url = opener.opened[0]
            return url, await load(url)
        await asyncio.sleep(0.02)
    raise AssertionError("no page was opened")


async def post(url: str, fields: dict[str, str]) -> tuple[int, str]:
    nonce = await visit(url)
    async with (
        aiohttp.ClientSession(headers=as_person(url)) as s,
        s.post(url, data={"nonce": nonce, **fields}) as reply,
    ):
        return reply.status, await reply.text()


async def collect(
    session: Session, opener: FakeOpener, args: dict[str, Any], fields: dict[str, str]
) -> tuple[dict[str, Any], str, str]:
    """Call collect_secret, submit the page with `fields`; the result, form and written page."""
    call = asyncio.ensure_future(session.call("collect_secret", args))
    url, form = await page_of(opener)
    status, written = await post(url, fields)
    assert status == 200, written
    return structured(await call), form, written


async def test_done_when_one_collect_writes_env_runs_gh_once_and_vercel_twice(
    also_session: Session, opener: FakeOpener, project: Path, fakes: FakePrograms, canary: str
) -> None:
    """The issue's done-when: .env is written, gh runs once and vercel twice, the value on
    their stdin only; result, page and journal say `sent` for both and hold no value."""
    link_all(project)
    ticked = {"also.0": "1", "also.1": "1"}
    result, form, written = await collect(
        also_session, opener, ask(DONE_WHEN), {"STRIPE_KEY": canary, **ticked}
    )
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"
    calls = fakes.calls()
    assert [(c.name, c.argv, c.stdin) for c in calls] == [
        ("gh", ["secret", "set", "STRIPE_KEY", "--repo", "acme/web"], canary),
        ("vercel", ["env", "add", "STRIPE_KEY", "production", "--force"], canary),
        ("vercel", ["env", "add", "STRIPE_KEY", "preview", "--force"], canary),
    ]
    for c in calls:
        assert canary not in c.cmdline + json.dumps(c.env)
    assert _BOX.findall(form) == ["also.0", "also.1"]
    assert all(" checked" in box for box in re.findall(r"<input[^>]*also\.\d[^>]*>", form))
    assert "gh secret set STRIPE_KEY --repo acme/web" in form
    assert result["destinations"] == [
        {"kind": "github", "target": "acme/web", "status": "sent", "detail": "sent STRIPE_KEY"},
        {
            "kind": "vercel",
            "target": "prj_123 (web) in production, preview",
            "status": "sent",
            "detail": "sent STRIPE_KEY in production, STRIPE_KEY in preview",
        },
    ]
    assert written.count('data-status="sent"') == 2
    journal = project.parent / "our-state" / "journal.jsonl"  # tmp_path/project beside it
    lines = [json.loads(ln) for ln in journal.read_text().splitlines()]
    assert lines[-1]["destinations"] == [
        {"kind": "github", "target": "acme/web", "status": "sent"},
        {"kind": "vercel", "target": "prj_123 (web) in production, preview", "status": "sent"},
    ]
    for text in (json.dumps(result), written, json.dumps(lines)):
        assert canary not in text


async def test_an_unlinked_destination_is_refused_before_any_page(
    also_session: Session, opener: FakeOpener, project: Path, fakes: FakePrograms
) -> None:
    """No .vercel/project.json: refused, saying which link is missing; no page, no program."""
    link_all(project)
    (project / ".vercel" / "project.json").unlink()
    why = refusal(await also_session.call("collect_secret", ask(DONE_WHEN)))
    assert why.startswith("also[1] (vercel): the project is not linked to Vercel")
    assert opener.opened == []
    assert fakes.calls() == []
    assert not (project / ".env").exists()


async def test_a_failing_program_is_reported_on_the_page_and_in_the_result_env_stays(
    also_session: Session, opener: FakeOpener, project: Path, fakes: FakePrograms, canary: str
) -> None:
    """gh fails (quoting the value): .env is written, vercel still runs, the page and the
    result say failed with gh's last line, the value taken out."""
    link_all(project)
    fakes.fail("gh", 1, "HTTP 404: Not Found (repository acme/web) {stdin}")
    ticked = {"also.0": "1", "also.1": "1"}
    result, _, written = await collect(
        also_session, opener, ask(DONE_WHEN), {"STRIPE_KEY": canary, **ticked}
    )
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"
    assert result["status"] == "written"
    gh, vercel = result["destinations"]
    assert (gh["status"], vercel["status"]) == ("failed", "sent")
    line = as_shown("HTTP 404: Not Found (repository acme/web) [value removed]", canary)
    assert gh["detail"] == f"STRIPE_KEY: {line} (exit status 1)"
    assert 'data-status="failed"' in written
    assert html.escape(line, quote=False) in written
    assert "Tell the person which did not get the values" in result["note"]
    assert canary not in json.dumps(result) + written


async def test_a_post_without_the_boxes_sends_only_to_the_file(
    also_session: Session, opener: FakeOpener, project: Path, fakes: FakePrograms, canary: str
) -> None:
    """A plain post of the values alone skips every destination (unticked)."""
    link_all(project)
    result, _, _ = await collect(also_session, opener, ask(DONE_WHEN), {"STRIPE_KEY": canary})
    assert [d["status"] for d in result["destinations"]] == ["skipped", "skipped"]
    assert fakes.calls() == []
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"


async def test_a_missing_program_is_said_on_the_page_before_the_submit(
    also_session: Session, opener: FakeOpener, project: Path, fakes: FakePrograms, canary: str
) -> None:
    link_all(project)
    fakes.remove("vercel")
    ticked = {"also.0": "1", "also.1": "1"}
    result, form, _ = await collect(
        also_session, opener, ask(DONE_WHEN), {"STRIPE_KEY": canary, **ticked}
    )
    assert "vercel is not installed here (not found on PATH): it will be skipped" in form
    assert [d["status"] for d in result["destinations"]] == ["sent", "skipped"]


async def test_sink_none_writes_no_file_and_sends(
    also_session: Session, opener: FakeOpener, project: Path, fakes: FakePrograms, canary: str
) -> None:
    """`sink: {kind: "none"}` beside `also`: no .env, the value goes only to fly."""
    link_all(project)
    args = ask([{"kind": "fly"}], sink={"kind": "none"})
    result, form, written = await collect(
        also_session, opener, args, {"STRIPE_KEY": canary, "also.0": "1"}
    )
    assert not (project / ".env").exists()
    assert [(c.name, c.stdin) for c in fakes.calls()] == [("fly", f"STRIPE_KEY={canary}\n")]
    assert result["sink"] == {"kind": "none", "path": ""}
    assert result["destinations"][0]["status"] == "sent"
    assert "No file in the project folder is written." in form
    assert "no file was written" in written


async def test_sink_none_without_also_is_refused(also_session: Session) -> None:
    args = {"secrets": [{"name": "K"}], "reason": "r", "sink": {"kind": "none"}}
    assert "needs also" in refusal(await also_session.call("collect_secret", args))


async def test_the_agent_cannot_name_a_repository(also_session: Session, project: Path) -> None:
    """The schema is closed: a repo, project or app field is a refusal, never a target."""
    link_all(project)
    for entry, field in (
        ({"kind": "github", "repo": "evil/x"}, "repo"),
        ({"kind": "vercel", "environments": ["production"], "projectId": "prj_evil"}, "projectId"),
        ({"kind": "fly", "app": "evil"}, "app"),
    ):
        why = refusal(await also_session.call("collect_secret", ask([entry])))
        assert f"also[0].{field} is not an allowed field" in why


async def test_a_value_a_ticked_program_would_change_is_refused_before_any_write(
    also_session: Session, opener: FakeOpener, project: Path, fakes: FakePrograms, canary: str
) -> None:
    """gh drops a trailing line break: with GitHub ticked the submit is a 422 naming why, and
    nothing is written or run; unticked, the same value is written to .env."""
    link_all(project)
    call = asyncio.ensure_future(also_session.call("collect_secret", ask(DONE_WHEN)))
    url, _ = await page_of(opener)
    value = canary + "\n"
    status, body = await post(url, {"STRIPE_KEY": value, "also.0": "1"})
    assert status == 422
    assert "gh drops the line break at the end of STRIPE_KEY&#x27;s value: untick github" in body
    assert not (project / ".env").exists()
    assert fakes.calls() == []
    status, _ = await post(url, {"STRIPE_KEY": value, "also.1": "1"})
    assert status == 200
    result = structured(await call)
    assert [d["status"] for d in result["destinations"]] == ["skipped", "sent"]
    assert [c.stdin for c in fakes.calls()] == [value, value]


async def test_a_fifo_named_fly_toml_is_refused_and_the_server_keeps_answering(
    also_session: Session, opener: FakeOpener, project: Path, fakes: FakePrograms
) -> None:
    """A FIFO where fly.toml should be (nobody ever writes to it) is `not linked` at once; the
    server answers tools/list right after, instead of hanging on the read."""
    link_all(project)
    (project / "fly.toml").unlink()
    os.mkfifo(project / "fly.toml")
    call = also_session.call("collect_secret", ask([{"kind": "fly"}]))
    why = refusal(await asyncio.wait_for(call, 10))
    assert why.startswith("also[0] (fly): the project's Fly.io link is unusable")
    assert "not a regular file" in why
    listed = await asyncio.wait_for(also_session.request("tools/list", {}), 5)
    assert "collect_secret" in json.dumps(listed)
    assert opener.opened == []
    assert fakes.calls() == []
