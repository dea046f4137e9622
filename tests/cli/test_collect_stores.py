"""`offprompt collect --also vault:MOUNT/PATH --also aws:SECRET_ID` (DESIGN §13.1) from a terminal,
the person typing in real Chromium, into the real OpenBao and moto's Secrets Manager: each store
gets the value, and it is in no output offprompt prints, no journal line, no `fingerprints`,
`keys` or `status` answer, and no argv or environment of the programs it ran; `remove
--everywhere` leaves both stores as they were."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import chromium_or_skip
from stores_kit import DUMMY_AWS, Bao, Moto, bao_server, make_shims, moto_server, scan_tree

ROOT = Path(__file__).resolve().parents[2]
PERSON = ROOT / "tests" / "flows" / "person.py"

BROWSER = """#!{python}
import json, os, sys
os.environ.update(json.load(open({hands!r})))
os.execv(sys.executable, [sys.executable, {person!r}, *sys.argv[1:]])
"""

__all__ = ["bao_server", "moto_server"]  # the fixtures, used by name below


def offprompt(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "offprompt", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.browser
def test_collect_sends_to_both_stores_and_the_value_is_nowhere_else(
    project: Path, tmp_path: Path, bao_server: Bao, moto_server: Moto, canary: str
) -> None:
    """.env, the OpenBao secret and the Secrets Manager secret hold the value; stdout names
    each store and target; the journal and `fingerprints --json` name kind, target and key
    names; stdout, stderr, `keys`, `status`, the state folder and every program's recorded argv
    and environment hold no part of it, nor the store's token."""
    chromium = chromium_or_skip()
    shims = make_shims(tmp_path / "shims")
    home = tmp_path / "home"  # `remove --everywhere` below must touch no real config
    home.mkdir()
    state = tmp_path / "state"
    env = {
        "PATH": f"{shims.bin}:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": str(home),
        "OFFPROMPT_SANDBOX": "0",
        "OFFPROMPT_STATE_DIR": str(state),
        "BAO_ADDR": bao_server.addr,
        "BAO_TOKEN": bao_server.token,
        **DUMMY_AWS,
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_SECRETS_MANAGER": moto_server.endpoint,
    }
    # The person's hands get the value from a file of their own, so offprompt's environment
    # (which every program it runs inherits) holds none of it.
    hands = tmp_path / "person-env.json"
    hands.write_text(
        json.dumps(
            {
                "PERSON_VALUES": json.dumps({"STRIPE_KEY": canary}),
                "PERSON_MODE": "chromium",
                "PERSON_OUT": str(tmp_path / "person.jsonl"),
                "PERSON_CHROMIUM": chromium,
            }
        )
    )
    browser = tmp_path / "browser"
    browser.write_text(BROWSER.format(python=sys.executable, hands=str(hands), person=str(PERSON)))
    browser.chmod(0o755)
    also = ("--also", "vault:secret/app", "--also", "aws:team/app")
    done = offprompt(project, {**env, "BROWSER": f"{browser} %s"}, "collect", "STRIPE_KEY", *also)
    assert done.returncode == 0, done.stderr
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"
    assert bao_server.data("secret/app") == {"STRIPE_KEY": canary}
    assert json.loads(moto_server.secret("team/app")) == {"STRIPE_KEY": canary}
    vault = f"secret/app at {bao_server.addr}"
    aws = f"team/app in us-east-1 at {moto_server.endpoint}"
    lines = done.stdout.splitlines()
    assert f"vault {vault}: sent (sent STRIPE_KEY to secret/app (a new secret))" in lines
    assert f"aws {aws}: sent (sent STRIPE_KEY to team/app (a new secret))" in lines
    shown = offprompt(project, env, "fingerprints", "--json")
    entry = json.loads(shown.stdout)[0]
    assert entry["names"] == ["STRIPE_KEY"]
    assert entry["destinations"] == [
        {"kind": "vault", "target": vault, "status": "sent"},
        {"kind": "aws", "target": aws, "status": "sent"},
    ]
    keys = offprompt(project, env, "keys")
    status = offprompt(project, env, "status", "--json")
    assert keys.stdout.split() == ["STRIPE_KEY"]
    # The stores' entries by kind, target and names only (DESIGN §13.1), from the journal.
    stores = offprompt(project, env, "keys", "--stores")
    assert stores.stdout.splitlines() == [f"vault {vault}: STRIPE_KEY", f"aws {aws}: STRIPE_KEY"]
    listed = json.loads(offprompt(project, env, "keys", "--stores", "--json").stdout)
    assert listed == [
        {"kind": "vault", "target": vault, "names": ["STRIPE_KEY"]},
        {"kind": "aws", "target": aws, "names": ["STRIPE_KEY"]},
    ]
    printed = [done.stdout, done.stderr, shown.stdout, shown.stderr, keys.stdout, keys.stderr]
    printed += [stores.stdout, stores.stderr]
    printed += [status.stdout, status.stderr]
    for text in printed:
        assert canary not in text
        assert bao_server.token not in text
    assert canary not in shims.text(), "a value reached a program's argv or environment"
    assert len(shims.records()) == 4  # bao: read, put; aws: read, create
    assert scan_tree(state, canary) == []
    assert scan_tree(project, canary, allowed={project / ".env"}) == []
    assert bao_server.token not in "".join(p.read_text() for p in state.rglob("*") if p.is_file())
    # Uninstalling leaves the stores alone (DESIGN §13.2): the secrets are as they were.
    removed = offprompt(project, env, "remove", "--everywhere")
    assert removed.returncode == 0, removed.stderr
    assert canary not in removed.stdout + removed.stderr
    assert bao_server.data("secret/app") == {"STRIPE_KEY": canary}
    assert json.loads(moto_server.secret("team/app")) == {"STRIPE_KEY": canary}
