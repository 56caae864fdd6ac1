"""Seed 001's acceptance list (shared/research/seed-systems.md §5.1, groups 1-4 and 6; Redis,
group 5, is in test_legacy_redis.py) and misbehaving schedulers, end to end over a Unix socket.
"""

from __future__ import annotations

import csv
import json
import re
import struct
import threading
import time
from pathlib import Path

import pytest
from legacy_harness import PLATFORMS, connect_unix, events_of, nop, run_legacy

from batsim_py.cli import main
from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.interface import DecisionProcess
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options
from batsim_py.wire import wire_time


def header_time(text: str) -> str:
    return text.split("|")[0].split(":")[1]


def write_workload(tmp_path: Path, jobs: list[dict], profiles: dict, nb_res: int = 4) -> str:
    path = tmp_path / "workload.json"
    path.write_text(json.dumps({"nb_res": nb_res, "jobs": jobs, "profiles": profiles}))
    return str(path)


def jobs_csv(tmp_path: Path, prefix: str = "out") -> dict[str, dict[str, str]]:
    with open(tmp_path / f"{prefix}_jobs.csv", newline="") as f:
        return {row["job_id"]: row for row in csv.DictReader(f)}


def first_fit(text: str) -> str:
    """Start every submitted job on machine 0 at once (one-machine jobs, one at a time)."""
    now = header_time(text)
    starts = [f"{now}:J:{c}=0" for _, s, c in events_of(text) if s == "S"]
    return "|".join([f"0:{now}"] + (starts or [f"{now}:N"]))


# ------------------------------------------------------------------ 1. seed transcript (v3)
def test_seed_transcript_v3(tmp_path: Path) -> None:
    wl = write_workload(tmp_path, [{"id": i, "subtime": 5 * i, "res": 1, "profile": "d2"}
                                   for i in range(4)], DELAYS)
    rc, out = run_legacy(tmp_path, wl, first_fit, version=3)
    assert rc == 0 and out.error is None
    assert out.messages[0] == "3:0.000000|0.000000:A"
    assert all(re.fullmatch(r"w0!\d+", c) for m in out.messages for _, s, c in events_of(m)
               if s in "SC")
    last = out.messages[-1]
    assert re.search(r"\|([0-9.]+):C:w0!\d+\|\1:Z$", last), last  # Z with the last C
    assert sum(m.count(":Z") for m in out.messages) == 1
    assert out.eof  # after its N to Z, the client reads EOF
    for frame, text in zip(out.frames, out.messages, strict=True):
        assert struct.unpack("=I", frame[:4])[0] == len(frame) - 4 == len(text.encode())
        assert b"\0" not in frame[4:]  # no NUL terminator
    for text in out.messages:  # every time printed with %f, dates never after TIME_MSG
        assert re.fullmatch(r"3:\d+\.\d{6}(\|\d+\.\d{6}:[ASCZ](:[^|:]+)?)+", text), text
        assert all(date <= float(header_time(text)) for date, _, _ in events_of(text))


# ------------------------------------------------------------------ 2. dated decisions
DATED_JOBS = [{"id": 0, "subtime": 0, "res": 1, "profile": "d2"},
              {"id": 1, "subtime": 0, "res": 4, "profile": "d1"}]
DELAYS = {"d2": {"type": "delay", "delay": 2}, "d1": {"type": "delay", "delay": 1}}


def test_dated_decisions_and_events_from_the_past(tmp_path: Path) -> None:
    wl = write_workload(tmp_path, DATED_JOBS, DELAYS)

    def script(text: str) -> str:
        now = header_time(text)
        if ":S:w0!1" in text:  # decide job 0 now, job 1 at 15 (on 1,2,0,3); header ignored
            return f"0:10.000000|{now}:J:w0!0=0|15.000000:J:w0!1=1,2,0,3"
        return nop(text)

    rc, out = run_legacy(tmp_path, wl, script, version=2)
    assert rc == 0 and out.error is None
    jobs = jobs_csv(tmp_path)
    start = float(jobs["1"]["starting_time"])
    assert 15.0 <= start < 15.001  # 15 + Batsim's internal delay
    # job 0 ended at ~2 while the scheduler was busy until 15: its C comes later, dated ~2
    message = next(m for m in out.messages if ":C:w0!0" in m)
    (date, _, _), = [e for e in events_of(message) if e[1] == "C"]
    assert 2.0 < date < 2.001 and float(header_time(message)) >= 15.0


