"""Editors of agents' config files that keep every other byte: JSON with comments (jsonc.py
reads, jsonc_edit.py edits) and TOML tables (tomltable.py). Import nothing of offprompt (the
destinations' linking reads wrangler's JSONC with jsonc.py too).
"""
