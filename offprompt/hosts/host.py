"""What offprompt needs of one host while it runs: the shape of each host module's `HOST`
(one module per host in this room, registered once in `offprompt.hosts.HOSTS`). The names it
gives itself, how it treats a link, the tools and hook events the guard reads, the files that
hold its guard, the dialect its hooks speak and, for a host with a sandbox the mask leans on,
how that sandbox is read. The agents' config code (`offprompt.agents`) says how a host is set
up; this says what it is.

Types only: the guard loads the hosts on every tool call (DESIGN §14: fast; each module loaded
costs it about 0.1 ms), so a host's facts are a plain dict of this shape, and this module is
never imported at run time.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import NotRequired, TypedDict

    class Dialect(TypedDict):
        """A host's hook events when they are not in Claude Code's shape (`tool_name`,
        `tool_input`, `cwd`), which the guard reads: how to tell one (`claims`), the event in
        that shape (`normalise`; ValueError when a field it needs is missing), and the answer
        the host reads on stdout beside the exit code (`deny`, `allow`; None: the exit code is
        all)."""

        claims: Callable[[Mapping[str, object]], bool]
        normalise: Callable[[Mapping[str, object]], dict[str, object]]
        deny: Callable[[str], str | None]
        allow: str | None

    class Sandbox(TypedDict):
        """A host's sandbox as the guard reads it for a masked project (DESIGN §14, §15), in
        three steps, cheapest first: `started(event, environ)`, the real path of the folder
        the session started in when the event is this host's command that may run in its
        sandbox (else None); `inside(project, event, environ)`, whether every settings layer
        keeps this call in the sandbox there; `masked_files(environ)`, the real paths the
        host's settings show as stand-ins."""

        started: Callable[[Mapping[str, object], Mapping[str, str]], str | None]
        inside: Callable[[str, Mapping[str, object], Mapping[str, str]], bool]
        masked_files: Callable[[Mapping[str, str]], frozenset[str]]

    class Host(TypedDict):
        """One host's facts. `name`: the agent's name (`offprompt.agents`); `title`: its
        product name; `clients`: the `clientInfo.name`s it sends at the MCP handshake, each to
        the name shown on the page; `declines_http`: those of its clients that decline a
        non-https URL elicitation without showing it (DESIGN §4); `confirm`: the words of the
        button its URL dialog waits on after the write, when the page names it; `tools`: its
        tool names, each to the kind of reader the guard reads its input with
        (`offprompt.guard.decide.READERS`; None: let through unread); `before_tool`: its hook
        events that come before a tool runs; `guard_files`: the endings of the paths of files
        that hold its guard or its mask, `config_dirs` the variables naming its user folder and
        `config_names` the files there that hold them; `dialect`, `sandbox`: see those."""

        name: str
        title: str
        clients: Mapping[str, str]
        declines_http: NotRequired[frozenset[str]]
        confirm: NotRequired[str]
        tools: NotRequired[Mapping[str, str | None]]
        before_tool: NotRequired[tuple[str, ...]]
        guard_files: NotRequired[tuple[str, ...]]
        config_dirs: NotRequired[tuple[str, ...]]
        config_names: NotRequired[tuple[str, ...]]
        dialect: NotRequired[Dialect]
        sandbox: NotRequired[Sandbox]


__all__ = ["Dialect", "Host", "Sandbox"]
