"""The one error root and the few kinds a person or an agent can act on.

    OffpromptError
    ├── RefusedRequest     a tool call that asks for something offprompt will not do
    │   └── NotLinked      an `also` destination the project's own files do not link it to
    ├── WriteError         the destination could not be written; nothing changed
    │   ├── UnsafeValue    a value no dotenv quoting carries exactly for every reader
    │   └── TrackedFile    the destination is tracked by git and the person did not allow it
    ├── ProjectError       no project folder could be found or used
    ├── Unreadable         a file secret_status must read exists but cannot be read
    ├── RequestClosed      a submit for a request already written, cancelled or expired
    ├── ValidationFailed   submitted fields that fail their rules (names the rules, not values)
    ├── CheckRejected      a provider refused a submitted key; nothing written until "anyway"
    ├── Refusal            the page's answer other than 200, rendered by its middleware
    ├── RpcError           a JSON-RPC error object answered to the MCP client
    ├── UsageProblem       a command line `offprompt collect` cannot run; exit 2
    ├── ConfigError        an agent's config file could not be read or written; left unchanged
    ├── NoBinary           no cloudflared to run, and what the person can do
    ├── TunnelFailed       cloudflared ran but gave no working tunnel
    └── PortUnavailable    the page server cannot listen on the port OFFPROMPT_PORT names

Every class drawn is defined here, and tests/unit/test_errors.py keeps this drawing true.

Each is caught at a boundary (the protocol loop, the page middleware, the CLI) and turned into
an answer. The few exceptions outside this tree are caught one step from where they are raised
and turned into one of these; each says so in its docstring.

Messages never contain a secret value: they name keys, paths and rules only.
"""

from __future__ import annotations

# No imports at run time: the guard hook and the first reply load this module, and each import
# would add to their time (the hook's test counts `typing` and `dataclasses` among the slow ones).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from offprompt.spec import Verdict

__all__ = [
    "CheckRejected",
    "ConfigError",
    "FieldPath",
    "NoBinary",
    "NotLinked",
    "OffpromptError",
    "PortUnavailable",
    "ProjectError",
    "Refusal",
    "RefusedRequest",
    "RequestClosed",
    "RpcError",
    "TrackedFile",
    "TunnelFailed",
    "Unreadable",
    "UnsafeValue",
    "UsageProblem",
    "ValidationFailed",
    "WriteError",
    "field_name",
]

FieldPath = tuple[str | int, ...]
"""Where in a tool's arguments something is: `("secrets", 0, "provider")`; `()` is the whole."""


def field_name(path: FieldPath) -> str:
    """A field as an agent wrote it: `("secrets", 0, "provider")` → `secrets[0].provider`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class OffpromptError(Exception):
    """Base of every error offprompt raises on purpose."""


class RefusedRequest(OffpromptError):
    """A tool call that offprompt refuses; the message says what to do instead.

    `field` is the argument the refusal is about (`()` when it is about the request as a whole
    or its names); a refusal made with `about` starts with that field's name and `rest` is what
    follows it, so a door that calls the field something else (the terminal's `--file`) can say
    the same without rewriting the sentence.
    """

    def __init__(self, message: str, *, field: FieldPath = ()) -> None:
        super().__init__(message)
        self.field: FieldPath = field
        self.rest: str = message

    @classmethod
    def about(cls, field: FieldPath, rest: str) -> RefusedRequest:
        """The refusal of `field`: its name, then `rest` (which starts with a space or `:`)."""
        refusal = cls(field_name(field) + rest, field=field)
        refusal.rest = rest
        return refusal


class NotLinked(RefusedRequest):
    """The project's own files do not link it to this destination; the message says which."""


class WriteError(OffpromptError):
    """The destination was not written; the file is unchanged."""


class UnsafeValue(WriteError):
    """A value that no dotenv form carries exactly for python-dotenv, Node and bash."""


class TrackedFile(WriteError):
    """The destination is tracked by git and the person did not tick the override."""


class ProjectError(OffpromptError):
    """The project folder could not be determined or is not usable."""


class Unreadable(OffpromptError):
    """A file `secret_status` must read exists but cannot be read; nothing is guessed."""


class RequestClosed(OffpromptError):
    """The request was already written, cancelled or expired, or another write holds it."""

    def __init__(self, request_id: str) -> None:
        super().__init__(f"request {request_id} is closed; ask the agent for a new link")
        self.request_id = request_id


class ValidationFailed(OffpromptError):
    """Some fields failed their rules; `errors` maps each field name to its reasons.

    Reasons and the message name rules only, never a value.
    """

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors: dict[str, list[str]] = {name: list(rs) for name, rs in errors.items()}
        detail = "; ".join(f"{name}: {', '.join(rs)}" for name, rs in self.errors.items())
        super().__init__(f"some values were not accepted ({detail})")


class CheckRejected(OffpromptError):
    """A provider refused a submitted key (DESIGN §16): nothing was written. `verdicts` maps
    each checked name to its `Verdict`, whose texts are for the page only (they
    may name an account); the message names keys only."""

    def __init__(self, verdicts: dict[str, Verdict]) -> None:
        self.verdicts: dict[str, Verdict] = dict(verdicts)
        refused = [n for n, v in self.verdicts.items() if v.status == "rejected"]
        super().__init__(f"the provider refused {', '.join(refused)}; nothing was written")


class UsageProblem(OffpromptError):
    """What is wrong with the command line; `offprompt collect` exits 2 with it."""


class Refusal(OffpromptError):
    """An answer other than 200, raised by a handler and rendered by the middleware."""

    def __init__(self, status: int, title: str, text: str) -> None:
        super().__init__(f"{status} {title}")
        self.status = status
        self.title = title
        self.text = text


class RpcError(OffpromptError):
    """An error answered to the peer as a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


class ConfigError(OffpromptError):
    """An agent's config file could not be read, understood or written; it was left unchanged."""


class NoBinary(OffpromptError):
    """No cloudflared to run; the message says why and what the person can do."""


class TunnelFailed(OffpromptError):
    """cloudflared did not give a working tunnel; the message says what happened."""


class PortUnavailable(OffpromptError):
    """The page server cannot listen on the port OFFPROMPT_PORT names (in use, not allowed)."""
