"""README's "Command line" section carries every command's `--help` word for word.

To refresh it after changing a help text: `python tests/cli/test_cli_readme.py --write` puts
the blocks in README in place of the old ones (without `--write` it prints them).
"""

import re
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from offprompt.cli import cli

README = Path(__file__).resolve().parents[2] / "README.md"
HEADING = "## Command line"
# The order the README shows them in: the first command a person runs first.
ORDER = ["init", "remove", "agents", "collect", "fingerprints", "keys", "status", "serve", "guard"]


def help_text(*command: str) -> str:
    result = CliRunner().invoke(cli, [*command, "--help"], prog_name="offprompt")
    assert 0 == result.exit_code, result.output
    return result.stdout


def commands() -> list[str]:
    assert isinstance(cli, click.Group)
    names = sorted(cli.commands, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    return names


def render() -> str:
    """The help blocks as README holds them."""
    blocks = [f"### `offprompt`\n\n```text\n{help_text()}```\n"]
    for name in commands():
        blocks.append(f"### `offprompt {name}`\n\n```text\n{help_text(name)}```\n")
    return "\n".join(blocks)


def refresh(text: str) -> str:
    """README's text with each command's help block as `--help` prints it now; everything
    else, the prose between the blocks too, byte for byte. (A command with no block yet still
    needs one written by hand: test_readme_documents_every_command says which.)"""

    def block(found: re.Match[str]) -> str:
        heading = found.group(1)
        return f"### `{heading}`\n\n```text\n{help_text(*heading.split()[1:])}```\n"

    return re.sub(r"^### `(offprompt[^`]*)`\n\n```text\n.*?```\n", block, text, flags=re.M | re.S)


def section() -> str:
    text = README.read_text(encoding="utf-8")
    assert 1 == text.count(f"\n{HEADING}\n"), f"README needs exactly one {HEADING!r} section"
    body = text.split(f"\n{HEADING}\n", 1)[1]
    following = re.search(r"^## ", body, flags=re.MULTILINE)
    return body[: following.start()] if following else body


def documented() -> dict[str, str]:
    """{heading: help block} for each `### \\`offprompt …\\`` heading of the section."""
    found = re.findall(r"^### `(offprompt[^`]*)`\n\n```text\n(.*?)```\n", section(), re.M | re.S)
    return dict(found)


def test_readme_documents_every_command() -> None:
    """A command added to the CLI (offprompt collect, say) must get its README block too."""
    expected = ["offprompt"] + [f"offprompt {name}" for name in commands()]

    assert expected == list(documented())


def test_readme_help_matches_the_real_help() -> None:
    """Each block is exactly what `--help` prints (help is laid out for 80 columns)."""
    for heading, block in documented().items():
        assert help_text(*heading.split()[1:]) == block, f"README's {heading} --help is stale"


def test_help_is_the_same_on_any_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """A narrow or wide terminal gets the same help, so README's copy holds everywhere."""
    wide = help_text("init")
    for columns in ("40", "200"):
        monkeypatch.setenv("COLUMNS", columns)

        assert wide == help_text("init")


def _exit_codes(text: str) -> set[int]:
    """The codes a help text lists after "Exit codes:" (inline or one per line)."""
    said = " ".join(text.split("Exit codes:", 1)[1].split()) if "Exit codes:" in text else ""
    return {int(n) for n in re.findall(r"(?:^|[:,] |\b)([0-9])\s+(?=[a-z(])", said)}


def test_the_top_level_help_lists_every_exit_code_a_command_uses() -> None:
    """0 to 4 in `offprompt --help`, and no command's help names a code the top level lacks."""
    top = _exit_codes(help_text())
    used = {code for name in commands() for code in _exit_codes(help_text(name))}

    assert {0, 1, 2, 3, 4} == top
    assert used <= top, f"codes a command names that `offprompt --help` does not: {used - top}"
    assert {3, 4} <= used  # collect's and status's own codes are seen there too


def test_refresh_puts_back_a_stale_block_and_keeps_the_rest() -> None:
    """`--write` rewrites only the help blocks: a README whose blocks are current is kept byte
    for byte, and a stale line in a block comes back as `--help` prints it."""
    text = README.read_text(encoding="utf-8")
    stale = text.replace("Print the key names a .env file sets", "Print the names", 1)
    assert stale != text

    assert text == refresh(text)
    assert text == refresh(stale)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        README.write_text(refresh(README.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(render(), end="")
