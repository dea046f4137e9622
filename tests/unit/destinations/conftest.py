"""Fixtures for the destination tests: fake programs and projects linked to each platform."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .fakes import FakePrograms


@pytest.fixture
def fakes(tmp_path: Path) -> FakePrograms:
    return FakePrograms(tmp_path / "fakes")


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


@pytest.fixture
def linked(project: Path) -> Path:
    """A project linked to all four: a GitHub remote, a Vercel link, a worker and a Fly app."""
    git(project, "init", "-q")
    git(project, "remote", "add", "origin", "git@github.com:acme/web.git")
    (project / ".vercel").mkdir()
    (project / ".vercel" / "project.json").write_text(
        json.dumps({"projectId": "prj_123", "orgId": "team_9", "projectName": "web"})
    )
    (project / "wrangler.toml").write_text('name = "web-worker"\n[env.staging]\n')
    (project / "fly.toml").write_text('app = "acme-web"\n')
    return project
