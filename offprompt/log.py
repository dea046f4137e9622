"""Logging to stderr with the `offprompt: ` prefix; stdout belongs to the protocol.

Callers pass names, paths and ids only, never a value.
"""

import logging
import os
import sys

_LOGGER_NAME = "offprompt"


def setup() -> logging.Logger:
    """Configure the `offprompt` logger once, to stderr, at OFFPROMPT_LOG's level."""
    logger = logging.getLogger(_LOGGER_NAME)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("offprompt: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    level = os.environ.get("OFFPROMPT_LOG", "info").strip().lower()
    logger.setLevel(logging.DEBUG if level == "debug" else logging.INFO)
    return logger


def get() -> logging.Logger:
    return logging.getLogger(_LOGGER_NAME)
