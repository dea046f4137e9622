"""web/fingerprint.js computes the same fingerprint as offprompt.crypto.fingerprint (in Node)."""

import json
import random
import subprocess
from pathlib import Path
from typing import Any

from helpers import node_or_skip

from offprompt.crypto import tokens
from offprompt.crypto.fingerprint import EMOJI, fingerprint

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "web" / "fingerprint.js"


# Loads the page script as a plain script (no module wrapper), then answers every case at once.
RUNNER = r"""
const fs = require("fs");
const vm = require("vm");
vm.runInThisContext(fs.readFileSync(process.argv[1], "utf8"), { filename: process.argv[1] });
const input = JSON.parse(fs.readFileSync(0, "utf8"));
(async () => {
  const out = { results: [], b64u: [], errors: [] };
  for (const c of input.cases) {
    const fp = await offpromptFingerprint(Buffer.from(c.key, "hex"), c.pairs, input.table);
    out.results.push(fp);
  }
  for (const k of input.keys) {
    out.b64u.push(offpromptFpKeyToB64u(new Uint8Array(Buffer.from(k, "hex"))));
  }
  for (const bad of input.bad) {
    try {
      await offpromptFingerprint(Buffer.from(bad.key, "hex"), bad.pairs, bad.table ?? input.table);
      out.errors.push(null);
    } catch (e) {
      out.errors.push(e.name);
    }
  }
  out.newKey = offpromptFpKeyToB64u(offpromptNewFpKey());
  out.presentation = input.table.map(([e]) =>
    /^\p{Emoji_Presentation}$/u.test(e) && !/\p{Emoji_Modifier_Base}/u.test(e));
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
"""

PIECES = [
    '"',
    "\\",
    "\n",
    "\r",
    "\t",
    "\b",
    "\f",
    "\x00",
    "\x01",
    "\x1f",
    "\x7f",
    "\x80",
    "\x9f",
    "\u00a0",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\ufffd",
    "é",
    "漢字",
    "한국",
    "🍋",
    "👩‍💻",
    "🇫🇷",
    "/",
    "<",
    ">",
    "&",
    "'",
    "=",
    "$",
    "`",
    " ",
    "a",
    "Z",
    "0",
    "_",
    "-",
]


def random_text(rng: random.Random, size: int) -> str:
    """Text mixing JSON's awkward characters, emoji, CJK and random code points."""
    out = []
    for _ in range(size):
        if rng.random() < 0.2:
            c = rng.randrange(0x110000)
            if 0xD800 <= c <= 0xDFFF:
                c = 0xFFFD
            out.append(chr(c))
        else:
            out.append(rng.choice(PIECES))
    return "".join(out)


def cases() -> list[tuple[bytes, list[tuple[str, str]]]]:
    """Random keys with 0 to 12 named values, plus every Unicode scalar value in one string."""
    rng = random.Random(20261130)  # noqa: S311 - seeded on purpose: reproducible cases
    found: list[tuple[bytes, list[tuple[str, str]]]] = []
    for _ in range(250):
        key = rng.randbytes(32)
        pairs = [
            (f"KEY_{i}_{rng.randrange(1000)}", random_text(rng, rng.randrange(0, 40)))
            for i in range(rng.randrange(0, 13))
        ]
        found.append((key, pairs))
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    found.append((bytes(32), [("EVERY", every)]))
    found.append((b"\xff" * 32, [("EMPTY", "")]))
    return found


def run_node(payload: dict[str, Any]) -> dict[str, Any]:
    """Run the runner over one JSON payload and return its JSON answer."""
    node = node_or_skip()
    proc = subprocess.run(
        [node, "-e", RUNNER, str(SCRIPT)],
        input=json.dumps(payload).encode("ascii"),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert 0 == proc.returncode, proc.stderr.decode(errors="replace")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def test_node_matches_python() -> None:
    """Every case, key helpers and refusals agree between the page script and Python."""
    all_cases = cases()
    keys = [bytes(32), b"\xff" * 32, bytes(range(32)), *(tokens.new_fp_key() for _ in range(20))]
    bad = [
        {"key": "00" * 31, "pairs": []},
        {"key": "00" * 33, "pairs": []},
        {"key": "00" * 32, "pairs": [["A", "x\ud800y"]]},
        {"key": "00" * 32, "pairs": [["A", "\udc00"]]},
        {"key": "00" * 32, "pairs": [], "table": [list(e) for e in EMOJI[:63]]},
        {"key": "00" * 32, "pairs": [["A", "\ud83c\udf4b ok"]]},
    ]
    out = run_node(
        {
            "table": [list(e) for e in EMOJI],
            "cases": [{"key": k.hex(), "pairs": [list(p) for p in ps]} for k, ps in all_cases],
            "keys": [k.hex() for k in keys],
            "bad": bad,
        }
    )

    expected = []
    for key, pairs in all_cases:
        fp = fingerprint(key, pairs)
        expected.append(
            {"indices": list(fp.indices), "emoji": list(fp.emoji), "names": list(fp.names)}
        )
    assert len(all_cases) >= 200
    assert expected == out["results"]
    assert [tokens.encode_fp_key(k) for k in keys] == out["b64u"]
    assert ["TypeError", "TypeError", "TypeError", "TypeError", "TypeError", None] == out["errors"]
    assert tokens.parse_fp_key(out["newKey"]) is not None
    assert [True] * 64 == out["presentation"]
