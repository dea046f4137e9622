"""Finding cloudflared: OFFPROMPT_CLOUDFLARED, then PATH, then our cache, which is filled on
demand with a pinned release, only when its SHA-256 matches the one written here.

Downloads go to a temp file in the cache folder, are hashed as they arrive, and are renamed
into place (0700) only after the hash matched; from a .tgz only the `cloudflared` member is read.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import platform
import secrets
import shutil
import sys
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from offprompt.disk import paths, remove_file
from offprompt.errors import NoBinary

__all__ = [
    "DEFAULT_BASE",
    "PINS",
    "RELEASE",
    "Pin",
    "cache_dir",
    "ensure",
    "fetch",
    "locate",
    "platform_key",
    "will_download",
]

RELEASE: Final = "2024.12.2"
DEFAULT_BASE: Final = f"https://github.com/cloudflare/cloudflared/releases/download/{RELEASE}/"
MAX_DOWNLOAD: Final = 256 * 1024 * 1024
DOWNLOAD_SECONDS: Final = 120.0
_CHUNK: Final = 1 << 16


@dataclass(frozen=True)
class Pin:
    """One release asset: its file name, its SHA-256 (None: not pinned, never downloaded), and
    whether it is a .tgz holding `cloudflared` rather than the bare binary."""

    asset: str
    sha256: str | None
    archive: bool = False


# Only checksums taken from a public package index for this release are pinned; a platform
# without one is never downloaded (the person installs cloudflared, or sets
# OFFPROMPT_CLOUDFLARED).
PINS: Final[Mapping[tuple[str, str], Pin]] = {
    ("linux", "amd64"): Pin(
        "cloudflared-linux-amd64",
        "5237675a5e806120729acc78c5be02f9db5f406717699587abfa72b49b39fe40",
    ),
    ("linux", "arm64"): Pin("cloudflared-linux-arm64", None),
    ("darwin", "amd64"): Pin(
        "cloudflared-darwin-amd64.tgz",
        "71b17468bab0426b20959d4eeadfff3658d07c636beea472539e0781381559cc",
        archive=True,
    ),
    ("darwin", "arm64"): Pin("cloudflared-darwin-arm64.tgz", None, archive=True),
    ("windows", "amd64"): Pin("cloudflared-windows-amd64.exe", None),
    ("windows", "arm64"): Pin("cloudflared-windows-arm64.exe", None),
}


def platform_key(system: str | None = None, machine: str | None = None) -> tuple[str, str]:
    """`(os, arch)` as the release names them, e.g. `("linux", "amd64")`."""
    system = sys.platform if system is None else system
    machine = (platform.machine() if machine is None else machine).lower()
    os_name = {"darwin": "darwin", "win32": "windows"}.get(system, system)
    if os_name.startswith("linux"):
        os_name = "linux"
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
    return os_name, arch.get(machine, machine)


def cache_dir(env: Mapping[str, str]) -> Path:
    """`$OFFPROMPT_CACHE_DIR`, else the platform's user cache folder for offprompt."""
    given = env.get("OFFPROMPT_CACHE_DIR", "").strip()
    if given:
        return Path(given)
    import platformdirs

    return Path(platformdirs.user_cache_dir("offprompt", appauthor=False))


def _cached(cache: Path, key: tuple[str, str]) -> Path:
    name = "cloudflared.exe" if key[0] == "windows" else "cloudflared"
    return cache / "cloudflared" / RELEASE / name


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def locate(env: Mapping[str, str], *, cache: Path, key: tuple[str, str]) -> Path | None:
    """The cloudflared to run without downloading anything, or None.

    NoBinary when OFFPROMPT_CLOUDFLARED names something that cannot run: a setting that is
    wrong is reported, not silently replaced by another binary.
    """
    given = env.get("OFFPROMPT_CLOUDFLARED", "").strip()
    if given:
        path = Path(given).expanduser()
        if not _runnable(path):
            raise NoBinary(f"OFFPROMPT_CLOUDFLARED is {given}, which is not an executable file")
        return path
    found = shutil.which("cloudflared", path=env.get("PATH"))
    if found:
        return Path(found)
    cached = _cached(cache, key)
    return cached if _runnable(cached) else None


async def ensure(
    env: Mapping[str, str],
    *,
    key: tuple[str, str] | None = None,
    pins: Mapping[tuple[str, str], Pin] = PINS,
) -> Path:
    """A cloudflared to run: found, or downloaded into the cache and verified; else NoBinary."""
    key = key or platform_key()
    cache = cache_dir(env)
    found = locate(env, cache=cache, key=key)
    if found is not None:
        return found
    pin = pins.get(key)
    if pin is None or pin.sha256 is None:
        raise NoBinary(
            f"cloudflared was not found (OFFPROMPT_CLOUDFLARED, PATH, {cache}), and offprompt "
            f"pins no checksum for {key[0]} {key[1]}, so it downloads nothing: install "
            "cloudflared, or set OFFPROMPT_CLOUDFLARED to its path"
        )
    base = env.get("OFFPROMPT_CLOUDFLARED_BASE", "").strip() or DEFAULT_BASE
    return await asyncio.wait_for(
        asyncio.to_thread(fetch, pin, base=base, dest=_cached(cache, key)), DOWNLOAD_SECONDS
    )


