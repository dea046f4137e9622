"""Fixtures for CLI tests: a PATH holding only fake agent programs, and a CLI runner."""

from cli_helpers import fake_program, home, machine, no_agent_env, run

__all__ = ["fake_program", "home", "machine", "no_agent_env", "run"]
