"""Fixtures for the agents' tests: a PATH holding only fake agent programs, a fake machine, and
a CLI runner for `init`, `remove` and `agents`."""

from cli_helpers import fake_program, home, machine, no_agent_env, portable, run

__all__ = ["fake_program", "home", "machine", "no_agent_env", "portable", "run"]
