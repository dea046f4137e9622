"""`init --mask` and `remove --mask` for Claude Code (DESIGN §15), and every write keeping the mask
exact: the user settings' entries, the sandbox on for the project alone, and back byte for byte.

Writes go through the real Submitter into the project, as the page's and the terminal's do.
"""

import asyncio
import json
import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND, snapshot
from click.testing import Result
from dotenv import dotenv_values
from helpers import tool_or_skip

from offprompt.agents.mask.claude_entry import extract
from offprompt.collect.parts import mask_keeper
from offprompt.disk.walk import KEEP_NAME
from offprompt.spec import SecretSpec, SinkSpec, WriteOutcome
from offprompt.store import RequestRecord, RequestStore
from offprompt.tools.results import build
from offprompt.write.journal import Journal, default_path
from offprompt.write.submit import Submitter

Run = Callable[..., Result]
ENV_READ = "Read(./.env)"


@pytest.fixture
def sandbox_programs(fake_program: Callable[[str], Path]) -> None:
    """bwrap and socat on PATH: what init --mask looks for on Linux."""
    fake_program("bwrap")
    fake_program("socat")


def init_mask(run: Run, project: Path, *more: str) -> Result:
    return run(
        "init", "--agent", "claude-code", "--mask", "--project", str(project),
        "--command", COMMAND, *more,
    )  # fmt: skip


def settings(home: Path) -> dict[str, object]:
    return json.loads((home / ".claude" / "settings.json").read_text())


def local(project: Path) -> dict[str, object]:
    return json.loads((project / ".claude" / "settings.local.json").read_text())


def all_entries(home: Path) -> list[dict[str, object]]:
    sandbox = settings(home)["sandbox"]
    assert isinstance(sandbox, dict)
    return sandbox["credentials"]["files"]


def files_entries(home: Path) -> list[dict[str, object]]:
    """The mask entries (the keep folder's denial left out)."""
    return [e for e in all_entries(home) if e["mode"] == "mask"]


def undo_denial(home: Path) -> dict[str, object]:
    """The denial of the state dir's undo records (the conftest's OFFPROMPT_STATE_DIR)."""
    return {"path": os.path.join(os.path.realpath(home / "state"), KEEP_NAME), "mode": "deny"}


def keep_denial(project: Path) -> dict[str, object]:
    return {"path": os.path.join(os.path.realpath(project), KEEP_NAME), "mode": "deny"}


def write(
    project: Path, values: dict[str, str], sink: SinkSpec | None = None
) -> tuple[RequestRecord, WriteOutcome]:
    """One write through the real Submitter, as the page's and the terminal's are."""
    return asyncio.run(_write(project, values, sink))


async def _write(
    project: Path, values: dict[str, str], sink: SinkSpec | None
) -> tuple[RequestRecord, WriteOutcome]:
    store = RequestStore()
    request = store.create(
        tuple(SecretSpec(n) for n in values), sink or SinkSpec(), project, "the app", ttl=60
    )
    submitter = Submitter(store, Journal(default_path()), mask=mask_keeper())
    return request, await submitter.submit(request, values)


def openai_key(canary: str) -> str:
    return f"sk-proj-{canary}-{canary}"


def everything_but(home: Path, project: Path) -> dict[str, object]:
    """Every file of HOME and the project except the ones a write makes (.env, the journal)."""
    seen = snapshot(home, project)
    return {
        k: v
        for k, v in seen.items()
        if not k.startswith(str(home / "state")) and k != str(project / ".env")
    }


# -- init --mask ----------------------------------------------------------------------------------


def test_init_mask_turns_the_sandbox_on_for_this_project_alone(
    run: Run, project: Path, home: Path, sandbox_programs: None
) -> None:
    """TLS termination (an object) in the user settings, `sandbox.enabled` in the project's
    personal settings, the guard's hook there and none of its Read deny rules."""
    result = init_mask(run, project)

    assert 0 == result.exit_code, result.output
    assert {"network": {"tlsTerminate": {}}} == {
        k: v for k, v in settings(home)["sandbox"].items() if k != "credentials"
    }
    mine = local(project)
    assert {
        "enabled": True,
        "allowUnsandboxedCommands": False,
        "failIfUnavailable": True,
    } == mine["sandbox"]
    assert "PreToolUse" in mine["hooks"]
    assert "permissions" not in mine
    assert "claude-code: masked: 0 files offprompt wrote here" in result.output


