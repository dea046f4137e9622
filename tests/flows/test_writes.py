"""What lands where: generated-only requests, kept keys, the file sink, and which project."""

import subprocess
from pathlib import Path

from dotenv import dotenv_values

from .flow import Flow, refusal_text, secrets_of, structured, submit, texts

GENERATED = {
    "secrets": [{"name": "SESSION_SECRET", "generate": {"bytes": 32, "encoding": "hex"}}],
    "reason": "Sign session cookies.",
}


async def test_generated_only_is_written_without_a_page(flow: Flow) -> None:
    """Only generated keys: written at once, no dialog, no browser, no fingerprint."""
    env = flow.person("record")
    async with flow.connect("legacy", action="accept", env=env) as (client, seen):
        result = await client.call_tool("collect_secret", GENERATED)
    out = structured(result)
    assert out["status"] == "written"
    assert out["names"] == ["SESSION_SECRET"]
    assert out["file_keys"] == ["SESSION_SECRET"]
    assert "fingerprint" not in out
    assert "tell_user" not in out
    assert "kept" not in out
    assert texts(result)[0] == "Wrote 1 value to .env"
    assert seen.elicitations == []
    assert not flow.browser_opened()
    value = dotenv_values(flow.project / ".env")["SESSION_SECRET"]
    assert value is not None
    assert len(bytes.fromhex(value)) == 32
    (entry,) = flow.journal()
    assert entry["fingerprint"] is None
    flow.assert_contained(value, stderr=seen.stderr, results=(result,), name="SESSION_SECRET")


async def test_generated_key_already_set_is_kept(flow: Flow, canary: str) -> None:
    """A generated key the file already holds is kept byte for byte: 'already held'."""
    before = f"# config\nSESSION_SECRET={canary}\nOTHER=1\n"
    (flow.project / ".env").write_text(before)
    async with flow.connect("legacy") as (client, seen):
        result = await client.call_tool("collect_secret", GENERATED)
    out = structured(result)
    assert out["status"] == "written"
    assert out["kept"] == ["SESSION_SECRET"]
    assert out["file_keys"] == ["SESSION_SECRET", "OTHER"]
    assert texts(result)[0] == ".env already held SESSION_SECRET"
    assert "kept" in out["note"]
    assert (flow.project / ".env").read_text() == before
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,), name="SESSION_SECRET")


async def test_typed_and_generated_keys_fingerprint_only_what_was_typed(
    flow: Flow, canary: str
) -> None:
    """A generated field left empty is made by the server and left out of the fingerprint."""
    args = {
        "secrets": [
            {"name": "API_KEY"},
            {"name": "SESSION_SECRET", "generate": {"bytes": 16, "encoding": "base64url"}},
        ],
        "reason": "The API key, and a session secret.",
    }
    async with flow.connect("legacy") as (client, seen):
        first = await client.call_tool("collect_secret", args)
        fingerprint = await submit(structured(first)["url"], {"API_KEY": canary})
        done = await client.call_tool(
            "await_secret", {"request_id": structured(first)["request_id"]}
        )
    flow.assert_fingerprint(done, fingerprint)
    assert structured(done)["file_keys"] == ["API_KEY", "SESSION_SECRET"]
    made = dotenv_values(flow.project / ".env")["SESSION_SECRET"]
    assert made
    assert made.encode() not in flow.traffic()
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, done))


async def test_file_sink_holds_exactly_the_value(flow: Flow, canary: str) -> None:
    """A file sink writes the one value as the whole file, line breaks and all."""
    value = f"-----BEGIN TEST KEY-----\n{canary}\n-----END TEST KEY-----\n"
    args = secrets_of("TLS_KEY", sink={"kind": "file", "path": "certs.pem"})
    async with flow.connect("legacy") as (client, seen):
        first = await client.call_tool("collect_secret", args)
        assert structured(first)["sink"] == {"kind": "file", "path": "certs.pem"}
        fingerprint = await submit(structured(first)["url"], {"TLS_KEY": value})
        done = await client.call_tool(
            "await_secret", {"request_id": structured(first)["request_id"]}
        )
    flow.assert_fingerprint(done, fingerprint, file="certs.pem")
    out = structured(done)
    assert out["sink"] == {"kind": "file", "path": "certs.pem"}
    assert "file_keys" not in out
    assert (flow.project / "certs.pem").read_bytes() == value.encode()
    flow.assert_contained(
        value, stderr=seen.stderr, results=(first, done), file="certs.pem", whole_file=True
    )
    assert canary.encode() not in flow.traffic()


async def test_server_started_in_home_is_refused(flow: Flow, isolated_env: Path) -> None:
    """A server whose cwd is $HOME, with nothing else to go by, refuses and writes nothing."""
    async with flow.connect("legacy", cwd=isolated_env) as (client, _):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
    assert "could not tell which project folder" in refusal_text(result)
    assert not (isolated_env / ".env").exists()


async def test_server_started_at_root_is_refused(flow: Flow) -> None:
    """A server whose cwd is / refuses and writes nothing."""
    root = Path("/")
    async with flow.connect("legacy", cwd=root) as (client, _):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
    assert "could not tell which project folder" in refusal_text(result)
    assert not (root / ".env").exists()


async def test_claude_project_dir_decides_when_cwd_is_home(
    flow: Flow, isolated_env: Path, canary: str
) -> None:
    """cwd $HOME with CLAUDE_PROJECT_DIR set: the value lands in that project."""
    env = {"CLAUDE_PROJECT_DIR": str(flow.project)}
    async with flow.connect("legacy", cwd=isolated_env, env=env) as (client, seen):
        first = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        fingerprint = await submit(structured(first)["url"], {"API_KEY": canary})
        done = await client.call_tool(
            "await_secret", {"request_id": structured(first)["request_id"]}
        )
    assert not (isolated_env / ".env").exists()
    assert structured(done)["sink"] == {"kind": "dotenv", "path": ".env"}
    flow.assert_fingerprint(done, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, done))


async def test_mcp_root_decides_when_cwd_is_home(
    flow: Flow, isolated_env: Path, canary: str
) -> None:
    """cwd $HOME and a client that lists roots: the value lands in the root's folder."""
    roots = [flow.project.resolve().as_uri()]
    async with flow.connect("legacy", cwd=isolated_env, roots=roots) as (client, seen):
        first = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        fingerprint = await submit(structured(first)["url"], {"API_KEY": canary})
        done = await client.call_tool(
            "await_secret", {"request_id": structured(first)["request_id"]}
        )
    assert not (isolated_env / ".env").exists()
    flow.assert_fingerprint(done, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, done))


async def test_generated_key_into_a_tracked_file_is_refused(flow: Flow, canary: str) -> None:
    """Generated-only into a git-tracked .env: refused (nobody can allow it), file unchanged."""
    before = f"OTHER={canary}\n"
    (flow.project / ".env").write_text(before)
    git = ["git", "-C", str(flow.project), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", ".env"], ["commit", "-q", "-m", "tracked"]):
        subprocess.run([*git, *args], check=True)  # noqa: ASYNC221 - set-up, before the server
    async with flow.connect("legacy") as (client, seen):
        result = await client.call_tool("collect_secret", GENERATED)
    assert "tracked" in refusal_text(result)
    assert (flow.project / ".env").read_text() == before
    assert flow.journal() == []
    assert canary.encode() not in flow.traffic()
    assert canary not in seen.stderr
