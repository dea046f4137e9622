"""collect_secret arguments → the validated request: what the schema alone cannot say; and the
map of validation gates in collect/request.py's docstring names things that exist."""

import importlib
import re
from typing import Any

import pytest

from offprompt import schema
from offprompt.collect import request as request_module
from offprompt.collect.request import validate
from offprompt.errors import RefusedRequest
from offprompt.spec import GenerateSpec, SecretSpec, SinkSpec
from offprompt.tools.schemas import collect_input


def args(*secrets: dict[str, Any], **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"secrets": list(secrets), "reason": "tests"}
    out.update(extra)
    assert list(schema.errors(collect_input(), out)) == []
    return out


def test_defaults() -> None:
    """A bare name becomes a secret spec for .env."""
    request = validate(args({"name": "API_KEY"}))
    assert request.secrets == (SecretSpec("API_KEY"),)
    assert request.sink == SinkSpec("dotenv", ".env")


def test_sink_path_without_kind_is_a_dotenv_path() -> None:
    """{"path": ".env.local"} needs no kind: dotenv is the default."""
    sink = validate(args({"name": "API_KEY"}, sink={"path": ".env.local"})).sink
    assert sink == SinkSpec("dotenv", ".env.local")


def test_generate_defaults() -> None:
    """generate {} means 32 bytes in base64url."""
    specs = validate(args({"name": "SESSION_SECRET", "generate": {}})).secrets
    assert specs[0].generate == GenerateSpec(32, "base64url")


def test_every_field_is_carried() -> None:
    """provider, secret and caption reach the spec."""
    entry = {"name": "STRIPE_KEY", "provider": "stripe/secret_key", "secret": False, "caption": "c"}
    specs = validate(args(entry)).secrets
    assert specs[0] == SecretSpec("STRIPE_KEY", None, "stripe/secret_key", None, False, "c")


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (args({"name": "A"}, {"name": "A"}), "A is named twice"),
        (args({"name": "A", "generate": {}, "format": "hex"}), "use at most one of"),
        (args({"name": "A"}, {"name": "B"}, sink={"kind": "file", "path": "k"}), "exactly one"),
        (args({"name": "A"}, sink={"kind": "file"}), "needs a path"),
        (args({"name": "MY_KEY", "provider": "stripe"}), "stripe/secret_key"),
    ],
)
def test_refusals(arguments: dict[str, Any], says: str) -> None:
    """Each rule beyond the schema is refused with a message that says what to do."""
    with pytest.raises(RefusedRequest, match=says):
        validate(arguments)


@pytest.mark.parametrize(
    "bad",
    [
        {"secrets": [], "reason": "r"},
        {"secrets": [{"name": "lower"}], "reason": "r"},
        {"secrets": [{"name": "A"}] * 13, "reason": "r"},
        {"secrets": [{"name": "A"}]},
        {"secrets": [{"name": "A"}], "reason": ""},
        {"secrets": [{"name": "A", "generate": {"bytes": 8}}], "reason": "r"},
        {"secrets": [{"name": "A", "caption": "x" * 91}], "reason": "r"},
        {"secrets": [{"name": "A"}], "reason": "r", "extra": 1},
        {"secrets": [{"name": "A", "provider": "nope"}], "reason": "r"},
        {"secrets": [{"name": "A"}], "reason": "r", "sink": {"kind": "s3"}},
    ],
)
def test_schema_refuses(bad: dict[str, Any]) -> None:
    """The input schema itself refuses each of these."""
    assert list(schema.errors(collect_input(), bad))


_DOTTED = re.compile(r"`(offprompt(?:\.\w+)+)`")


def _resolve(dotted: str) -> object:
    """The module, or the attribute of the longest importable module prefix, `dotted` names."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        for attr in parts[end:]:
            found = getattr(found, attr)
        return found
    raise ModuleNotFoundError(dotted)


def test_the_gates_map_names_gates_that_exist() -> None:
    """Every `offprompt.…` the map names imports or resolves, so a gate that moves or is renamed
    fails here instead of leaving the map wrong."""
    named = _DOTTED.findall(request_module.__doc__ or "")
    assert len(named) >= 10  # the map is there, gate by gate
    missing = []
    for dotted in named:
        try:
            _resolve(dotted)
        except (ImportError, AttributeError):
            missing.append(dotted)
    assert [] == missing


@pytest.mark.parametrize(
    ("owner", "attr"),
    [
        ("offprompt.sinks.interface", "Sink.check_takes"),
        ("offprompt.sinks.destinations.interface", "Destination.unsafe"),
        ("offprompt.collect.request", "check_names"),
        ("offprompt.status", "is_stand_in"),
    ],
)
def test_the_gates_the_map_names_by_their_short_names_exist(owner: str, attr: str) -> None:
    """The gates the map names without their module are where the map says."""
    found: object = importlib.import_module(owner)
    for part in attr.split("."):
        found = getattr(found, part)
    assert callable(found)
