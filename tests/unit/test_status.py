"""secret_status's answer (DESIGN §12): which names, which status, which check; never a value."""

import json
import os
import re
import secrets
import subprocess
from pathlib import Path

import jsonschema
import pytest
from helpers import assert_no_part

from offprompt import schema, status
from offprompt.errors import RefusedRequest, Unreadable
from offprompt.tools import schemas

STRIPE_SECRET_HINT = (
    "looks like the Stripe publishable key; the Stripe secret key starts with sk_live_ or "
    "sk_test_ (rk_ for a restricted key)"
)


def answer(project: Path, path: str = ".env", names: list[str] | None = None) -> dict[str, object]:
    """The JSON the tool answers, checked against its output schema."""
    out = status.report(project, path, names).to_json()
    assert list(schema.errors(schemas.status_output(), out)) == []
    jsonschema.validate(out, schemas.status_output())
    return out


def statuses(out: dict[str, object]) -> dict[str, str]:
    keys = out["keys"]
    assert isinstance(keys, list)
    return {k["name"]: k["status"] for k in keys}


def dumped(out: dict[str, object]) -> str:
    return json.dumps(out, ensure_ascii=False)


def test_names_given_are_answered_in_their_order(project: Path, canary: str) -> None:
    """names decide which keys and in what order; an unassigned one is missing."""
    (project / ".env").write_text(f"B_KEY={canary}\nOTHER={canary}x\nA_KEY=\n")
    (project / ".env.example").write_text("ZED=\n")

    out = answer(project, names=["C_KEY", "B_KEY", "A_KEY"])

    assert [k["name"] for k in out["keys"]] == ["C_KEY", "B_KEY", "A_KEY"]  # type: ignore[attr-defined,index]
    assert statuses(out) == {"C_KEY": "missing", "B_KEY": "set", "A_KEY": "empty"}
    assert out["missing"] == ["C_KEY", "A_KEY"]
    assert (out["file"], out["exists"], out["example"]) == (".env", True, ".env.example")
    assert_no_part(canary, dumped(out))


@pytest.mark.parametrize(
    ("present", "chosen"),
    [
        ((".env.example", ".env.sample", ".env.template", ".env.dist"), ".env.example"),
        ((".env.sample", ".env.template", ".env.dist"), ".env.sample"),
        ((".env.template", ".env.dist"), ".env.template"),
        ((".env.dist",), ".env.dist"),
    ],
)
def test_the_first_example_file_names_the_keys(
    project: Path, canary: str, present: tuple[str, ...], chosen: str
) -> None:
    """Without names, the keys are those of the first of .env.example, .env.sample,
    .env.template, .env.dist; the others are not read."""
    for name in present:
        key = name.removeprefix(".env.").upper() + "_KEY"
        (project / name).write_text(f"{key}=\nSHARED=\n")
    (project / ".env").write_text(f"SHARED={canary}\nONLY_IN_ENV={canary}\n")

    out = answer(project)

    expected = chosen.removeprefix(".env.").upper() + "_KEY"
    assert out["example"] == chosen
    assert statuses(out) == {expected: "missing", "SHARED": "set"}
    assert_no_part(canary, dumped(out))


def test_the_example_beside_the_target_is_used(project: Path, canary: str) -> None:
    """For cfg/.env, the example is cfg/.env.example, not the project root's."""
    (project / ".env.example").write_text("ROOT_KEY=\n")
    (project / "cfg").mkdir()
    (project / "cfg" / ".env.example").write_text("CFG_KEY=\n")
    (project / "cfg" / ".env").write_text(f"CFG_KEY={canary}\n")

    out = answer(project, "cfg/.env")

    assert (out["file"], out["example"]) == ("cfg/.env", "cfg/.env.example")
    assert statuses(out) == {"CFG_KEY": "set"}
    assert_no_part(canary, dumped(out))


def test_without_example_the_targets_own_keys_are_answered(project: Path, canary: str) -> None:
    """No example file: every key the target assigns, in file order. (A bare `KEY` line is no
    assignment: DESIGN §12 then shows the file by its name alone; see test_status_names.py.)"""
    (project / ".env").write_text(f"FIRST={canary}\nSECOND=\nexport THIRD='{canary}'\n")

    out = answer(project)

    assert out["example"] is None
    assert statuses(out) == {"FIRST": "set", "SECOND": "empty", "THIRD": "set"}
    assert out["missing"] == ["SECOND"]
    assert_no_part(canary, dumped(out))