def test_init_mask_that_fails_after_the_entry_and_guard_says_what_this_run_changed(
    run: Run, project: Path, home: Path, sandbox_programs: None
) -> None:
    """The user settings cannot be read, so no mask; the entry and the guard were added before,
    and a line says so, so the mask's "Nothing was changed" is not read as the whole run's."""
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text("{ not json")

    result = init_mask(run, project)

    assert 1 == result.exit_code
    (said,) = [line for line in result.stdout.splitlines() if "not masked, but" in line]
    assert said.startswith("claude-code: not masked, but this run added offprompt to ~/.claude")
    assert "added the guard to" in said
    assert "{ not json" == (home / ".claude" / "settings.json").read_text()


def test_init_mask_takes_out_the_deny_rules_an_earlier_init_added(
    run: Run, project: Path, sandbox_programs: None
) -> None:
    """Claude Code turns `Read(./.env)` into a sandbox denial that overrides a mask."""
    assert 0 == run("init", "--agent", "claude-code", "--project", str(project),
                    "--command", COMMAND).exit_code  # fmt: skip
    assert ENV_READ in local(project)["permissions"]["deny"]

    assert 0 == init_mask(run, project).exit_code

    assert "permissions" not in local(project)
    assert local(project)["hooks"]["PreToolUse"]


def test_init_mask_masks_the_files_offprompt_wrote_before(
    run: Run, project: Path, home: Path, sandbox_programs: None, canary: str
) -> None:
    """A write made before the mask gets its entry from the journal; the value is nowhere."""
    write(project, {"APP_TOKEN": canary})

    assert 0 == init_mask(run, project).exit_code

    assert [
        {
            "path": os.path.realpath(project / ".env"),
            "mode": "mask",
            "extract": extract(["APP_TOKEN"]),
            "injectHosts": [],
            "onExtractNoMatch": "deny",
        }
    ] == files_entries(home)
    assert_only_in_env(home, project, canary)


def test_init_mask_denies_no_keep_folder_unless_an_earlier_version_made_one(
    run: Run, project: Path, home: Path, sandbox_programs: None
) -> None:
    """A masked file's undo record lives in offprompt's state dir: init makes that folder
    (0700) and denies it (a sandboxed command runs as the person, who may read the state dir),
    and makes no folder in the project. Where an earlier version made `.offprompt-keep` (an
    undo copy may still be there until the next write moves it out), its denial stays."""
    assert 0 == init_mask(run, project).exit_code
    assert [undo_denial(home)] == all_entries(home)
    assert 0o700 == stat.S_IMODE((home / "state" / KEEP_NAME).stat().st_mode)
    assert not (project / KEEP_NAME).exists()

    (project / KEEP_NAME).mkdir(mode=0o700)
    assert 0 == init_mask(run, project).exit_code

    assert [undo_denial(home), keep_denial(project)] == all_entries(home)


def test_init_mask_without_bwrap_says_what_to_install_and_changes_nothing(
    run: Run, project: Path, home: Path, fake_program: Callable[[str], Path]
) -> None:
    fake_program("socat")
    before = snapshot(home, project)

    result = init_mask(run, project)

    assert 1 == result.exit_code
    assert "sudo apt-get install bubblewrap" in result.output
    assert "Nothing was changed" in result.output
    assert before == snapshot(home, project)


def test_mask_is_for_one_project(run: Run) -> None:
    result = run("init", "--agent", "claude-code", "--mask", "--global", "--command", COMMAND)

    assert 2 == result.exit_code
    assert "--mask is for one project" in result.output


# -- every write keeps it exact -------------------------------------------------------------------


