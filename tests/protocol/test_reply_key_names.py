"""Member names a scheduler invented are shown quoted and escaped: the message stays one line."""

from __future__ import annotations

import json

import pytest

from batsim_py.errors import ProtocolError
from batsim_py.protocol.replies import decode_reply


def test_odd_member_names_keep_the_message_on_one_line() -> None:
    reply = {"now": 1.0, "events": [{"timestamp": 0.0, "type": "EXECUTE_JOB", "data": {
        "job_id": "w0!1", "alloc": "0", "": 1, "\n": 2}}]}
    with pytest.raises(ProtocolError) as info:
        decode_reply(json.dumps(reply))
    message = str(info.value)
    assert "\n" not in message
    assert 'got 4: "job_id", "alloc", "", "\\n"' in message
