"""The terminal door's usage check: the request's own schema and refusals, said in the command
line's options from a table of fields, without the MCP layer."""

import subprocess
import sys
from pathlib import Path

import pytest

from offprompt import terminal
from offprompt.errors import RefusedRequest, UsageProblem
from offprompt.terminal import CommandLine, check_usage

# What the command line says for each mistake an argument check finds, word for word.
SAID: dict[str, tuple[CommandLine, str]] = {
    "a provider the registry does not know": (
        CommandLine(names=("A", "B"), providers={"B": "nope"}),
        "--provider for B must be one of: ",
    ),
    "a provider that is not UTF-8": (
        CommandLine(names=("A",), providers={"A": "str\udcffipe"}),
        "--provider for A must be UTF-8 text",
    ),
    "an empty --reason": (CommandLine(names=("A",), reason=""), "--reason must be at least 1"),
    "an escape in --reason": (
        CommandLine(names=("A",), reason="a\x1bb"),
        "--reason must not contain control characters other than tabs and line breaks "
        "(NUL, escape sequences...); write plain text.",
    ),
    "a --file that is not UTF-8": (
        CommandLine(names=("A",), file=".env\udcff"),
        "--file must be UTF-8 text",
    ),
    "an empty --file": (CommandLine(names=("A",), file=""), "--file must be at least 1 characters"),
    "an unknown --also kind": (
        CommandLine(names=("A",), also=("heroku",)),
        "--also 'heroku' must be one of: github, vercel, cloudflare, fly",
    ),
    "a second --also with a bad environment": (
        CommandLine(names=("A",), also=("fly", "github:--x")),
        "--also 'github:--x' must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$",
    ),
    "a Vercel environment named twice": (
        CommandLine(names=("A",), also=("vercel:preview,preview",)),
        "--also 'vercel:preview,preview' names an environment twice.",
    ),
    "a repeated --also": (
        CommandLine(names=("A",), also=("fly", "fly")),
        "--also 'fly' repeats an earlier destination; list each once.",
    ),
    "an unknown Vercel environment": (
        CommandLine(names=("A",), also=("vercel:staging",)),
        "--also 'vercel:staging' must be one of: production, preview, development",
    ),
    "an --also option that is not UTF-8": (
        CommandLine(names=("A",), also=("github:\udcff",)),
        "--also 'github:\\udcff' must be UTF-8 text",
    ),
    "five --also": (
        CommandLine(
            names=("A",), also=("fly", "github", "cloudflare", "vercel:preview", "github:x")
        ),
        "also must have at most 4 entries",
    ),
}


@pytest.mark.parametrize("case", SAID, ids=list(SAID))
def test_each_field_is_said_as_the_option_that_set_it(project: Path, case: str) -> None:
    """The schema's and the core's words about a field come out under its option's name; the
    rest of the sentence is the core's own."""
    ask, says = SAID[case]
    with pytest.raises(UsageProblem) as problem:
        check_usage(ask, project)
    assert str(problem.value).startswith(says), str(problem.value)


def test_a_refusal_of_a_field_keeps_the_core_words_after_the_option() -> None:
    """Whatever the core says after a field's name follows the option's name unchanged, so a
    reworded refusal cannot turn into a different field on the command line."""
    ask = CommandLine(names=("A", "B"), also=("fly", "github:x"))
    said = {
        field: terminal._refused(RefusedRequest.about(field, " is odd today."), ask)
        for field in (("sink", "path"), ("secrets", 1, "provider"), ("also", 1, "environment"))
    }
    assert {
        ("sink", "path"): "--file is odd today.",
        ("secrets", 1, "provider"): "--provider for B is odd today.",
        ("also", 1, "environment"): "--also 'github:x' is odd today.",
    } == said


def test_a_refusal_of_a_field_the_terminal_never_sets_is_said_as_the_core_says_it() -> None:
    """No option for a field (a caption) or no field at all: the core's message, whole."""
    ask = CommandLine(names=("A",))
    caption = RefusedRequest.about(("secrets", 0, "caption"), " must not contain control")
    whole = RefusedRequest("A: provider 'stripe' has several credentials")
    assert ["secrets[0].caption must not contain control", str(whole)] == [
        terminal._refused(caption, ask),
        terminal._refused(whole, ask),
    ]


def test_the_terminal_loads_neither_the_tools_nor_the_protocol(project: Path) -> None:
    """Checking a command line, accepted or refused, imports no module of offprompt.tools or
    offprompt.mcp: the terminal is its own door into the core (DESIGN §2)."""
    code = (
        "import sys; from pathlib import Path\n"
        "from offprompt.terminal import CommandLine, check_usage\n"
        "from offprompt.errors import UsageProblem\n"
        f"check_usage(CommandLine(names=('A',), also=('fly',)), Path({str(project)!r}))\n"
        "try:\n"
        f"    check_usage(CommandLine(names=('A',), reason=''), Path({str(project)!r}))\n"
        "except UsageProblem:\n"
        "    pass\n"
        "doors = ('offprompt.tools', 'offprompt.mcp')\n"
        "print(sorted(m for m in sys.modules if m.startswith(doors)))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (0, "[]") == (loaded.returncode, loaded.stdout.strip()), loaded.stderr


@pytest.mark.parametrize(
    ("reason", "by"), [(None, "offprompt"), ("Billing needs the live key", "person")]
)
def test_the_request_says_who_wrote_its_reason(project: Path, reason: str | None, by: str) -> None:
    """No --reason: offprompt's own sentence, said to be offprompt's; --reason: the person's."""
    asked = check_usage(CommandLine(names=("API_KEY",), reason=reason), project)

    assert by == asked.reason_by
    assert asked.reason == (reason or terminal.DEFAULT_REASON)


def test_an_agent_s_request_is_the_agent_s() -> None:
    """The MCP door's arguments: the reason is the agent's words."""
    from offprompt.collect.request import validate

    asked = validate({"secrets": [{"name": "API_KEY"}], "reason": "r"})

    assert "agent" == asked.reason_by


def test_a_written_request_says_which_ticked_checks_were_skipped_and_why(tmp_path: Path) -> None:
    """`offprompt collect` prints the names and fingerprint on stdout as ever, and one stderr
    line per name the person asked to check that was not, with why (DESIGN §16)."""
    import io

    from offprompt.spec import SecretSpec, SinkSpec, WriteOutcome
    from offprompt.store import RequestStore

    store = RequestStore()
    request = store.create((SecretSpec("APP_SECRET"),), SinkSpec(), tmp_path, "why", ttl=60)
    assert store.claim(request)
    why = "offprompt knows no provider for this key"
    outcome = WriteOutcome(
        file=".env",
        names=("APP_SECRET",),
        added=("APP_SECRET",),
        fingerprint="🍋 🥝 🌮 🧀",
        checked=(("APP_SECRET", "skipped"),),
        unchecked=(("APP_SECRET", why),),
    )
    store.complete(request, outcome)
    out, err = io.StringIO(), io.StringIO()

    assert 0 == terminal._report(request, "written", out, err)
    assert "Fingerprint 🍋 🥝 🌮 🧀" == out.getvalue().splitlines()[-1]
    assert f"offprompt: APP_SECRET was not checked with a provider: {why}.\n" == err.getvalue()
