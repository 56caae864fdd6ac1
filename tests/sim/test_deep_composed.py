"""Composed profiles nested thousands deep run without recursion (issue 12 item 6), their kill
progress reaches the scheduler intact, and a cycle is one clear error."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from test_simulation import SMALL4, run_on_small4

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.protocol.batsim_events import encode_batsim_message

DEPTH = 3000


def nested(depth: int, leaf: dict) -> dict:
    profiles = {"leaf": leaf, "c0": {"type": "composed", "seq": ["leaf"]}}
    for i in range(1, depth):
        profiles[f"c{i}"] = {"type": "composed", "seq": [f"c{i - 1}"]}
    return profiles


def test_thousands_of_nested_composed_profiles_run(tmp_path: Path) -> None:
    rows, _ = run_on_small4(
        tmp_path, [{"id": "a", "subtime": 0, "res": 1, "profile": f"c{DEPTH - 1}"}],
        nested(DEPTH, {"type": "delay", "delay": 5}),
        lambda now, events: [d.ExecuteJob(now, e.job_id, (0,)) for e in events
                             if isinstance(e, ev.JobSubmitted)],
    )
    assert rows[0]["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert float(rows[0]["execution_time"]) == 5.0


def test_kill_of_a_deep_job_reports_the_whole_progress_tree(tmp_path: Path) -> None:
    def decide(now: float, events: Sequence[ev.Event]) -> list:
        out: list = []
        for e in events:
            if isinstance(e, ev.JobSubmitted):
                out += [d.ExecuteJob(now, e.job_id, (1,)), d.CallMeLater(now, 2.0)]
            if isinstance(e, ev.RequestedCall):
                out.append(d.KillJob(now, ("w0!a",)))
        return out

    _, sched = run_on_small4(
        tmp_path, [{"id": "a", "subtime": 0, "res": 1, "profile": f"c{DEPTH - 1}"}],
        nested(DEPTH, {"type": "delay", "delay": 8}), decide,
    )
    killed = [e for e in sched.seen if isinstance(e, ev.JobKilled)]
    node, depth = killed[0].job_progress["w0!a"], 0
    while node.current_task is not None:
        node, depth = node.current_task, depth + 1
    assert depth == DEPTH and node.profile_name == "leaf" and node.progress == 0.25
    text = encode_batsim_message(killed[0].timestamp, killed)  # the wire form, nested DEPTH deep
    assert text.count('"current_task":') == DEPTH


def test_a_cycle_is_one_clear_line(tmp_path: Path) -> None:
    workload = tmp_path / "w.json"
    profiles = {f"c{i}": {"type": "composed", "seq": [f"c{(i + 1) % 50}"]} for i in range(50)}
    workload.write_text(json.dumps({"nb_res": 4, "profiles": profiles, "jobs": [
        {"id": "a", "subtime": 0, "res": 1, "profile": "c0"}]}))
    proc = subprocess.run(
        [sys.executable, "-m", "batsim_py.cli", "-p", SMALL4, "-w", str(workload),
         "-e", str(tmp_path / "out"), "--scheduler", "fcfs"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "batsim-py: error: job w0!a: composed profile 'c0' contains itself (c0 -> c1 -> c2 -> "
        "... 45 more ... -> c48 -> c49 -> c0); break the cycle in the workload")
