"""The map of validation gates in collect/request.py's docstring names things that exist."""

import importlib
import re

import pytest

from offprompt.collect import request

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
    named = _DOTTED.findall(request.__doc__ or "")
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
