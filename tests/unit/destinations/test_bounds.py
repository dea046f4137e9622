"""The 60 s limit is for each destination as a whole (DESIGN §13): a program that hangs for
every name and environment holds the send once, not once per run, and the next destination
still runs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fake_programs import FakePrograms

from offprompt.sinks import destinations
from offprompt.sinks.destinations import runner
from offprompt.sinks.destinations.github import GithubSpec
from offprompt.sinks.destinations.vercel import VercelSpec

VERCEL = VercelSpec(environments=("production", "preview", "development"))


def test_the_limit_is_sixty_seconds() -> None:
    assert runner.TIMEOUT_SECONDS == 60


def test_a_hanging_program_is_bounded_per_destination_not_per_run(
    linked: Path, fakes: FakePrograms, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """3 names by 3 environments that each hang: the whole vercel destination ends within its
    (lowered) limit and a small margin, and gh after it still runs."""
    monkeypatch.setattr(runner, "TIMEOUT_SECONDS", 1.5)
    fakes.fail("vercel", 0, "never printed", sleep=30)
    values = {"A": canary, "B": canary + "b", "C": canary + "c"}
    environ = fakes.env()
    planned = destinations.plan(linked, [VERCEL, GithubSpec()], list(values), env=environ)
    start = time.monotonic()

    vercel, github = destinations.send(linked, planned, values, {0, 1}, env=environ)

    assert time.monotonic() - start < 1.5 + 2 + 3  # kill grace + gh's own run
    assert vercel.status == "failed"
    assert "stopped after 1.5 s" in vercel.detail
    assert "limit was used up" in vercel.detail
    assert github.status == "sent"
    assert all(canary not in r.detail for r in (vercel, github))
