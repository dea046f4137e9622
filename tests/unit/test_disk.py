"""offprompt.disk, shared by the sinks and the agents' config writes: causes, names, cleanup."""

import errno
import os
from pathlib import Path

import pytest

from offprompt import disk, sinks
from offprompt.agents import files
from offprompt.sinks import SinkSpec, atomic


def test_a_env_write_beside_a_config_being_written_leaves_the_configs_temp_file(
    project: Path, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A .env write's cleanup of old temp files does not delete a config write's one in flight."""
    real_fsync = os.fsync
    interleaved: list[bool] = []

    def fsync_then_write_env(fd: int) -> None:
        real_fsync(fd)
        if not interleaved:  # the config's new file, before it is moved into place
            interleaved.append(True)
            sinks.write(project, SinkSpec(), {"API_KEY": canary})

    monkeypatch.setattr(os, "fsync", fsync_then_write_env)
    config = project / ".mcp.json"
    outcome = files.update(config, ".mcp.json", lambda _: files.Edit('{"a": 1}\n', "added"))
    assert ("added", '{"a": 1}\n') == (outcome, config.read_text())
    assert f"API_KEY={canary}\n" == (project / ".env").read_text()
    assert [".env", ".mcp.json"] == sorted(os.listdir(project))


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (errno.ENOSPC, "the disk is full"),
        (errno.EROFS, "the file system is read-only"),
        (errno.ELOOP, "too many symlinks"),
        (errno.ENAMETOOLONG, "file name too long"),
    ],
)
def test_a_failed_os_call_is_worded_for_a_person(code: int, expected: str) -> None:
    """Known causes have our words, others the system's, lower-cased, never a path."""
    assert expected == disk.reason(OSError(code, os.strerror(code), "/secret/path"))


def test_a_caller_words_an_errno_as_its_own_calls_mean_it() -> None:
    """The sinks open with O_NOFOLLOW, so for them ELOOP means the path became a symlink."""
    assert "the path turned into a symlink during the write" == atomic.reason(
        OSError(errno.ELOOP, "Too many levels of symbolic links")
    )


@pytest.mark.parametrize("char", ["a", "é", "€", "😀"])
def test_a_config_temp_name_fits_beside_the_longest_name(char: str) -> None:
    """Beside a file whose name is 255 bytes, the temporary name is still at most 255 bytes."""
    name = char * (255 // len(char.encode()))
    assert len(os.fsencode(disk.config_temp_name(name))) <= 255
