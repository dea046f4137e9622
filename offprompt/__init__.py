"""offprompt: collect secrets from a person for a coding agent, without the model seeing them."""

from __future__ import annotations

# OffpromptError is loaded when first asked for: the guard hook imports this package on every
# tool call and raises none of the error tree (tests/guard/test_hook_start.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from offprompt.errors import OffpromptError

__version__ = "0.1.0"
__all__ = ["OffpromptError", "__version__"]


def __getattr__(name: str) -> object:
    if name == "OffpromptError":
        from offprompt.errors import OffpromptError

        return OffpromptError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