def test_a_write_in_a_masked_project_adds_its_exact_entry(
    run: Run, project: Path, home: Path, sandbox_programs: None, canary: str
) -> None:
    """The entry names every key offprompt wrote in the file and its providers' API hosts."""
    assert 0 == init_mask(run, project).exit_code

    _, outcome = write(project, {"OPENAI_API_KEY": openai_key(canary)})
    (first,) = files_entries(home)
    write(project, {"OPENAI_ORG_ID": "org-" + canary})

    assert outcome.mask_problem is None
    assert ["api.openai.com"] == first["injectHosts"]
    (entry,) = files_entries(home)
    assert extract(["OPENAI_API_KEY", "OPENAI_ORG_ID"]) == entry["extract"]
    assert ["api.openai.com"] == entry["injectHosts"]
    # Claude Code refuses an injectHosts host its sandbox's network cannot reach.
    assert ["api.openai.com"] == settings(home)["sandbox"]["network"]["allowedDomains"]
    assert_only_in_env(home, project, canary)


def test_keys_of_two_providers_in_one_file_are_put_back_on_neither(
    run: Run, project: Path, home: Path, sandbox_programs: None, canary: str
) -> None:
    """Claude Code keeps one entry per file and puts each value it captures back on every host
    of the entry: an OpenAI key beside a GitHub token would reach GitHub's hosts and GitHub's
    token OpenAI's. So the file's entry names no host, and `agents` says which keys reach their
    provider only as stand-ins."""
    assert 0 == init_mask(run, project).exit_code

    write(project, {"OPENAI_API_KEY": openai_key(canary), "GITHUB_TOKEN": f"ghp_{canary}"})

    (entry,) = files_entries(home)
    assert extract(["GITHUB_TOKEN", "OPENAI_API_KEY"]) == entry["extract"]
    assert [] == entry["injectHosts"]
    layer, why = protection(run, project)
    assert "masked" == layer
    assert "; GITHUB_TOKEN, OPENAI_API_KEY reach their provider only as a stand-in" in why
    assert_only_in_env(home, project, canary)


def test_a_key_without_a_provider_keeps_every_value_of_its_file_from_every_host(
    run: Run, project: Path, home: Path, sandbox_programs: None, canary: str
) -> None:
    """A key whose provider is unknown is never put back anywhere, so the OpenAI key written
    beside it loses its host too (and `agents` says so); the OpenAI key alone in another file
    keeps it."""
    assert 0 == init_mask(run, project).exit_code

    write(project, {"OPENAI_API_KEY": openai_key(canary), "SESSION_SECRET": canary + "s"})
    write(project, {"OPENAI_API_KEY": openai_key(canary)}, SinkSpec(path=".env.local"))

    by_path = {Path(str(e["path"])).name: e["injectHosts"] for e in files_entries(home)}
    assert {".env": [], ".env.local": ["api.openai.com"]} == by_path
    _, why = protection(run, project)
    assert "; OPENAI_API_KEY reaches its provider only as a stand-in" in why


def test_a_mask_from_before_the_keep_folder_is_brought_up_to_date_by_the_next_write(
    run: Run, project: Path, home: Path, sandbox_programs: None, canary: str
) -> None:
    """A mask an older offprompt made (record without `version`, its entry's hosts the union
    of its keys' providers, no denial of the keep folder): `agents` says it does not hold, and
    the next write, even of a key already there, rewrites every entry of the project."""
    (project / KEEP_NAME).mkdir(mode=0o700)  # an earlier version made it
    assert 0 == init_mask(run, project).exit_code
    write(project, {"OPENAI_API_KEY": openai_key(canary), "GITHUB_TOKEN": f"ghp_{canary}"})
    path = home / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    data["sandbox"]["credentials"]["files"] = [
        {**files_entries(home)[0], "injectHosts": ["api.github.com", "api.openai.com"]}
    ]
    path.write_text(json.dumps(data))
    record = home / "state" / "mask.json"
    old = json.loads(record.read_text())
    for mine in old["projects"].values():
        del mine["version"]
    record.write_text(json.dumps(old))
    layer, why = protection(run, project)
    assert "masked" != layer
    assert "does not deny" in why

    write(project, {"OPENAI_API_KEY": openai_key(canary) + "2"})

    assert keep_denial(project) in all_entries(home)
    (entry,) = files_entries(home)
    assert [] == entry["injectHosts"]
    assert "masked" == protection(run, project)[0]


