"""Codex's facts (offprompt.agents.codex sets it up): its client names, its refusal of a plain
http link, its tools and hook events, and the files that hold its guard and its mask."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from offprompt.hosts.host import Host

__all__ = ["HOST"]

HOST: Host = {
    "name": "codex",
    "title": "Codex",
    "clients": {"codex-mcp-client": "Codex", "codex": "Codex"},
    # Codex declines every non-https URL elicitation in 1-2 ms without showing it (DESIGN §4).
    "declines_http": frozenset({"codex-mcp-client"}),
    "tools": {
        "shell": "shell",
        "local_shell": "shell",
        "exec_command": "shell",
        "unified_exec": "shell",
        "apply_patch": "patch",
        # Its plan and its web search read no file.
        "update_plan": None,
        "web_search": None,
    },
    "before_tool": ("PreToolUse",),
    # Its config (the hooks, the sandbox's rules) and its hooks file, in any folder, and in
    # $CODEX_HOME.
    "guard_files": ("/.codex/config.toml", "/.codex/hooks.json"),
    "config_dirs": ("CODEX_HOME",),
    "config_names": ("config.toml", "hooks.json"),
}
