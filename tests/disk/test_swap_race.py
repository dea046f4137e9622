"""A sink's folder swapped for a link to an outside folder, over and over, while offprompt writes
or reads there: every write lands inside the project or is refused, and no read answers with
what the outside folder holds (the attack of the disk walk's issue, run from a thread).
"""

import ctypes
import ctypes.util
import errno
import os
import platform
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from offprompt import sinks, status
from offprompt.cli import cli
from offprompt.errors import RefusedRequest, Unreadable, WriteError
from offprompt.spec import SinkSpec

pytestmark = pytest.mark.slow

ROUNDS = 200
AT_FDCWD = -100
RENAME_EXCHANGE = 2
# renameat2's number where glibc has no wrapper for it (before 2.28).
_SYSCALLS = {"x86_64": 316, "aarch64": 276, "armv7l": 382, "riscv64": 276, "ppc64le": 357}


def exchange_function() -> Callable[[bytes, bytes], int]:
    """libc's renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE), returning errno or 0."""
    if sys.platform != "linux":
        pytest.skip("renameat2(RENAME_EXCHANGE) is a Linux system call")
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is not None:
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]

        def call(a: bytes, b: bytes) -> int:
            return 0 if fn(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0 else ctypes.get_errno()

        return call
    number = _SYSCALLS.get(platform.machine())
    if number is None:
        pytest.skip(f"no renameat2 in libc and its number on {platform.machine()} is unknown")
    syscall = libc.syscall

    def raw(a: bytes, b: bytes) -> int:
        done = syscall(number, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
        return 0 if done == 0 else ctypes.get_errno()

    return raw


@dataclass
class World:
    project: Path
    outside: Path
    sub: Path
    link: Path


@pytest.fixture
def world(tmp_path: Path) -> World:
    """project/sub (a real folder) beside project/sub-link, a link to a folder outside."""
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    (project / "sub").mkdir(parents=True)
    outside.mkdir()
    (project / "sub-link").symlink_to(outside, target_is_directory=True)
    return World(project, outside, project / "sub", project / "sub-link")


@pytest.fixture
def swapping(world: World) -> Iterator[threading.Event]:
    """A thread exchanging `sub` and `sub-link` in a tight loop until the test ends; skipped
    when the kernel or file system refuses the exchange (never for a missing reason)."""
    swap = exchange_function()
    a, b = os.fsencode(world.sub), os.fsencode(world.link)
    code = swap(a, b)
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        if code != errno.ENOSYS and os.environ.get("CI") == "true":
            pytest.fail(f"renameat2(RENAME_EXCHANGE) refused here: {os.strerror(code)}")
        pytest.skip(f"renameat2(RENAME_EXCHANGE) refused here: {os.strerror(code)}")
    assert code == 0, os.strerror(code)
    assert swap(a, b) == 0
    stop = threading.Event()
    swaps = [0]

    def loop() -> None:
        while not stop.is_set():
            swap(a, b)
            swaps[0] += 1

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # hand the GIL back and forth often: the swaps land mid-write
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield stop
    finally:
        stop.set()
        thread.join(10)
        sys.setswitchinterval(old_interval)
        if world.sub.is_symlink():  # leave the folders as they began
            swap(a, b)
    assert swaps[0] > ROUNDS, "the swapping thread hardly ran"


def outside_holders(outside: Path, needle: bytes) -> list[str]:
    """Every file below `outside` holding `needle`, each file read whole."""
    found = []
    for folder, _, files in os.walk(outside):
        for name in files:
            path = Path(folder, name)
            try:
                if needle in path.read_bytes():
                    found.append(str(path.relative_to(outside)))
            except OSError:
                continue
    return found


@pytest.mark.parametrize(("kind", "name"), [("dotenv", ".env"), ("file", "secret.txt")])
def test_a_write_while_its_folder_is_swapped_for_an_outside_link_never_lands_outside(
    kind: str, name: str, world: World, canary: str, swapping: threading.Event
) -> None:
    """200 writes while `sub` and a link out are exchanged: each lands inside or is refused,
    and after each no byte of the value is in any file of the outside folder."""
    spec = SinkSpec(kind=kind, path=f"sub/{name}")
    written = refused = past_the_check = 0
    leaks: list[tuple[int, list[str]]] = []
    refusals: set[str] = set()
    for i in range(ROUNDS):
        value = f"{canary}{i:03d}"
        try:
            sinks.write(world.project, spec, {"API_KEY": value})
            written += 1
        except (WriteError, RefusedRequest) as e:
            refusals.add(str(e))
            refused += 1
            past_the_check += isinstance(e, WriteError)  # the path check passed, the walk refused
        holders = outside_holders(world.outside, value.encode())
        if holders:
            leaks.append((i, holders))
    swapping.set()
    assert [] == leaks, f"{len(leaks)} of {ROUNDS} rounds wrote outside the project"
    assert [] == outside_holders(world.outside, canary.encode())
    # A refusal names neither the value nor the outside folder.
    assert [] == [m for m in refusals if canary in m or str(world.outside) in m]
    assert written + refused == ROUNDS
    assert written + past_the_check > 0, "no round got past the path check: nothing was raced"


@pytest.fixture
def outside_env(world: World) -> str:
    """The outside folder's .env sets a name nothing inside the project has."""
    name = f"CANARY_{os.urandom(6).hex().upper()}"
    (world.outside / ".env").write_text(f"{name}=1\n")
    (world.sub / ".env").write_text("INSIDE=1\n")
    return name


def test_status_while_its_folder_is_swapped_never_names_an_outside_key(
    world: World, outside_env: str, swapping: threading.Event
) -> None:
    """200 `status` reports on sub/.env while `sub` is exchanged with a link out: the outside
    file's key name is in no answer (refusals included)."""
    answers = 0
    for _ in range(ROUNDS):
        try:
            found = status.report(world.project, "sub/.env")
            text = repr(found.to_json())
            answers += 1
        except (RefusedRequest, Unreadable, WriteError) as e:
            text = str(e)
        assert outside_env not in text
    assert answers > 0, "no status answer got through at all"


def test_keys_while_its_folder_is_swapped_never_names_an_outside_key(
    world: World, outside_env: str, swapping: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200 `offprompt keys sub/.env` in the project while `sub` is exchanged with a link out:
    the outside file's key name is in no output."""
    monkeypatch.chdir(world.project)
    answers = 0
    for _ in range(ROUNDS):
        done = CliRunner().invoke(cli, ["keys", "sub/.env"], prog_name="offprompt")
        assert outside_env not in done.stdout + done.stderr
        answers += done.exit_code == 0
    assert answers > 0, "no keys answer got through at all"
