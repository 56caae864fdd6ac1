"""Batsim 5's output layout (`--output-layout v5`), after Batsim 5.0.0-rc2's export code.

What changes from Batsim 4's files (which batsim-py writes by default):
- names are PREFIX + NAME with no `_` in between (Batsim 5's default prefix is `out/`, so
  `out/jobs.csv`);
- `jobs.csv` has the same columns, but `metadata` is empty (not `""`) and a rejected job's
  `consumed_energy` is empty too;
- `schedule.csv` becomes `schedule.json`: one JSON object, keys sorted (a std::map), numbers
  printed `%f`; its `makespan` is the last completion minus the first submission of the jobs
  that ran (Batsim 4: the last completion); `scheduling_time` and `simulation_time` leave it
  for `real_exec_info.json` (`time_in_edc_seconds`, `time_in_simu_seconds`, and the process's
  peak memory, `memory_VmPeak_kB` and `memory_VmHWM_kB`);
- no Pajé trace; `consumed_energy.csv` and `pstate_changes.csv` with `-E`, `machine_states.csv`
  unless `--disable-machine-state-tracing`, both as in 4.x.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np

from batsim_py.output import jobs_csv

LD = np.longdouble


def jobs_text(sim: Any) -> tuple[str, Any]:
    """Batsim 5's jobs.csv, and the job metrics (JobTimes) Batsim 4's writer computed."""
    buffer = io.StringIO()
    times = jobs_csv.write_rows(sim.job_records, buffer)
    lines = buffer.getvalue().splitlines()
    header = lines[0].split(",")
    col = {name: i for i, name in enumerate(header)}
    out = [lines[0]]
    for row in csv.reader(lines[1:]):
        row[col["metadata"]] = ""
        if row[col["final_state"]] == "REJECTED":
            row[col["consumed_energy"]] = ""
        out.append(",".join(row))
    return "\n".join(out) + "\n", times


def schedule_json(sim: Any, schedule_csv: str, times: Any) -> str:
    """schedule.json from Batsim 4's schedule.csv values and Batsim 5's makespan."""
    header, row = schedule_csv.splitlines()[:2]
    values = dict(zip(header.split(","), row.split(","), strict=True))
    values.pop("scheduling_time", None)
    values.pop("simulation_time", None)
    ran = [r for r in sim.job_records if r.final_state != "REJECTED"]
    if ran:
        first = min(LD(r.job.subtime) for r in ran)
        values["makespan"] = "%f" % float(np.max(times.completion) - first)
    else:
        values["makespan"] = "%f" % 0.0
    values["batsim_version"] = '"' + values["batsim_version"] + '"'
    lines = [f'  "{key}": {values[key]}' for key in sorted(values)]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def real_exec_info(sim: Any, simulation_time: float) -> str:
    peak, hwm = _memory_kb()
    values = {"memory_VmHWM_kB": str(hwm), "memory_VmPeak_kB": str(peak),
              "time_in_edc_seconds": "%f" % sim.scheduling_time,
              "time_in_simu_seconds": "%f" % simulation_time}
    lines = [f'  "{key}": {values[key]}' for key in sorted(values)]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _memory_kb() -> tuple[int, int]:
    """VmPeak and VmHWM of this process (kB), as Batsim 5 reads them (0 where unknown)."""
    peak = hwm = 0
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    peak = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except OSError:
        pass
    return peak, hwm


def files(sim: Any, simulation_time: float, schedule_text: Callable[[Any, Any, float], str]
          ) -> list[tuple[str, Callable[[TextIO], None]]]:
    """(name, writer) of every Batsim 5 output file of `sim`."""
    state: dict[str, Any] = {}

    def jobs(f: TextIO) -> None:
        text, state["times"] = jobs_text(sim)
        f.write(text)

    def schedule(f: TextIO) -> None:
        times = state["times"]
        f.write(schedule_json(sim, schedule_text(sim, times, simulation_time), times))

    out: list[tuple[str, Callable[[TextIO], None]]] = [
        ("jobs.csv", jobs), ("schedule.json", schedule),
        ("real_exec_info.json", lambda f: f.write(real_exec_info(sim, simulation_time)))]
    return out
