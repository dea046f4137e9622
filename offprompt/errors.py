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
    ├── Refusal            the page's answer other than 200, rendered by its middleware
    ├── RpcError           a JSON-RPC error object answered to the MCP client
    ├── UsageProblem       a command line `offprompt collect` cannot run; exit 2
    ├── ConfigError        an agent's config file could not be read or written; left unchanged
    ├── NoBinary           no cloudflared to run, and what the person can do
    └── TunnelFailed       cloudflared ran but gave no working tunnel

Each is caught at a boundary (the protocol loop, the page middleware, the CLI) and turned into
an answer. The few exceptions outside this tree are caught one step from where they are raised
and turned into one of these; each says so in its docstring.

Messages never contain a secret value: they name keys, paths and rules only.
"""


class OffpromptError(Exception):
    """Base of every error offprompt raises on purpose."""


class RefusedRequest(OffpromptError):
    """A tool call that offprompt refuses; the message says what to do instead."""


class WriteError(OffpromptError):
    """The destination was not written; the file is unchanged."""


class UnsafeValue(WriteError):
    """A value that no dotenv form carries exactly for python-dotenv, Node and bash."""


class TrackedFile(WriteError):
    """The destination is tracked by git and the person did not tick the override."""


class ProjectError(OffpromptError):
    """The project folder could not be determined or is not usable."""
