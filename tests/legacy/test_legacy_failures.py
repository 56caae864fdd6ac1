"""Seed 001's `F`/`f`: "the given machines are in a failure state (crashed, no jobs can be
computed on them)" / "no longer in a failure state (jobs can now be computed on them)".

The scheduler here is written from the seed's stamp table alone (a raw Unix-socket client of
legacy_harness): it keeps the set of failed machines from `F`/`f` and places each submitted
job on the lowest idle healthy machines. What it must see: a job running on a machine that
fails is over (its `C` comes, at the failure's date, before the `F`), and a job placed on a
failed machine is refused.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from legacy_harness import events_of, run_legacy

D20 = {"d20": {"type": "delay", "delay": 20}}


def machines(text: str) -> set[int]:
    out: set[int] = set()
    for token in text.split(","):
        lo, _, hi = token.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


class SeedScheduler:
    """First fit on healthy idle machines, tracking S/C/F/f as the seed describes them."""

    def __init__(self, nb_machines: int, sizes: dict[str, int], ignore_failures: bool = False
                 ) -> None:
        self.idle = set(range(nb_machines))
        self.failed: set[int] = set()
        self.sizes = sizes
        self.ignore_failures = ignore_failures
        self.queue: list[str] = []
        self.where: dict[str, set[int]] = {}

    def __call__(self, text: str) -> str:
        now = text.split("|")[0].split(":")[1]
        for _, stamp, content in events_of(text):
            if stamp == "S":
                self.queue.append(content)
            elif stamp == "C":
                self.idle |= self.where.pop(content)
            elif stamp == "F":
                self.failed |= machines(content)
            elif stamp == "f":
                self.failed -= machines(content)
        out = []
        while self.queue:
            free = sorted(self.idle if self.ignore_failures else self.idle - self.failed)
            need = self.sizes[self.queue[0]]
            if len(free) < need:
                break
            job = self.queue.pop(0)
            self.where[job] = set(free[:need])
            self.idle -= self.where[job]
            out.append(f"{now}:J:{job}={','.join(map(str, free[:need]))}")
        return "|".join([f"0:{now}"] + (out or [f"{now}:N"]))


def setup(tmp_path: Path, jobs: list[dict]) -> tuple[str, str, dict[str, int]]:
    wl = tmp_path / "workload.json"
    wl.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": D20}))
    events = tmp_path / "events.jsonl"
    events.write_text('{"timestamp": 5, "type": "machine_unavailable", "resources": "1"}\n'
                      '{"timestamp": 10, "type": "machine_available", "resources": "1"}\n')
    return str(wl), str(events), {f"w0!{j['id']}": j["res"] for j in jobs}


def rows(tmp_path: Path) -> dict[str, dict[str, str]]:
    with open(tmp_path / "out_jobs.csv", newline="") as f:
        return {row["job_id"]: row for row in csv.DictReader(f)}


JOBS = [{"id": 0, "subtime": 0, "res": 2, "profile": "d20"},   # on 0-1: machine 1 fails at 5
        {"id": 1, "subtime": 0, "res": 1, "profile": "d20"},   # on 2: untouched
        {"id": 2, "subtime": 7, "res": 3, "profile": "d20"}]   # needs 3 healthy machines


def test_a_failure_kills_the_jobs_on_the_failed_machines(tmp_path: Path) -> None:
    wl, events, sizes = setup(tmp_path, JOBS)
    rc, out = run_legacy(tmp_path, wl, SeedScheduler(4, sizes), version=3,
                         extra=["--events", events, "--legacy-failure-stamps"])
    assert rc == 0 and out.error is None, out.error
    failure = next(m for m in out.messages if ":F:" in m)
    seen = [(s, c) for _, s, c in events_of(failure)]
    assert ("C", "w0!0") in seen and seen.index(("C", "w0!0")) < seen.index(("F", "1")), failure
    dates = {s: date for date, s, _ in events_of(failure)}
    assert 5 <= dates["C"] == dates["F"] < 5.001
    table = rows(tmp_path)
    assert table["0"]["final_state"] == "COMPLETED_KILLED"
    assert 5 <= float(table["0"]["finish_time"]) < 5.001
    assert table["1"]["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert float(table["1"]["execution_time"]) == 20
    # Job 2 (3 machines, submitted at 7 while 1 is down) waits for the repair at 10: 0, 1, 3.
    assert 10 <= float(table["2"]["starting_time"]) < 10.001
    assert table["2"]["allocated_resources"] == "0-1 3"
    assert sum(m.count(":C:w0!0") for m in out.messages) == 1  # one C per job, never two


def test_without_the_stamps_machine_unavailable_keeps_batsim_4s_meaning(tmp_path: Path
                                                                        ) -> None:
    wl, events, sizes = setup(tmp_path, JOBS[:2])
    rc, out = run_legacy(tmp_path, wl, SeedScheduler(4, sizes), version=3,
                         extra=["--events", events])
    assert rc == 0 and out.error is None
    table = rows(tmp_path)  # Batsim 4: running jobs go on on an unavailable machine
    assert table["0"]["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert float(table["0"]["finish_time"]) >= 20


def test_a_job_placed_on_a_failed_machine_is_refused(tmp_path: Path, capsys) -> None:
    jobs = [{"id": 0, "subtime": 7, "res": 2, "profile": "d20"}]
    wl, events, sizes = setup(tmp_path, jobs)
    rc, _ = run_legacy(tmp_path, wl, SeedScheduler(4, sizes, ignore_failures=True), version=3,
                       extra=["--events", events, "--legacy-failure-stamps"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("batsim-py: error")]
    assert rc == 1 and len(lines) == 1, err
    assert "machine 1 (node1) cannot compute now (it is unavailable)" in lines[0]