def will_download(env: Mapping[str, str], *, key: tuple[str, str] | None = None) -> bool:
    """Whether `ensure` would download cloudflared: none is found and this platform has a pin.
    False also when OFFPROMPT_CLOUDFLARED is wrong (that is reported, nothing downloaded)."""
    key = key or platform_key()
    try:
        found = locate(env, cache=cache_dir(env), key=key)
    except NoBinary:
        return False
    pin = PINS.get(key)
    return found is None and pin is not None and pin.sha256 is not None


def fetch(pin: Pin, *, base: str, dest: Path) -> Path:
    """Download `pin` from `base`, check its SHA-256, and install it at `dest` (0700).

    NoBinary for anything that goes wrong; nothing is left at `dest` unless every check passed.
    """
    if pin.sha256 is None:
        raise NoBinary(f"{pin.asset} has no pinned checksum, so offprompt does not download it")
    url = urllib.parse.urljoin(base if base.endswith("/") else base + "/", pin.asset)
    if urllib.parse.urlsplit(url).scheme not in ("https", "http"):
        raise NoBinary("OFFPROMPT_CLOUDFLARED_BASE must be an http(s) URL")
    paths.make_private_folders(dest.parent)
    download = _temp(dest.parent)
    try:
        digest = _download(url, download)
        if not hmac.compare_digest(digest, pin.sha256.lower()):
            raise NoBinary(
                f"the downloaded {pin.asset} does not match the SHA-256 pinned in offprompt; "
                "it was deleted"
            )
        if pin.archive:
            _install(_extract(download, dest.parent), dest)
        else:
            _install(download, dest)
    finally:
        remove_file(download)
    return dest


def _temp(folder: Path) -> Path:
    """A fresh name in `folder` for a download or an extracted program (made by disk.paths)."""
    return folder / f".download-{secrets.token_hex(8)}"


def _download(url: str, to: Path) -> str:
    digest = hashlib.sha256()
    size = 0
    request = urllib.request.Request(url, headers={"User-Agent": "offprompt"})  # noqa: S310

    def chunks(answer: IO[bytes]) -> Iterator[bytes]:
        nonlocal size
        while chunk := answer.read(_CHUNK):
            size += len(chunk)
            if size > MAX_DOWNLOAD:
                raise NoBinary("the cloudflared download is larger than any release")
            digest.update(chunk)
            yield chunk

    try:
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
            paths.fill_new(to, chunks(answer))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        host = urllib.parse.urlsplit(url).hostname or url
        raise NoBinary(f"cloudflared could not be downloaded from {host}: {_why(exc)}") from None
    return digest.hexdigest()


def _why(exc: Exception) -> str:
    """What went wrong with a download, in words a person reads (never a class name)."""
    if isinstance(exc, urllib.error.HTTPError):
        return f"it answered HTTP {exc.code}"
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, TimeoutError):
        return "no answer within 30 s"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror.lower()
    if isinstance(reason, str) and reason:
        return reason
    return "no connection" if isinstance(reason, OSError) else "the address is not valid"


def _extract(archive: Path, folder: Path) -> Path:
    """The `cloudflared` member of a verified .tgz, copied to a temp file; nothing else read."""
    out = _temp(folder)
    try:
        with tarfile.open(archive, "r:gz") as tar:
            member = next(
                (m for m in tar.getmembers() if m.name in ("cloudflared", "./cloudflared")), None
            )
            if member is None or not member.isreg() or member.size > MAX_DOWNLOAD:
                raise NoBinary("the cloudflared archive holds no plain `cloudflared` file")
            source = tar.extractfile(member)
            if source is None:
                raise NoBinary("the cloudflared archive holds no plain `cloudflared` file")
            with source:
                paths.fill_new(out, iter(lambda: source.read(_CHUNK), b""))
    except (tarfile.TarError, OSError, EOFError) as exc:
        remove_file(out)
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "it is damaged"
        raise NoBinary(f"the cloudflared archive could not be read ({why.lower()})") from None
    except BaseException:
        remove_file(out)
        raise
    return out


def _install(path: Path, dest: Path) -> None:
    try:
        paths.install_executable(path, dest)
    except OSError as exc:
        raise NoBinary(
            f"cloudflared could not be saved in {dest.parent} ({exc.strerror})"
        ) from None
