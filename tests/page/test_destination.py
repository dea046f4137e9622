"""Where it writes: the file relative to the project, and its state before anything is written."""

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestRecord

from .conftest import path_of

MakeRequest = Callable[..., RequestRecord]


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


def states(body: str) -> list[str]:
    """The destination's state lines, as the person reads them."""
    block = re.search(r'<ul class="dest-state" id="dest-state">(.*?)</ul>', body, re.DOTALL)
    assert block is not None
    return re.findall(r"<li class=\"[a-z]+\">(.*?)</li>", block.group(1))


async def page(client: TestClient, req: RequestRecord) -> str:
    return await (await client.get(path_of(req))).text()


async def test_path_is_relative_with_the_full_path_on_hover(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """The file is shown relative to the project, its full path in the title attribute."""
    full = os.path.realpath(project) + "/config/.env.local"  # noqa: ASYNC240
    body = await page(client, make_request(sink=SinkSpec("dotenv", "config/.env.local")))
    assert f'Writes to <code dir="ltr" title="{full}">config/.env.local</code>' in body


async def test_project_folder_is_named_in_the_header(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """The project folder the request belongs to is shown under the heading."""
    body = await page(client, make_request())
    assert re.search(r'<p class="project">Project folder <code dir="ltr" title="[^"]+">', body)
    assert project.name in body


async def test_new_file(client: TestClient, make_request: MakeRequest) -> None:
    """A missing .env is announced as a new file, private to the person."""
    body = await page(client, make_request())
    assert states(body) == ["New file, readable and writable by you only."]


async def test_existing_file_without_the_keys(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """An existing .env without the keys: they are added and every other line is kept."""
    (project / ".env").write_text("OTHER=1\n")
    body = await page(client, make_request())
    assert states(body) == ["Exists. The keys are added to it; every other line is kept."]


async def test_existing_file_counts_keys_already_set_and_says_they_are_replaced(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """N of the asked keys already set: the count, and that they will be replaced."""
    (project / ".env").write_text("A_KEY=1\nB_KEY=2\nOTHER=3\nC_KEY=\n")
    req = make_request(SecretSpec("A_KEY"), SecretSpec("B_KEY"), SecretSpec("C_KEY"))
    body = await page(client, req)
    assert states(body) == [
        "Exists. 2 of these 3 (A_KEY, B_KEY) are already set there and will be replaced; "
        "every other line is kept."
    ]


async def test_each_field_already_set_says_it_will_be_replaced(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """Only the fields whose key the file holds carry the "will replace it" note."""
    (project / ".env").write_text("A_KEY=1\nC_KEY=\n")
    req = make_request(SecretSpec("A_KEY"), SecretSpec("B_KEY"), SecretSpec("C_KEY"))
    body = await page(client, req)
    notes = dict(re.findall(r'<p class="note" id="n-([A-Z_]+)">(.*?)</p>', body))
    assert list(notes) == ["A_KEY"]
    assert "what you put here will replace it" in notes["A_KEY"]


async def test_tracked_file_shows_the_state_and_the_override_checkbox(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """A tracked .env says so in the destination and shows the allow_tracked checkbox."""
    (project / ".env").write_text("")
    git(project, "init", "-q")
    git(project, "add", ".env")
    body = await page(client, make_request())
    assert "Tracked by git: what is written could be committed." in states(body)
    assert '<div class="tracked warn" id="tracked">' in body
    assert '<input type="checkbox" name="allow_tracked" value="1" id="allow-tracked">' in body


async def test_file_not_ignored_by_git_is_flagged(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """Inside a git repository, a .env that .gitignore does not cover is flagged."""
    git(project, "init", "-q")
    body = await page(client, make_request())
    assert "Not ignored by git: add .env to .gitignore so it is never committed." in states(body)


async def test_ignored_file_is_not_flagged(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """A .env covered by .gitignore gets no git line at all."""
    git(project, "init", "-q")
    (project / ".gitignore").write_text(".env\n")
    body = await page(client, make_request())
    assert [s for s in states(body) if "git" in s] == []


async def test_file_sink_says_the_whole_file_is_replaced(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """An existing file sink: its whole content will be replaced."""
    (project / "key.pem").write_text("old")
    body = await page(client, make_request(sink=SinkSpec("file", "key.pem")))
    assert states(body) == ["The file exists: its whole content will be replaced."]


@pytest.fixture
def read_only_project(project: Path) -> Iterator[Path]:
    """The project folder itself on a read-only tmpfs."""
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("needs root and mount(8) to make a real read-only file system")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(project)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {mounted.stderr.decode().strip()}")
    try:
        yield project
    finally:
        subprocess.run(["umount", "-l", str(project)], capture_output=True, check=False)


async def test_read_only_file_system_says_it_cannot_be_written(
    client: TestClient, make_request: MakeRequest, read_only_project: Path
) -> None:
    """On a read-only file system the page says, before any typing, that it cannot write."""
    body = await page(client, make_request())
    assert ".env cannot be written: the file system is read-only." in states(body)