def parallel_time(tmp_path: Path, order: str) -> float:
    jobs = [{"id": 0, "subtime": 0, "res": 4, "profile": "p"}]
    profiles = {"p": {"type": "parallel", "cpu": [4e9, 0, 0, 0], "com": [0] * 16}}
    wl = write_workload(tmp_path, jobs, profiles)

    def script(text: str) -> str:
        now = header_time(text)
        return f"0:{now}|{now}:J:0={order}" if ":S:" in text else nop(text)

    rc, out = run_legacy(tmp_path, wl, script, version=1)
    assert rc == 0
    return float(jobs_csv(tmp_path)["0"]["execution_time"])


def test_the_host_order_places_the_executors(tmp_path: Path) -> None:
    # small4: node0 1 Gf, node1 2 Gf. Executor 0 computes 4 Gf: 4 s on node0, 2 s on node1.
    assert parallel_time(tmp_path, "0-3") == pytest.approx(4.0, abs=1e-3)
    assert parallel_time(tmp_path, "1,2,0,3") == pytest.approx(2.0, abs=1e-3)


def test_the_reply_header_time_is_ignored_unless_asked(tmp_path: Path) -> None:
    wl = write_workload(tmp_path, DATED_JOBS[:1], DELAYS)

    def script(text: str) -> str:
        now = header_time(text)
        return f"0:50.000000|{now}:J:0=0" if ":S:" in text else nop(text)

    rc, out = run_legacy(tmp_path, wl, script)
    assert rc == 0 and float(header_time(out.messages[1])) < 3  # C at ~2, not after 50
    rc, out = run_legacy(tmp_path, wl, script, extra=["--legacy-honor-msg-time"])
    assert rc == 0 and float(header_time(out.messages[1])) >= 50


def test_a_decision_dated_before_the_request_is_an_error(tmp_path: Path, capsys) -> None:
    wl = write_workload(tmp_path, [{"id": 0, "subtime": 4, "res": 1, "profile": "d1"}], DELAYS)
    rc, out = run_legacy(tmp_path, wl, lambda text: "0:5|1.000000:J:0=0")
    err = capsys.readouterr().err
    assert rc == 1 and "before the request's time (4.000015)" in err, err
    assert "event '1.000000:J:0=0'" in err and "Traceback" not in err
    assert (tmp_path / "out_jobs.csv").exists()  # outputs so far written


# ------------------------------------------------------------------ 3. NOP me later
def nop_me_later_run(tmp_path: Path, reply: str, timing: str = "batsim"):
    wl = write_workload(tmp_path, [{"id": 1, "subtime": 100, "res": 1, "profile": "d1"}],
                        DELAYS)

    def script(text: str) -> str:
        now = header_time(text)
        if ":S:" in text:
            return reply.replace("NOW", now)
        return nop(text)

    return run_legacy(tmp_path, wl, script, extra=["--timing", timing])


def test_nop_me_later(tmp_path: Path) -> None:
    rc, out = nop_me_later_run(tmp_path, "1:100|NOW:J:1=0|NOW:n:142")
    assert rc == 0 and out.eof
    submitted = events_of(out.messages[0])[0][0]
    latency = submitted - 100  # Batsim's internal delay to the master host (seed: 1 µs)
    assert latency > 0
    nops = [e for m in out.messages for e in events_of(m) if e[1] == "N"]
    assert [date for date, _, _ in nops] == [pytest.approx(142 + latency, abs=1e-9)]
    rc, out = nop_me_later_run(tmp_path, "1:100|NOW:J:1=0|NOW:n:142", "ideal")
    assert rc == 0
    assert [m for m in out.messages if ":N" in m] == ["1:142.000000|142.000000:N"]


def test_two_timers_keep_the_simulation_alive(tmp_path: Path) -> None:
    rc, out = nop_me_later_run(tmp_path, "1:100|NOW:J:1=0|NOW:n:142|NOW:n:150", "ideal")
    assert rc == 0
    assert [m for m in out.messages if ":N" in m] == ["1:142.000000|142.000000:N",
                                                      "1:150.000000|150.000000:N"]


def test_nop_me_later_now_is_refused(tmp_path: Path, capsys) -> None:
    rc, out = nop_me_later_run(tmp_path, "1:100|NOW:n:NOW", "ideal")
    err = capsys.readouterr().err
    assert rc == 1 and "ask for a strictly later time" in err and "'100.000000:n:" in err