def test_a_bare_key_line_shows_the_file_alone(project: Path) -> None:
    """`KEY` alone is no assignment, comment or blank (a bare base32 seed looks the same), so
    DESIGN §12 shows the file by its name alone, named keys or not (was: `missing`)."""
    (project / ".env").write_text("API_KEY\n")

    assert statuses(answer(project, names=["API_KEY"])) == {".env": "set"}


PLACEHOLDERS = [
    "changeme",
    "CHANGEME",
    "change-me",
    "Change-Me",
    "replace-me",
    "REPLACE-ME",
    "replace_me",
    "Replace_Me",
    "your_api_key_here",
    "YOUR-KEY-HERE",
    "yourkeyhere",
    "your-stripe-key",
    "Your-Token",
    "<your key>",
    "<API_KEY>",
    "x",
    "xxxxxxxx",
    "XXXX",
    "todo",
    "TODO",
    "placeholder",
    "PlaceHolder",
    "dummy",
    "DUMMY",
    "example",
    "Example",
]


@pytest.mark.parametrize("stand_in", PLACEHOLDERS)
def test_each_usual_stand_in_is_a_placeholder(project: Path, stand_in: str) -> None:
    """The stand-ins of DESIGN §12, whatever their case, are placeholders, not set."""
    (project / ".env").write_text(f'API_KEY="{stand_in}"\n')

    out = answer(project)

    assert statuses(out) == {"API_KEY": "placeholder"}
    assert out["missing"] == ["API_KEY"]


@pytest.mark.parametrize(
    "real",
    ["examples", "xyz", "my-changeme-key", "yours", "todos", "<tag", "your_key", "dummy1"],
)
def test_values_near_a_stand_in_are_set(project: Path, real: str) -> None:
    """Only the whole value counts: a value holding a stand-in word is set."""
    (project / ".env").write_text(f"API_KEY={real}\n")

    assert statuses(answer(project)) == {"API_KEY": "set"}


def test_a_committed_guess_in_the_example_is_never_compared(project: Path) -> None:
    """The agent commits `.env.example` with `DB_PIN=<guess>` equal to the real value: the
    example names keys and is never compared with a value (DESIGN §12), so the answer is
    `set`, never `placeholder` (was: the committed value made a placeholder)."""
    pin = "7" + secrets.token_hex(8)  # a unique canary, no usual stand-in
    (project / ".env.example").write_text(f"DB_PIN={pin}\nOTHER_KEY={pin}\n")
    git_commit(project, ".env.example")
    (project / ".env").write_text(f"DB_PIN={pin}\nOTHER_KEY={pin}-real\n")

    out = answer(project)

    assert statuses(out) == {"DB_PIN": "set", "OTHER_KEY": "set"}
    assert_no_part(pin, dumped(out))


def git_commit(project: Path, *files: str) -> None:
    """`project` as a git repository with `files` committed."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for args in (["init", "-q"], ["add", "--", *files], ["commit", "-qm", "example"]):
        subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)


def test_an_untracked_examples_value_is_no_placeholder(project: Path, canary: str) -> None:
    """An agent cannot test a guess by writing it into an untracked .env.example: only the
    usual stand-ins make a placeholder there."""
    (project / ".env").write_text(f"API_KEY={canary}\nTOKEN=changeme\n")
    (project / ".env.example").write_text(f"API_KEY={canary}\nTOKEN=\n")

    assert statuses(answer(project)) == {"API_KEY": "set", "TOKEN": "placeholder"}


def test_a_tracked_example_is_compared_in_no_version(project: Path, canary: str) -> None:
    """Neither the committed example's value nor the working copy's makes a placeholder (was:
    the committed one did), so no edit or commit of .env.example tests a guess."""
    (project / ".env.example").write_text("API_KEY=sk_from_the_template\nOTHER=\n")
    git_commit(project, ".env.example")
    (project / ".env").write_text(f"API_KEY=sk_from_the_template\nOTHER={canary}\n")
    assert statuses(answer(project)) == {"API_KEY": "set", "OTHER": "set"}

    (project / ".env.example").write_text(f"API_KEY=sk_from_the_template\nOTHER={canary}\n")
    out = answer(project)
    assert statuses(out) == {"API_KEY": "set", "OTHER": "set"}
    assert_no_part(canary, dumped(out))


def test_an_empty_example_value_makes_nothing_a_placeholder(project: Path, canary: str) -> None:
    """The example's value counts only when it is not empty."""
    (project / ".env.example").write_text("API_KEY=\n")
    (project / ".env").write_text(f"API_KEY={canary}\n")

    assert statuses(answer(project)) == {"API_KEY": "set"}


