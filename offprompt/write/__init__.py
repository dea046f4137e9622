"""The write room (DESIGN §2): the one path from a submission to the sinks.

`submit` validates, checks with the provider (`provider`, DESIGN §16), writes, keeps the mask and
journals (`journal`); the steps it runs besides the write come in through `steps`. Nothing here
imports the agents, the page or the protocol. Empty on purpose: importing one module of the room
loads only that module (the guard and `offprompt keys` read the journal without the submitter).
"""
