"""Test instrument, put on PYTHONPATH by test_first_reply: each time the process writes a
JSON-RPC message with `os.write` (how `offprompt serve` answers), it first appends the names in
`sys.modules` at that moment, one line per message, to the file named by the variable below.
"""

import os
import sys

_RECORD = os.environ.get("OFFPROMPT_TEST_MODULES_FILE")

if _RECORD:
    _write = os.write

    def _recording_write(fd: int, data: bytes, /) -> int:
        if bytes(data[:11]) == b'{"jsonrpc":':
            with open(_RECORD, "a", encoding="utf-8") as record:
                record.write(" ".join(sorted(sys.modules)) + "\n")
        return _write(fd, data)

    os.write = _recording_write
