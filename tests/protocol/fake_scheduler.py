"""A misbehaving Batsim scheduler for the tests: binds a REP socket and misbehaves on purpose.

    python fake_scheduler.py ENDPOINT MODE [MARKER]

MODE: garbage (answers the 2nd message with text that is not JSON), die (exits without
answering the 2nd message), mute (exits without answering the 1st message), once (answers the
1st message, then exits), silent (never answers the 2nd message), silent_end (never answers
SIMULATION_ENDS), flood (asks for 500 CALL_ME_LATER in its first reply and rejects every job),
reject (rejects every job: a correct run). MARKER: a file created once the 2nd message came (the
simulation is then surely running), for tests that must act mid-run.
"""

from __future__ import annotations

import json
import sys
import time

import zmq


def main() -> None:
    endpoint, mode = sys.argv[1], sys.argv[2]
    socket = zmq.Context().socket(zmq.REP)
    socket.bind(endpoint)
    n = 0
    while True:
        msg = json.loads(socket.recv())
        n += 1
        now = msg["now"]
        if mode == "mute" or (n == 2 and mode == "once"):
            sys.exit(0)
        if mode == "silent_end" and any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
            time.sleep(3600)
        if n == 2 and mode == "garbage":
            socket.send(b"this is not JSON")
            continue
        if n == 2 and mode == "die":
            sys.exit(3)
        if n == 2 and mode == "silent":
            if len(sys.argv) > 3:
                open(sys.argv[3], "w").close()
            time.sleep(3600)
        events = []
        for e in msg["events"]:
            if e["type"] == "SIMULATION_BEGINS" and mode == "flood":
                events += [{"timestamp": now, "type": "CALL_ME_LATER",
                            "data": {"timestamp": now + 1 + k}} for k in range(500)]
            elif e["type"] == "JOB_SUBMITTED":
                events.append({"timestamp": now, "type": "REJECT_JOB",
                               "data": {"job_id": e["data"]["job_id"]}})
        socket.send(json.dumps({"now": now, "events": events}).encode())
        if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
            return


if __name__ == "__main__":
    main()
