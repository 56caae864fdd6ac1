"""The chunk-at-once formatting of jobs.csv gives exactly the row-by-row text."""

from __future__ import annotations

import io
import random

from batsim_py.output import jobs_csv
from batsim_py.workload.model import Job

STATES = ("COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED",
          "COMPLETED_FAILED")


def _records(n: int, seed: int, rejected: float = 0.0) -> list[jobs_csv.JobRecord]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        res = rng.randint(1, 64)
        job = Job(f"w0!{i}", "w0", str(i), rng.choice([0.0, rng.random() * 1e5]), res,
                  rng.choice([-1.0, rng.random() * 1e4]), "p", {})
        start = rng.random() * 1e5
        end = start + rng.choice([0.0, rng.random() * 1e4])
        lo = rng.randint(0, 100)
        alloc = range(lo, lo + res) if rng.random() < 0.5 else tuple(
            sorted(rng.sample(range(200), res)))
        state = "REJECTED" if rng.random() < rejected else rng.choice(STATES)
        out.append(jobs_csv.JobRecord(job, state, start, end, alloc, None,
                                      rng.choice(["", "meta"])))
    return out


def _row_by_row(records: list[jobs_csv.JobRecord]) -> str:
    times, runtime, finish = jobs_csv.compute_times(records)
    columns = (runtime, finish, times.waiting, times.turnaround, times.slowdown)
    printed = iter(zip(*(c.astype(float).tolist() for c in columns), strict=True))
    return jobs_csv.HEADER + "\n" + "".join(
        jobs_csv._row(r, None if r.final_state == "REJECTED" else next(printed))
        for r in records
    )


def test_chunked_text_equals_row_by_row(monkeypatch) -> None:
    monkeypatch.setattr(jobs_csv, "CHUNK", 97)  # several chunks, some with rejected jobs
    for rejected in (0.0, 0.01):
        records = _records(1000, seed=5, rejected=rejected)
        out = io.StringIO()
        jobs_csv.write_rows(records, out)
        assert out.getvalue() == _row_by_row(records)
