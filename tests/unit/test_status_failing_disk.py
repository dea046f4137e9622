"""secret_status over a file system that fails under the read: a refusal naming the cause, never
an internal error (seen in CI: a hung mount let go answers ENOTCONN wherever the call waited)."""

import errno
from pathlib import Path
from typing import Any

import pytest

from offprompt import status
from offprompt.mcp.tool import ToolContext
from offprompt.tools.service import Service


def context() -> ToolContext:
    return ToolContext(
        tool="secret_status",
        revision="2025-11-25",
        client_info={"name": "test-agent"},
        client_capabilities={},
        meta={},
        peer=None,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("code", [errno.ENOTCONN, errno.EIO, errno.ESTALE])
async def test_a_read_that_fails_is_refused_with_its_cause(
    project: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    def fails(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(code, "the file system failed")

    monkeypatch.setattr(status, "report", fails)
    service = Service(cwd=project, env={"OFFPROMPT_STATE_DIR": str(project.parent / "state")})
    try:
        result = await service.secret_status({"path": ".env"}, context())
    finally:
        await service.close()

    assert result.is_error
    text = result.content[0]["text"]
    assert "could not read the project's files" in text
    assert "call secret_status again" in text
