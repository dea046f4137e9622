"""Sandbox fixtures: the fake edge (TLS, routing, a record of every byte) and fake cloudflared."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .edge import FakeEdge

HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_cloudflared.py"


@pytest.fixture
def edge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEdge]:
    """A running fake edge; this process (and its children) reach and trust it."""
    with FakeEdge(tmp_path / "edge") as running:
        for name, value in running.env().items():
            monkeypatch.setenv(name, value)
        yield running


class FakeCloudflared:
    """The fake binary's path (a wrapper running fake_cloudflared.py) and its start log."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "cloudflared"
        self.log = folder / "starts.jsonl"
        self.path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
        self.path.chmod(0o755)

    def starts(self) -> list[dict[str, object]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def alive(self) -> list[int]:
        """Pids of started fakes that are still running (zombies count as gone)."""
        out = []
        for start in self.starts():
            pid = int(str(start["pid"]))
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                out.append(pid)
        return out


@pytest.fixture
def cloudflared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCloudflared:
    """The fake cloudflared, named by OFFPROMPT_CLOUDFLARED, logging its starts."""
    fake = FakeCloudflared(tmp_path / "bin")
    monkeypatch.setenv("OFFPROMPT_CLOUDFLARED", str(fake.path))
    monkeypatch.setenv("FAKE_CLOUDFLARED_LOG", str(fake.log))
    return fake


def env_now() -> dict[str, str]:
    return dict(os.environ)
