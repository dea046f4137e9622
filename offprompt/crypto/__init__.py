"""Tokens, nonces, ids and the four-emoji fingerprint: pure functions over bytes and strings.

Nothing here does I/O; sealing for sandbox mode lives beside these modules.
"""
