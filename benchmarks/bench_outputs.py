"""Speed of everything around the simulation proper: loading the inputs, recording the
schedule during the run, and writing the output files, on a large reference run.

Runs f_50k (the 50,000-job reference workload on cluster512, --mmax-workload, in-process
`easy`) in a fresh process and times, separately:
- loading: the platform XML, the workload JSON (parse and validation);
- recording: the calls the run makes to the Pajé and machine-state recorders (job starts and
  ends), replayed on fresh recorders from the run's own record (the run itself is not timed:
  the kernel is not this benchmark's subject); for machine states, with the time per state
  computed at the end (`time_in`: a plain run's states are logged, then computed);
- writing: each output file (jobs.csv, schedule.csv, machine_states.csv, schedule.trace),
  then `write_outputs` as a run calls it (all files, temporary files and renames included).

Each repetition is paired with a yardstick sample taken just before it (benchmarks/yardstick.py,
a fresh process); every phase is printed in seconds and as a ratio to the yardstick (median of
the pairs' ratios), CPU time too, because the machine may be shared.

    python benchmarks/bench_outputs.py [--case f_50k] [--repeat 3] [--timing ideal]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import reference
from yardstick import Yardstick

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's batsim_py, not an installed one
CASES = {
    "f_10k": "f_10k_easy_cluster128_quiet",
    "f_50k": "f_50k_easy_cluster128_quiet",
}
PHASES = ("load platform", "load workload", "record paje", "record machines", "jobs.csv",
          "schedule.csv", "machine_states.csv", "schedule.trace", "write_outputs")


class _Timer:
    """Wall and CPU time of the phases of one child run."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def time(self, phase: str, fn, *args):  # noqa: ANN001, ANN202
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn(*args)
        self.wall[phase] = time.perf_counter() - t0
        self.cpu[phase] = time.process_time() - c0
        return result


def _replay_recording(sim, timer: _Timer) -> None:  # noqa: ANN001
    """Replay the run's job starts and ends on fresh Pajé and machine-state recorders."""
    from batsim_py.output.paje import _END, _KILLED, _START, PajeTrace
    from batsim_py.sim.machines import MachineStates

    paje = sim.paje
    calls = []
    for t, kind, k in zip(paje.times, paje.kinds, paje.jobs, strict=True):
        calls.append((kind, paje.job_ids[k], paje.allocs[k], t))

    def record_paje() -> None:
        trace = PajeTrace(paje.machine_names)
        starts, ends, kills = trace.job_starts, trace.job_ends, trace.job_killed
        for kind, job_id, alloc, t in calls:
            if kind == _START:
                starts(job_id, alloc, t)
            elif kind == _END:
                ends(job_id, alloc, t)
            elif kind == _KILLED:
                kills(job_id, alloc, t)

    def record_machines() -> None:
        states = MachineStates(len(sim.machine_states.state), sim.nb_compute)
        starts, ends = states.job_starts, states.job_ends
        for kind, _, alloc, t in calls:
            if kind == _START:
                starts(alloc, t)
            elif kind == _END:
                ends(alloc, t)
        states.time_in()  # (what the log leaves for the end: the time per state)

    timer.time("record paje", record_paje)
    timer.time("record machines", record_machines)


def one_run(platform: str, workload: str, timing: str) -> dict:
    """The child: load, run (untimed), replay the recording, write each file."""
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.output import files, jobs_csv, machine_states_csv
    from batsim_py.platform.reader import load_platform
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options
    from batsim_py.workload.reader import load_workload

    timer = _Timer()
    plat = timer.time("load platform", load_platform, platform)
    work = timer.time("load workload", load_workload, workload, "w0")
    with tempfile.TemporaryDirectory() as out:
        prefix = os.path.join(out, "out")
        sim = run_simulation(
            RunSpec(platform=plat, workloads=[work], mmax_workload=True, write_outputs=False,
                    options=Options(export_prefix=prefix, timing=timing)),
            InProcess(get_scheduler("easy")),
        )
        _replay_recording(sim, timer)

        def jobs() -> object:
            with open(prefix + "_jobs.csv", "w", encoding="utf-8", newline="") as f:
                return jobs_csv.write_rows(sim.job_records, f)

        times = timer.time("jobs.csv", jobs)

        def schedule() -> None:
            with open(prefix + "_schedule.csv", "w", encoding="utf-8", newline="") as f:
                f.write(files.schedule_text(sim, times, 1.0))

        def machine_states() -> None:
            with open(prefix + "_machine_states.csv", "w", encoding="utf-8", newline="") as f:
                f.write(machine_states_csv.HEADER + "\n")
                for text in sim.machine_states.text_chunks(jobs_csv.CHUNK):
                    f.write(text)

        def trace() -> None:  # (as output/files.py writes it: native writer if built)
            with open(prefix + "_schedule.trace", "wb") as f:
                sim.paje.write_body(f)
                f.write(sim.paje.trailer(sim.engine.now).encode())

        timer.time("schedule.csv", schedule)
        timer.time("machine_states.csv", machine_states)
        timer.time("schedule.trace", trace)
        sizes = {name: os.path.getsize(f"{prefix}_{name}") for name in
                 ("jobs.csv", "machine_states.csv", "schedule.trace")}
        timer.time("write_outputs", files.write_outputs, sim, prefix + "2", 1.0)
    return {"wall": timer.wall, "cpu": timer.cpu, "jobs": len(sim.job_records), "sizes": sizes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="f_50k", choices=list(CASES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timing", choices=("batsim", "ideal"), default="ideal")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(args.child[0], args.child[1], args.timing)))
        return 0
    folder = reference() / CASES[args.case]
    spec = json.loads((folder / "case.json").read_text())
    platform, workload = str(folder / spec["platform"]), str(folder / spec["workloads"][0])
    print(f"{args.case}, in-process easy, --timing {args.timing}; load average at start: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    stick = Yardstick()
    runs = []
    for _ in range(args.repeat):
        stick.sample()
        out = subprocess.run(
            [sys.executable, __file__, "--timing", args.timing, "--child", platform, workload],
            check=True, capture_output=True, text=True, cwd=ROOT,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        r["yard"], r["yard_cpu"] = stick.samples[-1], stick.cpu_samples[-1]
        runs.append(r)
    print(f"{runs[0]['jobs']} jobs; sizes: " + ", ".join(
        f"{name} {size / 1e6:.1f} MB" for name, size in runs[0]["sizes"].items()))
    print(f"{'phase':20} {'median (s)':>10} {'cpu med':>8} {'x yardstick':>12} "
          f"{'cpu x yard':>11}")
    for phase in PHASES:
        wall = statistics.median(r["wall"][phase] for r in runs)
        cpu = statistics.median(r["cpu"][phase] for r in runs)
        ratio = statistics.median(r["wall"][phase] / r["yard"] for r in runs)
        cpu_ratio = statistics.median(r["cpu"][phase] / r["yard_cpu"] for r in runs)
        print(f"{phase:20} {wall:>10.3f} {cpu:>8.3f} {ratio:>12.3f} {cpu_ratio:>11.3f}")
    print(f"{stick.summary()}; load average at end: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
