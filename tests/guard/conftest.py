"""Fixtures for the guard's tests: a PATH holding only fake programs (no agent, no git of this
machine's unless a test puts one there)."""

from cli_helpers import no_agent_env

__all__ = ["no_agent_env"]