@pytest.mark.parametrize("line", ["API_KEY=", 'API_KEY=""', "API_KEY=''", "API_KEY='   '"])
def test_an_empty_value_is_empty(project: Path, line: str) -> None:
    """An empty (or blank) value is empty."""
    (project / ".env").write_text(line + "\n")

    out = answer(project, names=["API_KEY"])

    assert statuses(out) == {"API_KEY": "empty"}
    assert out["missing"] == ["API_KEY"]


def test_a_missing_file_is_exists_false_and_every_name_missing(project: Path) -> None:
    """No target file: exists false, and each name (here from the example) missing."""
    (project / ".env.example").write_text("A_KEY=\nB_KEY=\n")

    out = answer(project)

    assert out["exists"] is False
    assert statuses(out) == {"A_KEY": "missing", "B_KEY": "missing"}
    assert out["missing"] == ["A_KEY", "B_KEY"]
    assert "collect_secret" in str(out["note"])


def test_a_missing_file_without_example_has_no_keys(project: Path) -> None:
    """Nothing names any key: an empty answer that says to collect what the project needs."""
    out = answer(project)

    assert (out["exists"], out["example"], out["keys"], out["missing"]) == (False, None, [], [])
    assert "collect_secret" in str(out["note"])


def test_a_folder_at_the_path_is_unreadable(project: Path) -> None:
    """A folder where the file should be is refused as unreadable, never read as empty."""
    (project / ".env").mkdir()

    with pytest.raises(Unreadable, match=r"\.env is a folder"):
        status.report(project)


def test_a_fifo_at_the_path_is_unreadable_without_blocking(project: Path) -> None:
    """A FIFO (which root can open as well as anyone) is refused, not waited on."""
    os.mkfifo(project / ".env")

    with pytest.raises(Unreadable, match=r"\.env exists but cannot be read"):
        status.report(project, names=["API_KEY"])


def test_a_file_that_is_not_utf8_is_unreadable(project: Path, canary: str) -> None:
    """Bytes that are not UTF-8 are refused; the message holds no byte of them."""
    (project / ".env").write_bytes(b"API_KEY=" + canary.encode() + b"\xff\n")

    with pytest.raises(Unreadable) as caught:
        status.report(project)

    assert "not UTF-8" in str(caught.value)
    assert_no_part(canary, str(caught.value))


def test_an_unreadable_example_is_refused(project: Path) -> None:
    """The example file is read as strictly as the target: a FIFO there is refused."""
    os.mkfifo(project / ".env.example")

    with pytest.raises(Unreadable, match=r"\.env\.example exists but cannot be read"):
        status.report(project)


def test_an_example_linked_out_of_the_project_is_not_read(project: Path, tmp_path: Path) -> None:
    """A .env.example symlink leading out of the project is refused, never read."""
    outside = tmp_path / "outside.env"
    outside.write_text("SOMEONE_ELSES_KEY=\n")
    (project / ".env.example").symlink_to(outside)

    with pytest.raises(Unreadable, match="not a file inside the project"):
        status.report(project)


@pytest.mark.parametrize("path", ["../.env", "/etc/passwd", ".git/config", "a\nb"])
def test_a_path_offprompt_refuses_is_refused(project: Path, path: str) -> None:
    """The path resolves as a dotenv sink's: outside the project, inside .git, odd text."""
    with pytest.raises(RefusedRequest):
        status.report(project, path)


@pytest.mark.parametrize(
    "names", [[], ["lower"], ["A_KEY", "A_KEY"], ["A" * 129], [f"K{i}" for i in range(65)]]
)
def test_names_outside_the_contract_are_refused(project: Path, names: list[str]) -> None:
    """names: 1-64, unique, each of the §3.1 pattern and at most 128 characters."""
    with pytest.raises(RefusedRequest):
        status.report(project, names=names)


def test_sixty_four_names_are_accepted(project: Path) -> None:
    """The upper bound itself is fine."""
    out = answer(project, names=[f"K{i}" for i in range(64)])

    assert len(out["missing"]) == 64  # type: ignore[arg-type]


def test_a_set_key_the_registry_knows_passes_its_check(project: Path, canary: str) -> None:
    """A Stripe secret key of the right shape: set, check ok, no hint."""
    value = "sk_test_" + canary
    (project / ".env").write_text(f"STRIPE_SECRET_KEY={value}\n")

    out = answer(project)

    assert out["keys"] == [{"name": "STRIPE_SECRET_KEY", "status": "set", "check": "ok"}]
    assert out["missing"] == []
    assert_no_part(canary, dumped(out))
    assert str(len(value)) not in dumped(out)


