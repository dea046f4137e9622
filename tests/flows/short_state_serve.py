"""`offprompt serve` whose 2026-07-28 requestState lives FLOWS_STATE_TTL seconds.

The product signs states for an hour and offers no knob; a test of their expiry needs less.
"""

import os
import sys

import offprompt.collect.core as core
from offprompt.__main__ import main

core.STATE_TTL = float(os.environ["FLOWS_STATE_TTL"])
sys.argv = ["offprompt", "serve"]
main()
