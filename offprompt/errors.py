"""The one error root and the few kinds a person or an agent can act on.

    OffpromptError
    ├── RefusedRequest     a tool call that asks for something offprompt will not do
    ├── WriteError         the destination could not be written; nothing changed
    │   ├── UnsafeValue    a value no dotenv quoting carries exactly for every reader
    │   └── TrackedFile    the destination is tracked by git and the person did not allow it
    └── ProjectError       no project folder could be found or used

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
