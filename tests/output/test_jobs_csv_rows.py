"""The chunk-at-once formatting of jobs.csv gives exactly the row-by-row text."""

from __future__ import annotations

import io
import random

from batsim_py.output import jobs_csv
from batsim_py.workload.model import Job

STATES = ("COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED",
          "COMPLETED_FAILED")


def _records(n: int, seed: int, rejected: float = 0.0, whole: bool = False,
             ranges: float = 0.5, energy: bool = False,
             metadata: tuple[str, ...] = ("", "meta")) -> list[jobs_csv.JobRecord]:
    """Random records; `whole`: times in whole seconds (as a run with whole-second dates
    and delays), `ranges`: the share of contiguous allocations."""
    rng = random.Random(seed)

    def time(scale: float) -> float:
        x = rng.random() * scale
        return float(round(x)) if whole else x

    out = []
    for i in range(n):
        res = rng.randint(1, 64) if rng.random() < 0.5 else 1
        job = Job(f"w0!{i}", "w0", str(i), rng.choice([0.0, time(1e5)]), res,
                  rng.choice([-1.0, time(1e4) + 1.0]), "p", {})
        start = time(1e5)
        end = start + rng.choice([0.0, time(1e4)])
        lo = rng.randint(0, 100)
        alloc = range(lo, lo + res) if rng.random() < ranges else tuple(
            sorted(rng.sample(range(200), res)))
        state = "REJECTED" if rng.random() < rejected else rng.choice(STATES)
        joules = jobs_csv.LD(rng.random() * 1e6) if energy else None
        out.append(jobs_csv.JobRecord(job, state, start, end, alloc, joules,
                                      rng.choice(metadata)))
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


def test_chunked_text_equals_row_by_row_every_column_kind(monkeypatch) -> None:
    """Whole-second columns (printed from integers), chunks of contiguous allocations only
    (printed in three parts), energies and metadata given or constant, odd doubles."""
    monkeypatch.setattr(jobs_csv, "CHUNK", 61)
    cases = [
        dict(whole=True), dict(whole=True, ranges=1.0), dict(ranges=1.0),
        dict(whole=True, ranges=1.0, energy=True), dict(whole=True, energy=True, metadata=("",)),
        dict(ranges=1.0, metadata=("",)), dict(ranges=1.0, metadata=("x",)),
        dict(whole=True, rejected=0.05),
    ]
    for seed, case in enumerate(cases):
        records = _records(500, seed=seed, **case)
        out = io.StringIO()
        jobs_csv.write_rows(records, out)
        assert out.getvalue() == _row_by_row(records), case
    # Doubles whose `%f` is not an integer's: -0.0 (its sign), 2**53 and beyond, tiny ones.
    odd = [-0.0, 0.0, 2.0**53, 2.0**53 + 2, 1e300, 5e-7, 1.5e-6, 7.0, 1e15 + 0.5]
    for k, value in enumerate(odd):
        records = _records(3, seed=k, whole=True, ranges=1.0)
        for r in records:
            r.starting_time = value
            r.end_time = value + 1.0
        records.append(jobs_csv.JobRecord(
            Job("w0!odd", "w0", "odd", value, 1, 60.0, "p", {}), "COMPLETED_KILLED", value,
            value, range(2, 3), None, ""))
        out = io.StringIO()
        jobs_csv.write_rows(records, out)
        assert out.getvalue() == _row_by_row(records), value