# ------------------------------------------------------------------ 4. energy and pstates
class SameDecisions(DecisionProcess):
    """The JSON-mode twin of energy_script: the same decisions, typed; records the ANSWER."""

    def __init__(self) -> None:
        self.answers: list[float] = []
        self.step = 0

    def exchange(self, now: float, events) -> d.Reply:
        t = wire_time(now)
        self.answers += [e.consumed_energy for e in events if isinstance(e, ev.Answer)]
        if any(isinstance(e, ev.JobSubmitted) for e in events):
            return d.Reply(t, (d.SetResourceState(t, (0,), 1),
                               d.SetResourceState(t, (1, 2), 2), d.Query(t, {})))
        if any(isinstance(e, ev.ResourceStateChanged) and e.state == "2" for e in events):
            return d.Reply(t, (d.ExecuteJob(t, "w0!1", (3,)),))
        return d.Reply(t, ())


def energy_script(text: str) -> str:
    now = header_time(text)
    if ":S:" in text:
        return f"1:50|{now}:P:0=1|{now}:P:1-2=2|{now}:E"
    if ":p:1-2=2" in text:
        return f"0:{now}|{now}:J:1=3"
    return nop(text)


def test_pstates_and_energy(tmp_path: Path) -> None:
    wl = write_workload(tmp_path, [{"id": 1, "subtime": 50, "res": 1, "profile": "d1"}],
                        DELAYS, nb_res=8)
    rc, out = run_legacy(tmp_path, wl, energy_script, platform="energy8.xml", extra=["-E"])
    assert rc == 0 and out.error is None
    events = [e for m in out.messages for e in events_of(m)]
    request = events[0][0]
    acks = [(date, content) for date, stamp, content in events if stamp == "p"]
    assert [c for _, c in acks] == ["0=1", "1-2=2"]  # exactly one p per P, the same set
    assert acks[0][0] - request < 1e-3  # computation -> computation: at once
    assert acks[1][0] - request == pytest.approx(5.0, abs=1e-3)  # energy8 sleeps in 5 s
    energy = [c for _, s, c in events if s == "e"]
    assert len(energy) == 1 and re.fullmatch(r"\d+\.\d{6}", energy[0])
    # The JSON mode's ANSWER to the same QUERY on the same run:
    twin = SameDecisions()
    run_simulation(RunSpec(str(PLATFORMS / "energy8.xml"), [wl],
                           Options(energy=True, export_prefix=str(tmp_path / "json"))), twin)
    assert energy == ["%f" % twin.answers[0]]
    legacy = (tmp_path / "out_consumed_energy.csv").read_text()
    assert legacy == (tmp_path / "json_consumed_energy.csv").read_text()


def test_pstate_without_energy_is_an_error(tmp_path: Path, capsys) -> None:
    wl = write_workload(tmp_path, [{"id": 1, "subtime": 50, "res": 1, "profile": "d1"}], DELAYS)
    rc, _ = run_legacy(tmp_path, wl, energy_script)
    err = capsys.readouterr().err
    assert rc == 1 and "'P' needs the energy model: run batsim-py with -E" in err


# ------------------------------------------------------------------ 6. F/f, opt-in
def test_failure_stamps_only_when_enabled(tmp_path: Path) -> None:
    wl = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "d20"}],
                        {"d20": {"type": "delay", "delay": 20}})
    events = tmp_path / "events.jsonl"
    events.write_text('{"timestamp": 5, "type": "machine_unavailable", "resources": "1-2"}\n'
                      '{"timestamp": 10, "type": "machine_available", "resources": "1-2"}\n')
    rc, out = run_legacy(tmp_path, wl, first_fit, version=3,
                         extra=["--events", str(events), "--legacy-failure-stamps"])
    assert rc == 0
    stamps = [(date, s, c) for m in out.messages for date, s, c in events_of(m) if s in "Ff"]
    assert [(s, c) for _, s, c in stamps] == [("F", "1-2"), ("f", "1-2")]
    assert 5 <= stamps[0][0] < 5.001 and 10 <= stamps[1][0] < 10.001
    rc, out = run_legacy(tmp_path, wl, first_fit, version=3, extra=["--events", str(events)])
    assert rc == 0 and not any(s in "Ff" for m in out.messages for _, s, _ in events_of(m))


