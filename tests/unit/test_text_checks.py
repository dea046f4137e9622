"""Text that is not what it looks like, in-process: the schema, the JSON-RPC reader, the log."""

import json
import logging
import re
from typing import Any

import pytest

from offprompt import log, schema
from offprompt.collect.request import validate
from offprompt.errors import RefusedRequest
from offprompt.mcp import jsonrpc
from offprompt.tools.schemas import collect_input, request_id_input

SURROGATE = "\ud800"


def line(message: dict[str, Any]) -> bytes:
    """A message as a client would send it: ASCII JSON, a lone surrogate as an escape."""
    return json.dumps(message).encode()


@pytest.mark.parametrize("value", ["API_KEY\n", "API_KEY\n\n", "\nAPI_KEY", "API KEY"])
def test_name_pattern_matches_the_whole_name(value: str) -> None:
    """`$` before a final newline does not satisfy the name pattern (it does not in ECMAScript)."""
    args = {"secrets": [{"name": value}], "reason": "r"}
    assert ["secrets[0].name must match ^[A-Z][A-Z0-9_]*$"] == list(
        schema.errors(collect_input(), args)
    )


def test_request_id_pattern_matches_the_whole_id() -> None:
    """A request id with a final newline is refused by the schema."""
    assert ["request_id must match ^[A-Za-z0-9_-]+$"] == list(
        schema.errors(request_id_input(), {"request_id": "abc\n"})
    )


def test_lone_surrogate_is_refused_before_other_rules(canary: str) -> None:
    """A string holding a lone surrogate gets one message, which quotes nothing of it."""
    args = {"secrets": [{"name": "API_KEY"}], "reason": canary + SURROGATE}
    problems = list(schema.errors(collect_input(), args))
    assert ["reason must be valid Unicode text (it holds a lone surrogate)"] == problems


def test_field_name_with_a_lone_surrogate_is_not_echoed() -> None:
    """An unknown field's name is echoed, unless it is not valid Unicode."""
    args = {"secrets": [{"name": "API_KEY"}], "reason": "r", "x" + SURROGATE: 1}
    assert ["arguments has a field whose name is not valid Unicode text"] == list(
        schema.errors(collect_input(), args)
    )


@pytest.mark.parametrize(
    ("entry", "reason", "says"),
    [
        ({"name": "A", "caption": "a\x00b"}, "r", "secrets[0].caption must not contain control"),
        ({"name": "A", "caption": "a\nb"}, "r", "secrets[0].caption must not contain control"),
        ({"name": "A"}, "r\x00", "reason must not contain control characters other than tabs"),
        ({"name": "A"}, "r\x1b[31m", "reason must not contain control characters other than"),
        ({"name": "A"}, "r\x85", "reason must not contain control characters other than"),
    ],
)
def test_control_characters_in_shown_text_are_refused(
    entry: dict[str, str], reason: str, says: str
) -> None:
    """Text shown to the person holds no NUL or escape sequence."""
    with pytest.raises(RefusedRequest, match=re.escape(says)):
        validate({"secrets": [entry], "reason": reason})


def test_reason_keeps_tabs_and_line_breaks() -> None:
    """Markdown needs line breaks; they are not refused."""
    validate({"secrets": [{"name": "A"}], "reason": "one\n\ttwo\r\nthree"})


def test_id_that_is_not_unicode_is_invalid_request_without_id() -> None:
    """JSON-RPC: an id that cannot be read back is answered with id null."""
    msg = jsonrpc.classify(line({"jsonrpc": "2.0", "id": SURROGATE, "method": "ping"}))
    assert isinstance(msg, jsonrpc.Invalid)
    assert (None, jsonrpc.INVALID_REQUEST) == (msg.id, msg.error.code)


def test_arguments_are_left_to_the_tool() -> None:
    """Inside a tools/call's arguments, the tool's schema answers (with a refusal)."""
    params = {"name": "collect_secret", "arguments": {"reason": SURROGATE}}
    msg = jsonrpc.classify(
        line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    )
    assert isinstance(msg, jsonrpc.Request)


def test_arguments_of_another_method_are_checked() -> None:
    """Only tools/call has arguments a tool checks; elsewhere the key is no exception."""
    params = {"arguments": {"reason": SURROGATE}}
    msg = jsonrpc.classify(line({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": params}))
    assert isinstance(msg, jsonrpc.Invalid)
    assert (1, jsonrpc.INVALID_PARAMS) == (msg.id, msg.error.code)
    assert "params.arguments.reason is not valid Unicode" in msg.error.message


def test_dumps_never_fails_on_a_lone_surrogate() -> None:
    """Should one get this far, it goes out as a JSON escape, and the line is valid JSON."""
    data = jsonrpc.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": "a" + SURROGATE}})
    assert {"text": "a" + SURROGATE} == json.loads(data)["result"]


def test_log_lines_stay_one_prefixed_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A logged name holding a line break or a lone surrogate cannot start an unprefixed line."""
    logger = logging.getLogger("offprompt.test-text-checks")
    handler = logging.StreamHandler()
    handler.setFormatter(log._Formatter())
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("collecting %s", "API_KEY\nfake: line" + SURROGATE)
    finally:
        logger.removeHandler(handler)
    err = capsys.readouterr().err
    assert "offprompt: collecting API_KEY\\u000afake: line\\ud800\n" == err
