from collections.abc import Callable, Iterator
from typing import Any

import pytest
from wire import Wire


@pytest.fixture
def spawn() -> Iterator[Callable[..., Wire]]:
    """Start servers; every one is killed after the test and checked to have written only JSON."""
    started: list[Wire] = []

    def start(*args: Any, **kwargs: Any) -> Wire:
        w = Wire(*args, **kwargs)
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill()
        assert w.stdout_is_only_json(), w.lines


@pytest.fixture
def wire(spawn: Callable[..., Wire]) -> Wire:
    return spawn()
