"""`init --mask` and `remove --mask` for Codex (DESIGN §15): Codex masks no file, so offprompt
denies them with a permissions profile in the project's `.codex/config.toml`; back byte for
byte, never over the person's own profile, kept up to date by later writes. The profile is
proven in real Codex by tests/real_hosts/test_codex_mask.py."""

import asyncio
import json
import os
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND, snapshot
from click.testing import Result

from offprompt.agents.mask.codex import covered
from offprompt.collect.parts import mask_keeper
from offprompt.guard.protected import DOTENV_NAMES
from offprompt.spec import SecretSpec, SinkSpec, WriteOutcome
from offprompt.store import RequestStore
from offprompt.write.journal import Journal, default_path
from offprompt.write.submit import Submitter

Run = Callable[..., Result]


# The usual dotenv names at every depth and offprompt's staging copies, by Codex's deny globs.
EVERY_DEPTH = (
    "**/.env", "**/.env.local", "**/.env.development", "**/.env.production", "**/.env.staging",
    "**/.env.test", "**/.env.*.local",
    "**/.offprompt-*", "**/.offprompt-*/**", "**/.*.offprompt-*.tmp",
)  # fmt: skip


def init_mask(run: Run, project: Path) -> Result:
    return run(
        "init", "--agent", "codex", "--mask", "--project", str(project), "--command", COMMAND
    )


def remove_mask(run: Run, project: Path) -> Result:
    return run("remove", "--agent", "codex", "--mask", "--project", str(project))


def config(project: Path) -> dict[str, object]:
    return tomllib.loads((project / ".codex" / "config.toml").read_text())


def denied(project: Path) -> dict[str, str]:
    profile = config(project)["permissions"]["offprompt"]  # type: ignore[index]
    return profile["filesystem"][":workspace_roots"]


def write(project: Path, values: dict[str, str], sink: SinkSpec | None = None) -> WriteOutcome:
    async def go() -> WriteOutcome:
        store = RequestStore()
        request = store.create(
            tuple(SecretSpec(n) for n in values), sink or SinkSpec(), project, "the app", ttl=60
        )
        submitter = Submitter(store, Journal(default_path()), mask=mask_keeper())
        return await submitter.submit(request, values)

    return asyncio.run(go())


def test_init_mask_denies_the_dotenv_names_and_what_offprompt_wrote(
    run: Run, project: Path, canary: str
) -> None:
    write(project, {"APP_TOKEN": canary}, SinkSpec(kind="file", path="keys/app.json"))

    result = init_mask(run, project)

    assert 0 == result.exit_code, result.output
    assert "codex: denied, not masked" in result.output
    assert "offprompt" == config(project)["default_permissions"]
    assert {
        **dict.fromkeys(DOTENV_NAMES, "deny"),
        **dict.fromkeys(EVERY_DEPTH, "deny"),
        "keys/app.json": "deny",
    } == denied(project)
    assert ":workspace" == config(project)["permissions"]["offprompt"]["extends"]  # type: ignore[index]
    assert canary.encode() not in (project / ".codex" / "config.toml").read_bytes()


def test_the_dotenv_names_and_staging_copies_are_denied_at_every_depth(
    run: Run, project: Path
) -> None:
    """Codex reads its profile once: a `.env` made later in a subfolder, or a write's staging
    folder, is denied by glob from the start, the scan's depth capped as Codex asks on Linux."""
    assert 0 == init_mask(run, project).exit_code

    profile = config(project)["permissions"]["offprompt"]  # type: ignore[index]

    assert set(EVERY_DEPTH) <= set(denied(project))
    assert 6 == profile["filesystem"]["glob_scan_max_depth"]


def test_a_profile_from_before_the_globs_gains_them_with_the_next_write(
    run: Run, project: Path, canary: str
) -> None:
    assert 0 == init_mask(run, project).exit_code
    path = project / ".codex" / "config.toml"
    lines = path.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(('"**/', "glob_scan_max_depth"))]
    assert len(lines) - len(kept) == len(EVERY_DEPTH) + 1
    path.write_text("".join(kept))
    assert not set(EVERY_DEPTH) & set(denied(project))

    write(project, {"API_TOKEN": canary})

    assert set(EVERY_DEPTH) <= set(denied(project))


