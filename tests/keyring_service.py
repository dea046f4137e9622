"""A real Secret Service for the tests (DESIGN §13.2): a private session bus and GNOME
Keyring's secrets component on it, unlocked, in folders of the test's own; `secret-tool` is
the oracle for what got saved. Never a stand-in: the keyring code talks to this daemon as it
would to a desktop's."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PROGRAMS = ("dbus-daemon", "gnome-keyring-daemon", "secret-tool")
_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
# The login keyring's password inside the test's own folder: not a secret of anyone's.
_UNLOCK = b"offprompt-test-keyring\n"


@dataclass(frozen=True)
class SecretService:
    """The running service: its bus address and the environment `secret-tool` needs."""

    address: str
    env: dict[str, str]

    def lookup(self, name: str) -> str | None:
        """What `secret-tool lookup service offprompt username NAME` prints, or None."""
        done = subprocess.run(
            ["secret-tool", "lookup", "service", "offprompt", "username", name],
            env=self.env,
            capture_output=True,
            timeout=20,
            check=False,
        )
        return done.stdout.decode("utf-8") if done.returncode == 0 else None

    def count(self, name: str) -> int:
        """How many items `secret-tool search --all` finds under offprompt / NAME."""
        done = subprocess.run(
            ["secret-tool", "search", "--all", "service", "offprompt", "username", name],
            env=self.env,
            capture_output=True,
            timeout=20,
            check=False,
        )
        return sum(1 for line in done.stdout.decode().splitlines() if line.startswith("["))

    def store(self, name: str, value: str, **extra: str) -> None:
        """An item saved by another program (`secret-tool store`), as a person's own would be."""
        attrs = [
            x
            for k, v in {"service": "offprompt", "username": name, **extra}.items()
            for x in (k, v)
        ]
        subprocess.run(
            ["secret-tool", "store", "--label", f"other {name}", *attrs],
            input=value.encode("utf-8"),
            env=self.env,
            timeout=20,
            check=True,
        )

    def clear(self, name: str) -> None:
        subprocess.run(
            ["secret-tool", "clear", "service", "offprompt", "username", name],
            env=self.env,
            timeout=20,
            check=False,
        )


def _wait_for_service(address: str) -> None:
    """Until the default collection exists and is unlocked: the daemon answers on the bus
    before it has made (and unlocked) the login keyring."""
    import secretstorage
    from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            conn = open_dbus_connection(bus=address)
        except OSError:
            time.sleep(0.1)
            continue
        try:
            if not secretstorage.Collection(conn).is_locked():
                return
        except secretstorage.exceptions.SecretStorageException:
            time.sleep(0.1)  # not there yet: the daemon has not registered or made it
        finally:
            conn.close()
        time.sleep(0.1)
    raise RuntimeError("the Secret Service's default collection was not ready within 20 s")


@contextlib.contextmanager
def running(root: Path) -> Iterator[SecretService]:
    """A private session bus and an unlocked GNOME Keyring on it, in folders under `root`;
    both stopped (by their own process ids) on the way out."""
    home, data, runtime = root / "home", root / "data", root / "run"
    for folder in (home, data, runtime):
        folder.mkdir(mode=0o700)
    # A bus of our own that activates nothing: the session bus's usual configuration would start
    # the system's own gnome-keyring-daemon for the first client that asks, which then holds
    # the Secret Service's name, without the login keyring unlocked, and outlives the test.
    config = root / "bus.conf"
    config.write_text(_BUS_CONFIG)
    bus = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert bus.stdout is not None
    address = bus.stdout.readline().decode().strip()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_DATA_HOME": str(data),
        "XDG_RUNTIME_DIR": str(runtime),
        "DBUS_SESSION_BUS_ADDRESS": address,
    }
    daemon = subprocess.Popen(
        ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        assert daemon.stdin is not None
        daemon.stdin.write(_UNLOCK)
        daemon.stdin.close()
        _wait_for_service(address)
        yield SecretService(address, env)
    finally:
        for proc in (daemon, bus):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        bus.stdout.close()


def programs_or_skip() -> None:
    """The programs and the extra the Secret Service tests need; a failure under CI=true."""
    missing = [p for p in PROGRAMS if shutil.which(p) is None]
    if missing:
        pytest.skip(  # a failure under CI=true (tests/ci_skips.py): .ci/run installs them
            f"{', '.join(missing)} not installed (apt: gnome-keyring libsecret-tools dbus-x11)"
        )
    pytest.importorskip("secretstorage", reason="the keyring extra is not installed")


@pytest.fixture(scope="session")
def secret_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecretService]:
    """A private, unlocked Secret Service for the session; missing programs fail under CI."""
    programs_or_skip()
    with running(tmp_path_factory.mktemp("secret-service")) as service:
        yield service


@pytest.fixture
def keyring_env(
    secret_service: SecretService, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> SecretService:
    """This test's process on the test Secret Service, with a state folder of its own."""
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", secret_service.address)
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    monkeypatch.setenv("OFFPROMPT_STATE_DIR", str(state))
    return secret_service
