"""Finding and fetching cloudflared: the lookup order, and downloads kept only when verified."""

from __future__ import annotations

import hashlib
import io
import stat
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from offprompt.errors import NoBinary
from offprompt.tunnel import binary
from offprompt.tunnel.binary import Pin, ensure, fetch, locate, platform_key

PROGRAM = b"#!/bin/sh\necho fake cloudflared\n"


class Mirror:
    """A local HTTP server serving `files` by name and noting every path asked for."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.hits: list[str] = []
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                name = self.path.rsplit("/", 1)[-1]
                mirror.hits.append(self.path)
                body = mirror.files.get(name)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/releases/2024.12.2/"


@pytest.fixture
def mirror(monkeypatch: pytest.MonkeyPatch) -> Iterator[Mirror]:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    served = Mirror()
    served.thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tgz(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
    return out.getvalue()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


# -- the pins -------------------------------------------------------------------------------------


def test_pinned_checksums_are_the_published_ones() -> None:
    """Linux x64 and macOS x64 of 2024.12.2 are pinned to the package index's SHA-256 sums."""
    assert binary.RELEASE == "2024.12.2"
    assert binary.PINS[("linux", "amd64")] == Pin(
        "cloudflared-linux-amd64",
        "5237675a5e806120729acc78c5be02f9db5f406717699587abfa72b49b39fe40",
    )
    assert binary.PINS[("darwin", "amd64")] == Pin(
        "cloudflared-darwin-amd64.tgz",
        "71b17468bab0426b20959d4eeadfff3658d07c636beea472539e0781381559cc",
        archive=True,
    )


def test_only_platforms_with_a_published_sum_are_pinned() -> None:
    """Every other platform has no checksum, so nothing is ever downloaded for it."""
    pinned = {key for key, pin in binary.PINS.items() if pin.sha256 is not None}
    assert pinned == {("linux", "amd64"), ("darwin", "amd64")}


def test_default_download_comes_from_the_pinned_release() -> None:
    """The default base URL is cloudflared's GitHub release for the pinned version."""
    assert binary.DEFAULT_BASE == (
        "https://github.com/cloudflare/cloudflared/releases/download/2024.12.2/"
    )


@pytest.mark.parametrize(
    ("system", "machine", "key"),
    [
        ("linux", "x86_64", ("linux", "amd64")),
        ("linux", "aarch64", ("linux", "arm64")),
        ("darwin", "arm64", ("darwin", "arm64")),
        ("darwin", "x86_64", ("darwin", "amd64")),
        ("win32", "AMD64", ("windows", "amd64")),
        ("win32", "ARM64", ("windows", "arm64")),
    ],
)
def test_platform_key_names_the_release_asset_platform(
    system: str, machine: str, key: tuple[str, str]
) -> None:
    """sys.platform and platform.machine() map to the release's os-arch names."""
    assert platform_key(system, machine) == key


# -- the lookup order -----------------------------------------------------------------------------


def _program(folder: Path, name: str = "cloudflared") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(PROGRAM)
    path.chmod(0o755)
    return path


def test_the_variable_wins_over_path(tmp_path: Path) -> None:
    """OFFPROMPT_CLOUDFLARED is used even when PATH has a cloudflared too."""
    mine, on_path = _program(tmp_path / "mine"), _program(tmp_path / "path")
    env = {"OFFPROMPT_CLOUDFLARED": str(mine), "PATH": str(on_path.parent)}
    assert locate(env, cache=tmp_path / "cache", key=("linux", "amd64")) == mine


def test_path_wins_over_the_cache(tmp_path: Path) -> None:
    """A cloudflared on PATH is used before the cached download."""
    on_path = _program(tmp_path / "path")
    _program(tmp_path / "cache" / "cloudflared" / binary.RELEASE)
    env = {"PATH": str(on_path.parent)}
    assert locate(env, cache=tmp_path / "cache", key=("linux", "amd64")) == on_path


def test_the_cache_is_used_last(tmp_path: Path) -> None:
    """With no variable and nothing on PATH, the cached binary is found."""
    cached = _program(tmp_path / "cache" / "cloudflared" / binary.RELEASE)
    env = {"PATH": str(tmp_path / "empty")}
    assert locate(env, cache=tmp_path / "cache", key=("linux", "amd64")) == cached


def test_a_variable_naming_nothing_runnable_is_reported(tmp_path: Path) -> None:
    """OFFPROMPT_CLOUDFLARED pointing at a missing file is an error, not a silent fallback."""
    on_path = _program(tmp_path / "path")
    env = {"OFFPROMPT_CLOUDFLARED": str(tmp_path / "nope"), "PATH": str(on_path.parent)}
    with pytest.raises(NoBinary, match="OFFPROMPT_CLOUDFLARED"):
        locate(env, cache=tmp_path / "cache", key=("linux", "amd64"))


def test_cache_dir_follows_the_variable(tmp_path: Path) -> None:
    """OFFPROMPT_CACHE_DIR decides where downloads go."""
    assert binary.cache_dir({"OFFPROMPT_CACHE_DIR": str(tmp_path)}) == tmp_path


# -- downloads ------------------------------------------------------------------------------------


def test_verified_binary_is_installed_0700(mirror: Mirror, tmp_path: Path) -> None:
    """A download whose SHA-256 matches the pin is installed with mode 0700."""
    mirror.files["cloudflared-linux-amd64"] = PROGRAM
    dest = tmp_path / "cache" / "cloudflared"
    path = fetch(Pin("cloudflared-linux-amd64", sha(PROGRAM)), base=mirror.base, dest=dest)
    assert (path.read_bytes(), stat.S_IMODE(path.stat().st_mode)) == (PROGRAM, 0o700)


