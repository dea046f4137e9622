"""offprompt: collect secrets from a person for a coding agent, without the model seeing them."""

from offprompt.errors import OffpromptError

__version__ = "0.1.0"
__all__ = ["OffpromptError", "__version__"]
