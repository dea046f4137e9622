"""secret_status around a real write: ask what is missing, collect only that, ask again."""

import jsonschema
from helpers import assert_no_part

from .flow import Flow, secrets_of, structured, submit


async def test_status_before_and_after_a_write(flow: Flow, canary: str) -> None:
    """Before: the example's keys, the set one left alone; after the person writes the missing
    ones, each is set (the wrong Stripe key a mismatch), and no value ever crossed the wire."""
    (flow.project / ".env.example").write_text("KEPT_KEY=\nAPI_KEY=\nSTRIPE_SECRET_KEY=\n")
    (flow.project / ".env").write_text(f"KEPT_KEY={canary}-kept\n")
    wrong = f"pk_test_{canary}"
    async with flow.connect("legacy") as (client, seen):
        (tool,) = [t for t in (await client.list_tools()).tools if t.name == "secret_status"]
        before = structured(await client.call_tool("secret_status", {}))
        first = await client.call_tool("collect_secret", secrets_of(*before["missing"]))
        await submit(structured(first)["url"], {"API_KEY": canary, "STRIPE_SECRET_KEY": wrong})
        done = await client.call_tool(
            "await_secret", {"request_id": structured(first)["request_id"]}
        )
        after = structured(await client.call_tool("secret_status", {}))

    assert before["missing"] == ["API_KEY", "STRIPE_SECRET_KEY"]
    assert structured(done)["status"] == "written"
    assert after["missing"] == []
    assert [(k["name"], k["status"], k.get("check")) for k in after["keys"]] == [
        ("KEPT_KEY", "set", None),
        ("API_KEY", "set", None),
        ("STRIPE_SECRET_KEY", "set", "mismatch"),
    ]
    for out in (before, after):
        jsonschema.validate(out, tool.output_schema)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, done))
    flow.assert_contained(wrong, stderr=seen.stderr, name="STRIPE_SECRET_KEY")
    assert_no_part(canary, flow.traffic().decode(), seen.stderr)
