"""web/seal.js seals what offprompt.crypto.seal opens, and reads only valid link keys (in Node)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import node_or_skip

from offprompt.crypto.seal import Opened, SealError, SealKey, b64u_encode

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "web" / "seal.js"
TOKEN = "00112233445566778899aabbccddeeff"
NONCE = "page-nonce-0123456789abcdefghijk"

RUNNER = r"""
const fs = require("fs");
const vm = require("vm");
vm.runInThisContext(fs.readFileSync(process.argv[1], "utf8"), { filename: process.argv[1] });
const input = JSON.parse(fs.readFileSync(0, "utf8"));
(async () => {
  const out = { sealed: [], keys: [], checks: [] };
  for (const c of input.seal) {
    const point = offpromptLinkKey("#k=" + c.point);
    out.sealed.push(await offpromptSeal(point, c.token, c.nonce, c.plaintext));
  }
  for (const hash of input.hashes) {
    const point = offpromptLinkKey(hash);
    out.keys.push(point ? Buffer.from(point).toString("hex") : null);
  }
  for (const hex of input.points) {
    out.checks.push(await offpromptCheckKey(new Uint8Array(Buffer.from(hex, "hex"))));
  }
  out.supported = offpromptSealSupported();
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
"""


def run(payload: dict[str, Any]) -> dict[str, Any]:
    node = node_or_skip()
    done = subprocess.run(
        [node, "-e", RUNNER, str(SCRIPT)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def payload(**kw: Any) -> dict[str, Any]:
    return {"seal": [], "hashes": [], "points": [], **kw}


def test_page_seal_opens_in_python(canary: str) -> None:
    """A value sealed by seal.js to a request's point opens with that request's key."""
    key = SealKey()
    fp_key = b64u_encode(bytes(32))
    values = {"API_KEY": canary, "OTHER": 'ü\n"x"'}
    plain = {"values": values, "allow_tracked": True, "fp_key": fp_key}
    point = key.fragment.removeprefix("k=")
    out = run(payload(seal=[{"point": point, "token": TOKEN, "nonce": NONCE, "plaintext": plain}]))
    opened = key.open(out["sealed"][0], token=TOKEN, nonce=NONCE)
    assert opened == Opened(values=values, allow_tracked=True, fp_key=fp_key)


def test_page_seal_is_fresh_each_time() -> None:
    """Two seals of the same plaintext differ (a new page key pair and IV every time)."""
    key = SealKey()
    case = {
        "point": key.fragment.removeprefix("k="),
        "token": TOKEN,
        "nonce": NONCE,
        "plaintext": {"values": {}, "allow_tracked": False},
    }
    first, second = run(payload(seal=[case, case]))["sealed"]
    assert (first.split(".")[1:3] == second.split(".")[1:3], first[:3]) == (False, "v1.")


def test_page_seal_does_not_open_for_another_nonce() -> None:
    """The nonce the page read is bound into the seal."""
    key = SealKey()
    case = {
        "point": key.fragment.removeprefix("k="),
        "token": TOKEN,
        "nonce": NONCE,
        "plaintext": {"values": {}, "allow_tracked": False},
    }
    sealed = run(payload(seal=[case]))["sealed"][0]
    with pytest.raises(SealError):
        key.open(sealed, token=TOKEN, nonce=NONCE + "x")


def test_link_key_reads_only_a_valid_fragment() -> None:
    """`#k=` with 87 canonical base64url characters of a 0x04 point, and nothing else, is a key."""
    key = SealKey()
    good = "#" + key.fragment
    compressed = "#k=" + b64u_encode(b"\x02" + key.public_point[1:33])
    hashes = [
        good,
        good + "A",
        good[:-1],
        good + "&x=1",
        "#k=" + b64u_encode(b"\x05" + key.public_point[1:]),
        compressed,
        "#K=" + key.fragment[2:],
        "",
        "#",
        "#k=+" + good[4:],
    ]
    keys = run(payload(hashes=hashes))["keys"]
    assert keys == [key.public_point.hex()] + [None] * (len(hashes) - 1)


def test_check_key_refuses_a_point_off_the_curve() -> None:
    """A 65-byte 0x04 string that is not a P-256 point fails the page's key check."""
    point = bytearray(SealKey().public_point)
    point[-1] ^= 1
    checks = run(payload(points=[SealKey().public_point.hex(), bytes(point).hex()]))["checks"]
    assert checks == [True, False]
