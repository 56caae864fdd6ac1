"""Process EDCs over ZeroMQ: the exact handshake of seed-systems §2.3 (§5.2 item 2).

The EDC here is written in the test from the wire description (a REP socket in a thread):
init request `u32 N` + N bytes, init reply `u32 flags` + hello, then one message each way."""

from __future__ import annotations

import json
import struct
import threading
import time

import pytest
import zmq

from batsim_py.decision.edc_transports import ProcessEdc
from batsim_py.errors import ProtocolError, SchedulerError
from edc.helpers import run_edc

HELLO = {"now": 0.0, "events": [{"timestamp": 0.0, "event_type": "EDCHelloEvent", "event": {
    "batprotocol_version": "0.1.0", "decision_component_name": "wire-test",
    "decision_component_version": "1", "requested_simulation_features": {}}}]}


class WireEdc(threading.Thread):
    """A REP-socket EDC that accepts jobs FCFS one at a time on host 0-3 as requested."""

    def __init__(self, endpoint: str, hello: dict | None = None, end_delay: float = 0.0,
                 answer_end: bool = True) -> None:
        super().__init__(daemon=True)
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.REP)
        self.socket.bind(endpoint)
        self.hello = HELLO if hello is None else hello
        self.end_delay = end_delay
        self.answer_end = answer_end
        self.init_frame = b""
        self.messages: list[bytes] = []
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self.init_frame = self.socket.recv()
            self.socket.send(struct.pack("=I", 0x2) + json.dumps(self.hello).encode())
            queue: list[tuple[str, int]] = []
            busy = False
            while True:
                if not self.socket.poll(20_000):
                    return
                data = self.socket.recv()
                self.messages.append(data)
                msg = json.loads(data.rstrip(b"\0"))
                out = []
                for item in msg["events"]:
                    if item["event_type"] == "JobSubmittedEvent":
                        queue.append((item["event"]["job_id"],
                                      item["event"]["job"]["resource_request"]))
                    elif item["event_type"] == "JobCompletedEvent":
                        busy = False
                if queue and not busy:
                    job_id, res = queue.pop(0)
                    busy = True
                    out.append({"timestamp": msg["now"], "event_type": "ExecuteJobEvent",
                                "event": {"job_id": job_id, "allocation": {
                                    "host_allocation": f"0-{res - 1}" if res > 1 else "0",
                                    "executor_placement_type":
                                        "PredefinedExecutorPlacementStrategyWrapper",
                                    "executor_placement": {"strategy":
                                                           "SpreadOverHostsFirst"}}}})
                reply = json.dumps({"now": msg["now"], "events": out}).encode()
                # replies alternately with and without the NUL terminator
                if len(self.messages) % 2:
                    reply += b"\0"
                ending = any(e["event_type"] == "SimulationEndsEvent" for e in msg["events"])
                if ending:
                    if not self.answer_end:
                        time.sleep(3)
                        return
                    time.sleep(self.end_delay)
                self.socket.send(reply)
                if ending:
                    return
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            self.socket.close(linger=100)
            self.context.term()


@pytest.fixture
def endpoint(tmp_path):
    return f"ipc://{tmp_path}/edc.sock"


def test_handshake_and_messages(endpoint, tmp_path):
    edc = WireEdc(endpoint, end_delay=0.3)
    t0 = time.monotonic()
    run_edc(ProcessEdc(endpoint, timeout=10, connect_timeout=10), tmp_path / "out",
            init=b'{"answer": 42}')
    elapsed = time.monotonic() - t0
    edc.join(5)
    assert edc.error is None
    # init request: native u32 length, then exactly the init string
    assert edc.init_frame == struct.pack("=I", 14) + b'{"answer": 42}'
    first = edc.messages[0]
    assert first.endswith(b"\0")
    begins = json.loads(first[:-1])["events"][0]
    assert begins["event_type"] == "SimulationBeginsEvent"
    event = begins["event"]
    assert event["computation_host_number"] == 4 and event["host_number"] == 4
    assert [h["id"] for h in event["computation_hosts"]] == [0, 1, 2, 3]
    assert all(m.endswith(b"\0") and m.count(b"\0") == 1 for m in edc.messages)
    last = json.loads(edc.messages[-1][:-1])
    assert [e["event_type"] for e in last["events"]] == ["SimulationEndsEvent"]
    # the run waited for the EDC's reply to SimulationEndsEvent
    assert elapsed >= 0.3
    jobs = (tmp_path / "out_jobs.csv").read_text().splitlines()
    assert len(jobs) == 21  # header + 20 jobs, all run


@pytest.mark.parametrize("events, what", [
    ([], "no event"),
    (HELLO["events"] * 2, "EDCHelloEvent, EDCHelloEvent"),
    ([{"timestamp": 0.0, "event_type": "RejectJobEvent", "event": {"job_id": "w0!1"}}],
     "RejectJobEvent"),
])
def test_hello_must_be_exactly_one_hello(endpoint, tmp_path, events, what):
    WireEdc(endpoint, hello={"now": 0.0, "events": events})
    with pytest.raises(ProtocolError, match=f"exactly one EDCHelloEvent \\(got: {what}\\)"):
        run_edc(ProcessEdc(endpoint, timeout=5, connect_timeout=5), tmp_path / "out")


def test_unanswered_simulation_ends_is_an_error_with_outputs_written(endpoint, tmp_path):
    WireEdc(endpoint, answer_end=False)
    with pytest.raises(SchedulerError, match="SimulationEndsEvent"):
        run_edc(ProcessEdc(endpoint, timeout=1, connect_timeout=5), tmp_path / "out")
    assert len((tmp_path / "out_jobs.csv").read_text().splitlines()) == 21


def test_no_edc_listening_is_a_clear_error(endpoint, tmp_path):
    with pytest.raises(SchedulerError, match="no EDC at .* nothing accepted the connection "
                                             ".* check --edc-socket-str"):
        run_edc(ProcessEdc(endpoint, timeout=1, connect_timeout=0.5), tmp_path / "out")
