"""The mask (DESIGN §15): the agent's own sandbox keeps the values offprompt writes from the
commands it runs. One interface (interface.py), one module per host that has a mask
(claude_code.py, codex.py), each named by its agent's declaration (`Agent.mask`); keeper.py is
what a write is handed to keep them.

The agents' declarations import their masks, so nothing here imports the agents: whoever needs
every host's mask (the keeper, `init --mask`) is handed the agents' list.
"""

from __future__ import annotations

from offprompt.agents.mask.interface import (
    MASK_RECORD,
    HostMask,
    MaskKind,
    MaskPlace,
    MaskState,
    Said,
    Written,
)

__all__ = ["MASK_RECORD", "HostMask", "MaskKind", "MaskPlace", "MaskState", "Said", "Written"]