def test_a_file_sinks_entry_masks_the_whole_file(
    run: Run, project: Path, home: Path, sandbox_programs: None, canary: str
) -> None:
    assert 0 == init_mask(run, project).exit_code

    write(project, {"SERVICE_ACCOUNT": canary}, SinkSpec(kind="file", path="key.json"))

    (entry,) = files_entries(home)
    assert {"path": os.path.realpath(project / "key.json"), "mode": "mask",
            "injectHosts": []} == entry  # fmt: skip


def test_a_write_elsewhere_leaves_the_mask_alone(
    run: Run, project: Path, tmp_path: Path, home: Path, sandbox_programs: None, canary: str
) -> None:
    assert 0 == init_mask(run, project).exit_code
    other = tmp_path / "other"
    other.mkdir()
    before = settings(home)

    write(other, {"APP_TOKEN": canary})

    assert before == settings(home)


def test_a_write_that_cannot_update_its_entry_says_so_and_stands(
    run: Run, project: Path, home: Path, sandbox_programs: None, canary: str
) -> None:
    """The file is written (the person is not asked again); the result tells them the mask
    is behind, and the value is in no part of it."""
    assert 0 == init_mask(run, project).exit_code
    (home / ".claude" / "settings.json").write_text("{ not json")

    request, outcome = write(project, {"APP_TOKEN": canary})

    assert canary == dotenv_values(project / ".env")["APP_TOKEN"]
    assert outcome.mask_problem is not None
    assert "init --mask" in outcome.mask_problem
    result = build(request, url=None, expires_in=0, opened=False).structured
    assert isinstance(result, dict)
    assert outcome.mask_problem in result["note"]
    assert canary not in json.dumps(result)


# -- remove --mask ------------------------------------------------------------------------------


PERSONS_SETTINGS = """{
  "model": "opus",
  "sandbox": {
    "network": {"allowedDomains": ["example.com"]},
    "credentials": {"files": [{"path": "~/.netrc", "mode": "deny"}]}
  }
}
"""


@pytest.mark.parametrize(
    "theirs",
    [None, PERSONS_SETTINGS, PERSONS_SETTINGS.replace("example.com", "api.openai.com"),
     '{"sandbox": {}}\n'],
    ids=["none", "their own sandbox", "their own allowed host", "an empty sandbox"],
)  # fmt: skip
def test_remove_mask_gives_back_every_file_byte_for_byte(
    run: Run,
    project: Path,
    home: Path,
    sandbox_programs: None,
    no_agent_env: Path,
    canary: str,
    theirs: str | None,
) -> None:
    """Init, writes of two files, remove: the user settings and the project as they were (the
    person's own sandbox settings, untouched), in a repository (init makes git ignore the
    personal settings file, and remove takes that line out again)."""
    (no_agent_env / "git").symlink_to("/usr/bin/git")
    subprocess.run(["/usr/bin/git", "init", "-q", str(project)], check=True)
    if theirs is not None:
        (home / ".claude").mkdir()
        (home / ".claude" / "settings.json").write_text(theirs)
    before = everything_but(home, project)

    assert 0 == init_mask(run, project).exit_code
    write(project, {"OPENAI_API_KEY": openai_key(canary)})
    write(project, {"OTHER": canary + "x"}, SinkSpec(kind="file", path="key.pem"))
    assert "api.openai.com" in settings(home)["sandbox"]["network"]["allowedDomains"]
    assert 2 == len([e for e in files_entries(home) if e["mode"] == "mask"])
    (project / "key.pem").unlink()
    result = run("remove", "--agent", "claude-code", "--mask", "--project", str(project))

    assert 0 == result.exit_code, result.output
    assert before == everything_but(home, project)
    assert "took the mask out" in result.output


