"""The guard (DESIGN §14): `offprompt guard`, the hook hosts run before each tool call, and what
it decides. hook.py is the process; decide.py reads one event; the rest are its rules.

Imports nothing here: the hook's start-up path loads only the modules it uses.
"""
