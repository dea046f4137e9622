"""The page says who wrote the reason (DESIGN §9): the agent, the person at the terminal, or
offprompt itself; text offprompt made up is never called the agent's words."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from offprompt.spec import ReasonAuthor, SecretSpec, SinkSpec
from offprompt.store import RequestStore

from .conftest import path_of

HEADINGS: dict[ReasonAuthor, tuple[str, str]] = {
    "agent": ("Why, in the agent's words", "The agent wrote this, not offprompt."),
    "person": (
        "Why, as given at the terminal",
        "Given with offprompt collect --reason: by you, or by a program or agent that ran it.",
    ),
    "offprompt": (
        "Why",
        "offprompt wrote this: offprompt collect ran in a terminal without --reason.",
    ),
}


async def page_for(
    client: TestClient, store: RequestStore, project: Path, by: ReasonAuthor, reason: str
) -> str:
    request = store.create(
        [SecretSpec("API_KEY")], SinkSpec(), project, reason, ttl=300, reason_by=by
    )
    resp = await client.get(path_of(request))
    assert 200 == resp.status
    return html.unescape(await resp.text())


@pytest.mark.parametrize("by", list(HEADINGS))
async def test_the_reason_is_headed_by_who_wrote_it(
    client: TestClient, store: RequestStore, project: Path, by: ReasonAuthor
) -> None:
    """Each author gets its own heading and line beside the reason."""
    heading, hint = HEADINGS[by]

    page = await page_for(client, store, project, by, "Billing needs it")

    assert f'<h2 id="reason-h">{heading}</h2>' in page
    assert hint in page
    assert "Billing needs it" in page


@pytest.mark.parametrize("by", ["person", "offprompt"])
async def test_only_the_agent_s_reason_is_called_the_agent_s(
    client: TestClient, store: RequestStore, project: Path, by: ReasonAuthor
) -> None:
    """Text a person typed or offprompt made up never reads as the agent's words."""
    page = await page_for(client, store, project, by, "Billing needs it")

    assert "agent's words" not in page
    assert "The agent wrote this" not in page


def test_a_request_is_the_agent_s_unless_said_otherwise(project: Path) -> None:
    """The MCP door's requests need no word: an agent wrote their reason."""
    request = RequestStore().create([SecretSpec("A")], SinkSpec(), project, "r", ttl=60)

    assert "agent" == request.reason_by