def test_remove_mask_keeps_another_projects_mask(
    run: Run, project: Path, tmp_path: Path, home: Path, sandbox_programs: None, canary: str
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    assert 0 == init_mask(run, project).exit_code
    assert 0 == init_mask(run, other).exit_code
    write(project, {"APP_TOKEN": canary})
    write(other, {"APP_TOKEN": canary + "o"})

    assert (
        0 == run("remove", "--agent", "claude-code", "--mask", "--project", str(project)).exit_code
    )

    (left,) = files_entries(home)
    assert os.path.realpath(other / ".env") == left["path"]
    assert {} == settings(home)["sandbox"]["network"]["tlsTerminate"]


def test_remove_mask_without_the_guard_leaves_no_empty_claude_folder(
    run: Run, project: Path, home: Path, sandbox_programs: None
) -> None:
    """`init --mask --no-guard` made .claude/ for settings.local.json alone: `remove --mask
    --no-guard` takes the folder out with the file, as the guard's remove does."""
    before = snapshot(project)
    assert 0 == init_mask(run, project, "--no-guard").exit_code
    assert (project / ".claude" / "settings.local.json").is_file()

    result = run(
        "remove", "--agent", "claude-code", "--mask", "--no-guard", "--project", str(project)
    )

    assert 0 == result.exit_code, result.output
    assert before == snapshot(project)


# -- the pattern, run as Claude Code runs it ------------------------------------------------------

# Claude Code 2.1.328's masking (its function over `extract`): RegExp(extract, "gd"), each
# match's group 1 replaced by a stand-in, an undefined group 1 an error, an empty one skipped.
MASK_JS = r"""
const fs = require("fs");
const [pattern, file] = process.argv.slice(2);
const text = fs.readFileSync(file, "utf8");
let out = "", at = 0;
for (const m of text.matchAll(new RegExp(pattern, "gd"))) {
  if (m[1] === undefined) throw new Error("group 1 undefined");
  if (m[1].length === 0) continue;
  const [start, end] = m.indices[1];
  out += text.slice(at, start) + "fake_value_" + m.index;
  at = end;
}
process.stdout.write(out + text.slice(at));
"""


def test_the_extract_masks_exactly_each_value_in_node(
    project: Path, canary: str, tmp_path: Path
) -> None:
    """Values in each form offprompt writes (bare, single-quoted with blanks and a line break,
    double-quoted with a `'`) among the person's own lines: the masked copy holds no part of
    them, and reads the same as the file everywhere else."""
    node = tool_or_skip("node22")
    (project / ".env").write_text("# mine\nDEBUG=1\nexport TOKENISH=keep-me\n")
    values = {
        "BARE": canary,
        "SPACED": f"{canary} two\nlines",
        "QUOTE": f"it's-{canary}",
        "EMPTYISH": f"a#{canary}",
    }
    write(project, values)
    script = tmp_path / "mask.js"
    script.write_text(MASK_JS)

    masked = subprocess.run(
        [node, str(script), extract(values), str(project / ".env")],
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout  # fmt: skip

    assert canary[7:] not in masked
    copy = tmp_path / "masked.env"
    copy.write_text(masked)
    read = dotenv_values(copy)
    assert ("1", "keep-me") == (read["DEBUG"], read["TOKENISH"])
    assert all(read[name].startswith("fake_value_") for name in values), read


def assert_only_in_env(home: Path, project: Path, canary: str) -> None:
    """The canary is in the project's .env and in no other file under HOME or the project."""
    for root in (home, project):
        for path in root.rglob("*"):
            if path.is_file() and path != project / ".env":
                assert canary.encode() not in path.read_bytes(), path


# -- offprompt agents -----------------------------------------------------------------------------


def protection(run: Run, project: Path) -> tuple[str, str]:
    result = run("agents", "--project", str(project), "--json")
    (item,) = [i for i in json.loads(result.stdout) if i["name"] == "claude-code"]
    return item["protection"], item["protection_why"]


def test_agents_says_masked_and_where(
    run: Run, project: Path, sandbox_programs: None, canary: str
) -> None:
    assert 0 == init_mask(run, project).exit_code
    write(project, {"APP_TOKEN": canary})

    layer, why = protection(run, project)

    assert "masked" == layer
    assert why.startswith("masked by ~/.claude/settings.json (the sandbox on in "), why


@pytest.mark.parametrize(
    "breaks", ["sandbox off", "a way out", "not required", "entry gone", "no bwrap"]
)
def test_agents_says_why_a_mask_does_not_hold(
    run: Run, project: Path, home: Path, sandbox_programs: None, no_agent_env: Path, breaks: str,
    canary: str,
) -> None:  # fmt: skip
    assert 0 == init_mask(run, project).exit_code
    write(project, {"APP_TOKEN": canary})
    if breaks == "sandbox off":
        path = project / ".claude" / "settings.local.json"
        path.write_text(path.read_text().replace('"enabled": true', '"enabled": false'))
    elif breaks == "a way out":
        path = project / ".claude" / "settings.local.json"
        text = path.read_text()
        path.write_text(text.replace('"allowUnsandboxedCommands": false', '"x": 1'))
    elif breaks == "not required":
        path = project / ".claude" / "settings.local.json"
        path.write_text(path.read_text().replace('"failIfUnavailable": true', '"y": 1'))
    elif breaks == "entry gone":
        path = home / ".claude" / "settings.json"
        data = json.loads(path.read_text())
        data["sandbox"]["credentials"]["files"] = []
        path.write_text(json.dumps(data))
    else:
        (no_agent_env / "bwrap").unlink()

    layer, why = protection(run, project)

    assert "masked" != layer
    assert "the mask does not hold: " in why


def test_init_mask_points_out_a_read_rule_of_the_persons_that_overrides_it(
    run: Run, project: Path, home: Path, sandbox_programs: None
) -> None:
    """A `Read(./.env)` deny rule of the person's own turns the mask into a denial: said, and
    left where it is (it is theirs)."""
    (home / ".claude").mkdir()
    theirs = '{"permissions": {"deny": ["Read(./.env)"]}}\n'
    (home / ".claude" / "settings.json").write_text(theirs)

    result = init_mask(run, project)

    assert 0 == result.exit_code
    assert "note: Read(./.env) in ~/.claude/settings.json makes Claude Code's sandbox deny" in (
        result.output
    )
    assert ["Read(./.env)"] == settings(home)["permissions"]["deny"]


def test_init_mask_without_the_guard_says_what_is_left_open(
    run: Run, project: Path, home: Path, sandbox_programs: None
) -> None:
    result = init_mask(run, project, "--no-guard")

    assert 0 == result.exit_code
    assert "nothing stops Claude Code's own Read and Grep tools" in result.output
    assert "hooks" not in local(project)
    assert {
        "network": {"tlsTerminate": {}},
        "credentials": {"files": [undo_denial(home)]},
    } == settings(home)["sandbox"]


@pytest.mark.parametrize("comment", ["# ", "#", "  # ", "## "])
def test_the_extract_masks_a_value_the_person_commented_out_in_node(
    project: Path, canary: str, tmp_path: Path, comment: str
) -> None:
    """The person comments out the line offprompt wrote (`# OPENAI_API_KEY=<old>`) and writes
    a new value: the old one, on its commented line, is masked as well as the new one."""
    node = tool_or_skip("node22")
    old, new = f"sk-proj-{canary}-old", f"sk-proj-{canary[::-1]}"
    write(project, {"OPENAI_API_KEY": old, "QUOTED": f"it's {canary}"})
    text = (project / ".env").read_text()
    commented = text.replace("OPENAI_API_KEY=", f"{comment}OPENAI_API_KEY=").replace(
        "QUOTED=", f"{comment}export QUOTED="
    )
    (project / ".env").write_text(commented)
    write(project, {"OPENAI_API_KEY": new})
    assert f"{comment}OPENAI_API_KEY={old}" in (project / ".env").read_text()
    script = tmp_path / "mask.js"
    script.write_text(MASK_JS)

    masked = subprocess.run(
        [node, str(script), extract(["OPENAI_API_KEY", "QUOTED"]), str(project / ".env")],
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout  # fmt: skip

    assert canary[7:] not in masked
    assert canary[::-1][:20] not in masked
    assert f"{comment}OPENAI_API_KEY=fake_value_" in masked