# ------------------------------------------------------------------ misbehaving schedulers
@pytest.mark.parametrize("reply,message", [
    ("hello", "invalid message 'hello': it needs a header and at least one event"),
    ("0:0|0:J:0=0", "before the request's time"),
    ("0:1|99:J:0=17", "machine 17 does not exist"),
    ("0:1|99:J:99=0", "job 'w0!99' does not exist"),
    (None, "closed the connection"),
])
def test_misbehaving_scheduler_gets_one_clear_line(tmp_path: Path, capsys, reply, message
                                                   ) -> None:
    wl = write_workload(tmp_path, DATED_JOBS[:1], DELAYS)
    rc, _ = run_legacy(tmp_path, wl, lambda text: reply)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("batsim-py: error")]
    assert rc == 1 and len(lines) == 1 and message in lines[0], err
    assert "Traceback" not in err and "internal error" not in err
    assert (tmp_path / "out_jobs.csv").exists()


def test_a_silent_scheduler_times_out(tmp_path: Path, capsys) -> None:
    wl = write_workload(tmp_path, DATED_JOBS[:1], DELAYS)

    def silent(text: str) -> str:
        time.sleep(2)
        return nop(text)

    rc, _ = run_legacy(tmp_path, wl, silent, extra=["--scheduler-timeout", "0.5"])
    err = capsys.readouterr().err
    assert rc == 1 and re.search(r"did not answer message 1 \('1:[0-9.]+\|[0-9.]+:S:0'\) "
                                 r"within 0.5 s", err), err


@pytest.mark.parametrize("version,message", [(1, "no scheduler connected to"),
                                             (0, "no scheduler listens on")])
def test_no_scheduler_at_all(tmp_path: Path, capsys, version: int, message: str) -> None:
    wl = write_workload(tmp_path, DATED_JOBS[:1], DELAYS)
    started = time.monotonic()
    rc = main(["-p", str(PLATFORMS / "small4.xml"), "-w", wl, "-e", str(tmp_path / "out"),
               "--legacy-protocol", str(version), "-s", f"unix:{tmp_path}/nobody", "-q",
               "--scheduler-connect-timeout", "0.5"])
    err = capsys.readouterr().err
    assert rc == 1 and message in err and time.monotonic() - started < 10
    assert not (tmp_path / "nobody").exists() or version == 0  # the socket file is removed


def raw_scheduler(path: str, answer: bytes, out: list[str]) -> threading.Thread:
    """Connects and answers the first message with raw bytes, then waits for EOF."""
    def run() -> None:
        try:
            sock = connect_unix(path)
        except OSError:
            return  # (the test says what went wrong)
        with sock:
            size = struct.unpack("=I", sock.recv(4))[0]
            out.append(sock.recv(size).decode())
            sock.sendall(answer)
            sock.settimeout(20)
            while sock.recv(4096):
                pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("answer,message", [
    (struct.pack("=I", 3) + b"\xff\xfe:", "not UTF-8 text (byte 0: ff)"),
    (struct.pack("=I", 0), "a message of size 0"),
    (struct.pack("=I", 0xFFFFFFF0), "not a legacy-protocol frame"),
    (struct.pack("=I", 100) + b"0:1|", "did not answer message 1"),  # a frame cut short
])
def test_broken_frames(tmp_path: Path, capsys, answer: bytes, message: str) -> None:
    wl = write_workload(tmp_path, DATED_JOBS[:1], DELAYS)
    seen: list[str] = []
    thread = raw_scheduler(str(tmp_path / "sock"), answer, seen)
    started = time.monotonic()
    rc = main(["-p", str(PLATFORMS / "small4.xml"), "-w", wl, "-e", str(tmp_path / "out"),
               "--legacy-protocol", "1", "-s", f"unix:{tmp_path}/sock", "-q",
               "--scheduler-timeout", "1"])
    thread.join(20)
    err = capsys.readouterr().err
    assert rc == 1 and message in err and "Traceback" not in err, err
    assert time.monotonic() - started < 15 and seen  # bounded, and it did talk


def test_closing_after_z_says_the_outputs_are_written(tmp_path: Path, capsys) -> None:
    wl = write_workload(tmp_path, [{"id": 0, "subtime": 0, "res": 1, "profile": "d1"}], DELAYS)

    def script(text: str) -> str | None:
        return None if text.endswith(":Z") else first_fit(text)

    rc, _ = run_legacy(tmp_path, wl, script, version=3)
    err = capsys.readouterr().err
    assert rc == 1 and "closed the connection" in err
    assert "the simulation was complete and its outputs are written" in err
    assert "COMPLETED_SUCCESSFULLY" in (tmp_path / "out_jobs.csv").read_text()
