"""In a masked project every write keeps the file's inode (DESIGN §15 "Every process"): a
sandbox already running keeps the stand-in or denial it mounted over the file, which a rename
would take away. The keep folder exists from `init --mask` on and goes with the last mask.

Writes go through the real Submitter with the process's own mask keeper."""

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND
from click.testing import Result

from offprompt.collect.parts import mask_keeper
from offprompt.disk.walk import KEEP_NAME
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestStore
from offprompt.write.journal import Journal, default_path
from offprompt.write.submit import Submitter

Run = Callable[..., Result]


@pytest.fixture
def sandbox_programs(fake_program: Callable[[str], Path]) -> None:
    """bwrap and socat on PATH: what init --mask looks for on Linux."""
    fake_program("bwrap")
    fake_program("socat")


def write(project: Path, values: dict[str, str], sink: SinkSpec | None = None) -> None:
    async def go() -> None:
        store = RequestStore()
        request = store.create(
            tuple(SecretSpec(n) for n in values), sink or SinkSpec(), project, "the app", ttl=60
        )
        outcome = await Submitter(store, Journal(default_path()), mask=mask_keeper()).submit(
            request, values
        )
        assert outcome.mask_problem is None, outcome.mask_problem

    asyncio.run(go())


def init_mask(run: Run, agent: str, project: Path) -> Result:
    done = run(
        "init", "--agent", agent, "--mask", "--project", str(project), "--command", COMMAND
    )  # fmt: skip
    assert 0 == done.exit_code, done.output
    return done


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_masked_projects_files_keep_their_inode(
    run: Run, project: Path, sandbox_programs: None, canary: str, agent: str
) -> None:
    """Each later write, of a dotenv file and of a file sink, changes the file on its inode."""
    write(project, {"FIRST": "1"})
    write(project, {"KEY": "old"}, SinkSpec("file", "key.txt"))
    assert 0 == init_mask(run, agent, project).exit_code
    env, key = project / ".env", project / "key.txt"
    inodes = (env.stat().st_ino, key.stat().st_ino)

    write(project, {"API_KEY": canary})
    write(project, {"KEY": canary}, SinkSpec("file", "key.txt"))

    assert inodes == (env.stat().st_ino, key.stat().st_ino)
    assert f"FIRST=1\nAPI_KEY={canary}\n" == env.read_text()
    assert canary == key.read_text()
    assert not (project / KEEP_NAME).exists()


def test_an_unmasked_projects_file_is_replaced(project: Path, canary: str) -> None:
    """No mask: the rename it always was, and no keep folder."""
    write(project, {"FIRST": "1"})
    inode = (project / ".env").stat().st_ino
    write(project, {"API_KEY": canary})
    assert inode != (project / ".env").stat().st_ino
    assert not (project / KEEP_NAME).exists()


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_init_mask_makes_no_folder_in_the_project(
    run: Run, project: Path, sandbox_programs: None, agent: str
) -> None:
    """The undo records live in offprompt's state dir: init makes nothing in the project for
    them (nothing there a process the agent starts could read)."""
    assert 0 == init_mask(run, agent, project).exit_code

    assert not (project / KEEP_NAME).exists()


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_remove_mask_takes_away_an_emptied_keep_folder_an_earlier_version_made(
    run: Run, project: Path, sandbox_programs: None, agent: str
) -> None:
    """A keep folder from before (its copies moved out by the next write) goes with the mask;
    while another host still masks the project it stays (its denial may point at it)."""
    keep = project / KEEP_NAME
    keep.mkdir(mode=0o700)
    (keep / ".gitignore").write_text("*\n")
    assert 0 == init_mask(run, "claude-code", project).exit_code
    assert 0 == init_mask(run, "codex", project).exit_code
    other = "codex" if agent == "claude-code" else "claude-code"

    run("remove", "--agent", agent, "--mask", "--project", str(project))
    assert (keep / ".gitignore").exists()
    done = run("remove", "--agent", other, "--mask", "--project", str(project))

    assert 0 == done.exit_code, done.output
    assert not keep.exists()


# -- other dotenv files (DESIGN §15 "Every dotenv file in the project") ---------------------------


def claude_warnings(run: Run, project: Path) -> list[str]:
    result = run("agents", "--project", str(project), "--json")
    (item,) = [i for i in json.loads(result.stdout) if i["name"] == "claude-code"]
    assert "masked" == item["protection"], item
    return [w for w in item["warnings"] if "offprompt did not write" in w]


def test_agents_names_each_dotenv_file_the_mask_does_not_hide(
    run: Run, project: Path, sandbox_programs: None, canary: str
) -> None:
    """A `.env.local` another tool wrote, one in a subfolder, and the masked `.env` once a key
    is typed into it by hand: each named open; what offprompt wrote alone is not."""
    assert 0 == init_mask(run, "claude-code", project).exit_code
    write(project, {"API_KEY": canary})
    assert [] == claude_warnings(run, project)

    (project / ".env.local").write_text("PULLED=by-another-tool\n")
    (project / "apps" / "web").mkdir(parents=True)
    (project / "apps" / "web" / ".env").write_text("TYPED=by-hand\n")
    with (project / ".env").open("a") as f:
        f.write("HAND=typed\n")

    found = claude_warnings(run, project)

    assert [".env holds", ".env.local holds", "apps/web/.env holds"] == [
        w.split(" values")[0] for w in found
    ]
    assert all("Claude Code's sandbox shows them" in w for w in found)
    assert all(canary not in w for w in found)