def test_the_wrong_credential_is_a_mismatch_named_in_registry_terms(
    project: Path, canary: str
) -> None:
    """A Stripe publishable key in STRIPE_SECRET_KEY: mismatch, and a hint that names the
    credential it looks like and what the secret key starts with."""
    value = "pk_test_" + canary
    (project / ".env").write_text(f"STRIPE_SECRET_KEY={value}\n")

    out = answer(project)

    (key,) = out["keys"]  # type: ignore[misc]
    assert key == {
        "name": "STRIPE_SECRET_KEY",
        "status": "set",
        "check": "mismatch",
        "hint": STRIPE_SECRET_HINT,
    }
    assert out["missing"] == []
    assert "STRIPE_SECRET_KEY" in str(out["note"])
    assert_no_part(canary, dumped(out))
    assert str(len(value)) not in dumped(out)


def test_the_credential_named_is_the_fields_own_providers(project: Path, canary: str) -> None:
    """pk_live_ is the publishable key of Stripe and of Clerk alike: in CLERK_SECRET_KEY the
    hint names Clerk's, as the registry's own check does."""
    (project / ".env").write_text(f"CLERK_SECRET_KEY=pk_live_{canary}\n")

    (key,) = answer(project)["keys"]  # type: ignore[misc]

    assert key["check"] == "mismatch"
    assert key["hint"].startswith("looks like the Clerk publishable key;")


def test_a_mismatch_hint_holds_no_length_and_no_character(project: Path, canary: str) -> None:
    """A value failing the length and charset rules: the hint says the rules, never how long
    the value is or which character it holds (the registry's details would)."""
    value = "sk_test_" + canary * 10 + "!"
    (project / ".env").write_text(f"STRIPE_SECRET_KEY='{value}'\n")

    out = answer(project)

    (key,) = out["keys"]  # type: ignore[misc]
    assert key["check"] == "mismatch"
    assert key["hint"] == (
        "the Stripe secret key: 20 to 255 characters; letters, digits, - and _ only"
    )
    assert '"!"' not in dumped(out)
    assert_no_part(canary, dumped(out))
    assert re.search(rf"(?<![0-9]){len(value)}(?![0-9])", dumped(out)) is None


def test_a_name_the_registry_does_not_know_has_no_check(project: Path, canary: str) -> None:
    """Only names the registry recognizes get a check."""
    (project / ".env").write_text(f"MY_APP_FLAG={canary}\n")

    assert answer(project)["keys"] == [{"name": "MY_APP_FLAG", "status": "set"}]


def test_a_placeholder_is_not_checked(project: Path) -> None:
    """check is only for set names: a placeholder in a key the registry knows gets none."""
    (project / ".env").write_text("STRIPE_SECRET_KEY=changeme\nSTRIPE_PUBLISHABLE_KEY=\n")

    assert answer(project)["keys"] == [
        {"name": "STRIPE_SECRET_KEY", "status": "placeholder"},
        {"name": "STRIPE_PUBLISHABLE_KEY", "status": "empty"},
    ]


def test_note_says_to_collect_the_missing_and_never_read_the_file(project: Path) -> None:
    """The note names the missing keys, points to collect_secret and forbids reading the file."""
    (project / ".env").write_text("A_KEY=1\n")

    note = str(answer(project, names=["A_KEY", "B_KEY", "C_KEY"])["note"])

    assert "collect_secret for B_KEY, C_KEY" in note
    assert "Never open, print or read .env" in note


def test_every_key_set_says_nothing_needs_collecting(project: Path, canary: str) -> None:
    """All set: the note says so (and still says never to read the file)."""
    (project / ".env").write_text(f"A_KEY={canary}\n")

    out = answer(project)

    assert out["missing"] == []
    assert "nothing needs collecting" in str(out["note"])
    assert "Never open" in str(out["note"])


@pytest.mark.parametrize("beside", [".env", ".env.sample"])
def test_a_pem_left_unquoted_gives_no_line_of_it_as_a_name(
    project: Path, canary: str, beside: str
) -> None:
    """python-dotenv reads each line of an unquoted PEM block as a key: a stretch of the
    secret. Listed from the file or from an example copied from it, none of them is a name."""
    body = f"{canary[-12:]}q83hdsT5sR2l=="
    text = f"A=1\nPRIVATE_KEY=-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\nB=\n"
    (project / ".env").write_text(text)
    if beside != ".env":
        (project / beside).write_text(text)

    out = answer(project)

    # (A value equal to the example's is a placeholder.)
    assert list(statuses(out)) == ["A", "PRIVATE_KEY", "B"]
    assert_no_part(body, dumped(out))
