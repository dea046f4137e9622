"""The one collect core both doors use (DESIGN §2): the MCP tools and `offprompt collect`.

`settings` (the environment, read once), `request` (one validation of a request), `delivery`
(how the page is reaching the person), `parts` (collaborators, built once), `steps` (what the
ladder answers), `core` (the ladder). Imported module by module: `offprompt.requests` reads
`delivery`, so this package file imports nothing.
"""