def records_folder() -> str:
    return str(Path(os.path.realpath(default_path().parent)) / ".offprompt-keep")


def test_a_profile_from_before_the_records_folder_is_not_denied_until_the_next_write(
    run: Run, project: Path, canary: str
) -> None:
    """init denies the state dir's undo records folder by its absolute path (made 0700); a
    profile without that entry is reported as not denying, and the next write puts it back and
    says a running Codex reads the entry only once it restarts (Codex reads its profile at
    start); the write after says nothing."""
    assert 0 == init_mask(run, project).exit_code
    folder = records_folder()
    path = project / ".codex" / "config.toml"
    entry = f'"{folder}" = "deny"\n'
    assert entry in path.read_text()
    assert 0o700 == os.stat(folder).st_mode & 0o777
    path.write_text(path.read_text().replace(entry, ""))

    result = run("agents", "--project", str(project), "--json")
    (codex,) = [i for i in json.loads(result.stdout) if i["name"] == "codex"]
    assert codex["protection_why"].startswith("not denied:")
    assert folder in codex["protection_why"]

    gained = write(project, {"API_TOKEN": canary})
    again = write(project, {"API_TOKEN": canary + "-2"})

    assert entry in path.read_text()
    assert gained.mask_problem is not None
    assert gained.mask_problem.startswith(RESTART.format(folder))
    assert None is again.mask_problem
    assert canary not in gained.mask_problem


def test_a_later_write_is_denied_too(run: Run, project: Path, canary: str) -> None:
    assert 0 == init_mask(run, project).exit_code

    write(project, {"CERT": canary}, SinkSpec(kind="file", path="cert.pem"))

    assert "deny" == denied(project)["cert.pem"]


RESTART = "Codex denies {} to its commands only once it restarts"


def test_a_file_sink_new_to_the_profile_says_codex_must_restart(
    run: Run, project: Path, canary: str
) -> None:
    """Codex reads the profile when it starts: a file sink's path no entry or glob denied yet
    is added, and the result says a running Codex can read it until it restarts; the next write
    there, and a write to a `.env` the globs cover, say nothing."""
    assert 0 == init_mask(run, project).exit_code
    sink = SinkSpec(kind="file", path="config/key.pem")

    first = write(project, {"CERT": canary}, sink)
    again = write(project, {"CERT": canary + "-2"}, sink)
    nested = write(project, {"APP_TOKEN": canary + "-3"}, SinkSpec(path="apps/web/.env"))

    assert first.mask_problem is not None
    assert first.mask_problem.startswith(RESTART.format("config/key.pem"))
    assert (None, None) == (again.mask_problem, nested.mask_problem)
    assert "deny" == denied(project)["config/key.pem"]


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        (".env", True),
        ("apps/web/.env", True),
        ("a/b/c/d/e/.env.local", True),
        ("a/b/c/d/e/f/.env", False),  # deeper than glob_scan_max_depth
        ("apps/.env.prod.local", True),
        (".offprompt-keep/x", True),
        ("a/.offprompt-ab12/.env.tmp", True),
        ("config/.env.example", False),
        ("config/key.pem", False),
        ("x.env", False),
    ],
)
def test_which_paths_the_profiles_globs_cover(rel: str, expected: bool) -> None:
    """`**/` stands for any number of folders (none too), `*` for part of one name."""
    assert expected == covered(rel, EVERY_DEPTH)


def test_network_the_person_had_stays_on(run: Run, project: Path, home: Path) -> None:
    """A custom profile ignores `[sandbox_workspace_write] network_access` (measured)."""
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        "[sandbox_workspace_write]\nnetwork_access = true\n"
    )

    assert 0 == init_mask(run, project).exit_code

    assert {"enabled": True} == config(project)["permissions"]["offprompt"]["network"]  # type: ignore[index]