def test_wrong_hash_is_refused_and_nothing_kept(mirror: Mirror, tmp_path: Path) -> None:
    """A download that does not match the pin is deleted; no file is left in the cache."""
    mirror.files["cloudflared-linux-amd64"] = PROGRAM
    dest = tmp_path / "cache" / "cloudflared"
    with pytest.raises(NoBinary, match="does not match the SHA-256"):
        fetch(Pin("cloudflared-linux-amd64", "0" * 64), base=mirror.base, dest=dest)
    assert leftovers(tmp_path / "cache") == []


def test_archive_yields_only_its_cloudflared_member(mirror: Mirror, tmp_path: Path) -> None:
    """From a verified .tgz only `cloudflared` is written, nothing else in the archive."""
    archive = tgz({"cloudflared": PROGRAM, "README": b"other"})
    mirror.files["cloudflared-darwin-amd64.tgz"] = archive
    dest = tmp_path / "cache" / "cloudflared"
    pin = Pin("cloudflared-darwin-amd64.tgz", sha(archive), archive=True)
    path = fetch(pin, base=mirror.base, dest=dest)
    assert (path.read_bytes(), leftovers(tmp_path / "cache")) == (PROGRAM, ["cloudflared"])


def test_archive_member_outside_the_folder_is_not_extracted(mirror: Mirror, tmp_path: Path) -> None:
    """An archive whose only `cloudflared` is `../cloudflared` is refused; nothing is written."""
    archive = tgz({"../cloudflared": PROGRAM})
    mirror.files["cloudflared-darwin-amd64.tgz"] = archive
    dest = tmp_path / "cache" / "deep" / "cloudflared"
    pin = Pin("cloudflared-darwin-amd64.tgz", sha(archive), archive=True)
    with pytest.raises(NoBinary, match="no plain `cloudflared`"):
        fetch(pin, base=mirror.base, dest=dest)
    assert leftovers(tmp_path) == []


def test_archive_symlink_member_is_refused(mirror: Mirror, tmp_path: Path) -> None:
    """A `cloudflared` member that is a symlink is not followed or installed."""
    archive = tgz({}, links={"cloudflared": "/bin/sh"})
    mirror.files["cloudflared-darwin-amd64.tgz"] = archive
    dest = tmp_path / "cache" / "cloudflared"
    pin = Pin("cloudflared-darwin-amd64.tgz", sha(archive), archive=True)
    with pytest.raises(NoBinary):
        fetch(pin, base=mirror.base, dest=dest)
    assert leftovers(tmp_path / "cache") == []


def test_missing_asset_is_a_clear_error(mirror: Mirror, tmp_path: Path) -> None:
    """A 404 from the mirror is NoBinary naming the download, and leaves nothing."""
    with pytest.raises(NoBinary, match="could not be downloaded"):
        fetch(Pin("cloudflared-linux-amd64", "0" * 64), base=mirror.base, dest=tmp_path / "c" / "x")
    assert leftovers(tmp_path) == []


def test_non_http_base_is_refused(tmp_path: Path) -> None:
    """OFFPROMPT_CLOUDFLARED_BASE must be http(s); a file: URL downloads nothing."""
    with pytest.raises(NoBinary, match="http"):
        fetch(Pin("x", "0" * 64), base=f"file://{tmp_path}/", dest=tmp_path / "c" / "x")


async def test_ensure_downloads_into_the_cache_when_nothing_is_found(
    mirror: Mirror, tmp_path: Path
) -> None:
    """No variable, nothing on PATH, an empty cache: the pinned asset is fetched from the base."""
    mirror.files["cloudflared-linux-amd64"] = PROGRAM
    env = {
        "PATH": str(tmp_path / "empty"),
        "OFFPROMPT_CACHE_DIR": str(tmp_path / "cache"),
        "OFFPROMPT_CLOUDFLARED_BASE": mirror.base,
    }
    pins = {("linux", "amd64"): Pin("cloudflared-linux-amd64", sha(PROGRAM))}
    path = await ensure(env, key=("linux", "amd64"), pins=pins)
    assert path == tmp_path / "cache" / "cloudflared" / binary.RELEASE / "cloudflared"
    assert mirror.hits == ["/releases/2024.12.2/cloudflared-linux-amd64"]


async def test_ensure_refuses_a_tampered_release(mirror: Mirror, tmp_path: Path) -> None:
    """With the real pins, a mirror serving anything but the real release installs nothing."""
    mirror.files["cloudflared-linux-amd64"] = PROGRAM
    env = {
        "PATH": str(tmp_path / "empty"),
        "OFFPROMPT_CACHE_DIR": str(tmp_path / "cache"),
        "OFFPROMPT_CLOUDFLARED_BASE": mirror.base,
    }
    with pytest.raises(NoBinary, match="does not match"):
        await ensure(env, key=("linux", "amd64"))
    assert leftovers(tmp_path / "cache") == []


async def test_unpinned_platform_downloads_nothing(mirror: Mirror, tmp_path: Path) -> None:
    """linux arm64 has no pinned sum: NoBinary says to install it, and the mirror is never asked."""
    env = {
        "PATH": str(tmp_path / "empty"),
        "OFFPROMPT_CACHE_DIR": str(tmp_path / "cache"),
        "OFFPROMPT_CLOUDFLARED_BASE": mirror.base,
    }
    with pytest.raises(NoBinary, match="install cloudflared, or set OFFPROMPT_CLOUDFLARED"):
        await ensure(env, key=("linux", "arm64"))
    assert mirror.hits == []
