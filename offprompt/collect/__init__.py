"""The one collect core both doors use (DESIGN §2): the MCP tools and `offprompt collect`.

`settings` (the environment, read once), `schema` (the request's JSON Schema), `request` (one
validation of a request, and the map of every gate), `parts` (collaborators, built once),
`steps` (what the ladder answers), `core` (the ladder). The per-request delivery state it
writes lives with the request records, below it, in `offprompt.store`. Imported module by
module, so this package file imports nothing.
"""
