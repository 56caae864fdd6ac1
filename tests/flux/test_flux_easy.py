"""The shipped EASY client: reservations annotated as `sched.t_estimate`, backfilling by
walltime, the estimate deleted (null) at SUCCESS. Hand-computed on 3 one-core nodes."""

from __future__ import annotations

import json

from raw_client import platform, read_csv

from batsim_py.cli import main


def test_easy_t_estimate_and_backfilling(tmp_path):
    # A: 2 nodes, runs 0..50 (walltime 100); B: 3 nodes at t=1, blocked: reserved at A's
    # estimated end 0+100; C: 1 node at t=2, walltime 50, ends by 100: backfilled at once;
    # D: 1 node at t=3, walltime 200: would pass the reservation, waits. A ends at 50: B
    # starts (all 3 nodes), D is the head, reserved at B's estimated end 50+100; B ends at 60.
    jobs = [("A", 0, 2, 50, 100), ("B", 1, 3, 10, 100), ("C", 2, 1, 10, 50),
            ("D", 3, 1, 10, 200)]
    work = {"nb_res": 3, "profiles": {f"d{d}": {"type": "delay", "delay": d} for d in (10, 50)},
            "jobs": [{"id": n, "subtime": s, "res": r, "walltime": w, "profile": f"d{d}"}
                     for n, s, r, d, w in jobs]}
    (tmp_path / "p.xml").write_text(platform(3))
    (tmp_path / "w.json").write_text(json.dumps(work))
    code = main(["-p", str(tmp_path / "p.xml"), "-w", str(tmp_path / "w.json"), "-e",
                 str(tmp_path / "out"), "-q", "--timing", "ideal", "--protocol", "flux",
                 "--flux-scheduler", "easy", "--flux-eventlog"])
    assert code == 0
    starts = {j["job_id"]: j["starting_time"] for j in read_csv(tmp_path / "out_jobs.csv")}
    assert starts == {"A": "0.000000", "B": "50.000000", "C": "2.000000", "D": "60.000000"}
    log = [json.loads(line) for line in (tmp_path / "out_flux_eventlog.jsonl").open()]
    estimates = [(e["job_id"], e["timestamp"], e["context"]["annotations"]["sched"]["t_estimate"])
                 for e in log if e["name"] == "annotations"]
    assert estimates == [("w0!B", 1, 100), ("w0!D", 50, 150)]
    final = {j["job_id"]: json.loads(j["annotations"])
             for j in read_csv(tmp_path / "out_flux_jobs.csv")}
    assert final["w0!B"] == {"sched": {"resource_summary": "rank[0-2]/core0"}}
    assert final["w0!D"] == {"sched": {"resource_summary": "rank0/core0"}}