def test_another_profile_of_the_projects_is_left_alone(run: Run, project: Path) -> None:
    (project / ".codex").mkdir()
    theirs = 'default_permissions = "strict"\n\n[permissions.strict]\nextends = ":read-only"\n'
    (project / ".codex" / "config.toml").write_text(theirs)

    result = init_mask(run, project)

    assert 1 == result.exit_code
    assert "already makes Codex use its permissions profile 'strict'" in result.output
    assert theirs == (project / ".codex" / "config.toml").read_text()


@pytest.mark.parametrize(
    "theirs",
    [None, 'model = "gpt-5"\n', '# mine\nmodel = "gpt-5"\n\n[mcp_servers.x]\ncommand = "y"\n',
     '[a]\r\nb = 1\r\n', '[a]\nb = 1\n\n\n'],
    ids=["no file", "a key", "a table and comments", "CRLF", "blank lines at the end"],
)  # fmt: skip
def test_remove_mask_gives_back_the_project_byte_for_byte(
    run: Run, project: Path, canary: str, theirs: str | None
) -> None:
    if theirs is not None:
        (project / ".codex").mkdir()
        (project / ".codex" / "config.toml").write_bytes(theirs.encode())
    before = snapshot(project)

    assert 0 == init_mask(run, project).exit_code
    write(project, {"CERT": canary}, SinkSpec(kind="file", path="cert.pem"))
    (project / "cert.pem").unlink()
    result = remove_mask(run, project)

    assert 0 == result.exit_code, result.output
    assert "codex: took the denial out" in result.output
    after = {k: v for k, v in snapshot(project).items() if not k.endswith("/.env")}
    assert before == after


def test_agents_says_denied_not_masked(run: Run, project: Path) -> None:
    assert 0 == init_mask(run, project).exit_code

    result = run("agents", "--project", str(project), "--json")
    (codex,) = [i for i in json.loads(result.stdout) if i["name"] == "codex"]

    assert codex["protection"] != "masked"
    assert codex["protection_why"].startswith("denied, not masked: 6 files unreadable")


def test_a_write_beside_a_broken_codex_config_that_is_not_ours_says_nothing(
    project: Path, canary: str
) -> None:
    """A project's own .codex/config.toml, even one Codex could not read, is no mask: the
    write's result carries no mask problem."""
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text("model = \n")

    async def go() -> object:
        store = RequestStore()
        request = store.create((SecretSpec("APP_TOKEN"),), SinkSpec(), project, "r", ttl=60)
        return await Submitter(store, Journal(default_path()), mask=mask_keeper()).submit(
            request, {"APP_TOKEN": canary}
        )

    outcome = asyncio.run(go())

    assert outcome.mask_problem is None  # type: ignore[attr-defined]


def init_claude_mask(run: Run, project: Path) -> Result:
    return run(
        "init", "--agent", "claude-code", "--mask", "--project", str(project),
        "--command", COMMAND,
    )  # fmt: skip


@pytest.mark.parametrize("first", ["codex", "claude-code"])
def test_the_records_folder_stays_while_another_mask_denies_it(
    run: Run, project: Path, tmp_path: Path, first: str, fake_program: Callable[[str], Path]
) -> None:
    """The undo records' folder is one for every masked project of every host, and a Codex
    profile denies it only when it exists as Codex starts (tests/real_hosts/
    test_codex_mask_undo.py): taking one project's mask out, Codex's or Claude Code's last,
    leaves it for the other project's Codex, whose next command must still be denied it."""
    fake_program("bwrap")  # what init --mask looks for on Linux for Claude Code's sandbox
    fake_program("socat")
    other = tmp_path / "other"
    other.mkdir()
    assert 0 == init_mask(run, other).exit_code
    init = init_mask if first == "codex" else init_claude_mask
    assert 0 == init(run, project).exit_code, "the mask of the project taken out below"
    folder = records_folder()
    assert f'"{folder}" = "deny"' in (other / ".codex" / "config.toml").read_text()

    taken = run("remove", "--agent", first, "--mask", "--project", str(project))

    assert 0 == taken.exit_code, taken.output
    assert os.path.isdir(folder)
    assert 0o700 == os.stat(folder).st_mode & 0o777
