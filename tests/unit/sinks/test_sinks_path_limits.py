"""Sink paths a file system cannot hold, or no result can show, are refused before any page;
paths at the limits are written."""

import os
from pathlib import Path

import pytest
from dotenv import dotenv_values

from offprompt.errors import RefusedRequest
from offprompt.sinks import SinkSpec, inspect_target, resolve_target, write


def test_name_of_255_bytes_is_written(project: Path, canary: str) -> None:
    """A file name of exactly NAME_MAX bytes is a real file: it is written, value inside only."""
    name = "a" * 255
    result = write(project, SinkSpec(path=name), {"API_KEY": canary})
    assert {"API_KEY": canary} == dotenv_values(project / name)
    assert name == result.display
    assert [name] == os.listdir(project)  # no temporary file left beside it


def test_name_of_many_byte_characters_is_written(project: Path, canary: str) -> None:
    """56 four-byte characters (224 bytes) fit NAME_MAX, and so does the temporary name beside
    them, which once kept 64 characters (256 bytes) of it and failed every write."""
    name = "😀" * 56
    write(project, SinkSpec(path=name), {"API_KEY": canary})
    assert {"API_KEY": canary} == dotenv_values(project / name)


@pytest.mark.parametrize(
    "path", ["a" * 256, "sub/" + "é" * 128, "😀" * 64 + "/.env"], ids=["ascii", "é", "emoji"]
)
def test_part_over_255_bytes_is_refused(project: Path, path: str) -> None:
    """A part longer than NAME_MAX bytes (characters do not count, bytes do) is refused."""
    with pytest.raises(RefusedRequest, match="longer than 255 bytes"):
        resolve_target(project, SinkSpec(path=path))


def test_path_longer_than_path_max_is_refused(project: Path) -> None:
    """Parts that each fit but together pass PATH_MAX are refused, not left to fail on write."""
    path = "/".join(["d" * 250] * 17)
    with pytest.raises(RefusedRequest, match="too long"):
        resolve_target(project, SinkSpec(path=path))
    assert [] == os.listdir(project)


def test_path_whose_temporary_file_would_pass_path_max_is_refused(project: Path) -> None:
    """The target fits PATH_MAX but the temporary file beside it would not: refused too."""
    room = 4095 - len(os.fsencode(project.resolve())) - 1  # bytes left for the relative path
    # Folders fill what is left, whatever the test's own folder costs, so that the target (a
    # one-byte name) is one byte short of PATH_MAX and no staging name beside it can fit.
    folders = ["d" * 200] * ((room - 2) // 201)
    rest = room - 2 - len("/".join(folders)) - 1
    if rest > 0:
        folders.append("e" * rest)
    path = "/".join([*folders, "f"])
    assert len(os.fsencode(project.resolve() / path)) < 4096
    with pytest.raises(RefusedRequest, match="too long"):
        resolve_target(project, SinkSpec(path=path))


@pytest.mark.parametrize("path", [".env\x00", ".env\n", "a\tb", "sub\r/.env", ".env\x7f"])
def test_control_characters_are_refused(project: Path, path: str) -> None:
    """NUL, line breaks, tabs and DEL make a path no result or log line shows as it is."""
    with pytest.raises(RefusedRequest, match="must not contain control characters"):
        resolve_target(project, SinkSpec(path=path))


def test_bytes_that_are_not_utf8_are_refused(project: Path) -> None:
    """From a command line, a non-UTF-8 name arrives as lone surrogates: refused, not written."""
    path = os.fsdecode(b".env\xff")
    with pytest.raises(RefusedRequest, match="must be UTF-8 text"):
        write(project, SinkSpec(path=path), {"API_KEY": "x"})
    assert [] == os.listdir(project)


def test_symlink_to_a_name_that_is_not_utf8_is_refused(project: Path) -> None:
    """`.env` linking to a non-UTF-8 name in the project leads to a name no result can show."""
    os.symlink(b"\xff.env", os.path.join(os.fsencode(project), b".env"))
    with pytest.raises(RefusedRequest, match="not UTF-8 text"):
        inspect_target(project, SinkSpec(), ["API_KEY"])
