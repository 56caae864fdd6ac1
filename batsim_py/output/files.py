"""Writes every output file of a simulation under one prefix (`PREFIX_jobs.csv`, ...).

Called in a `finally`: a run stopped by a scheduler error still leaves what it simulated.
"""

from __future__ import annotations

import os
from typing import Any

from batsim_py.output import jobs_csv, machine_states_csv
from batsim_py.output.jobs_csv import JobTimes
from batsim_py.output.schedule_csv import format_schedule


def write_outputs(sim: Any, prefix: str, simulation_time: float) -> list[str]:
    """Write the files; return their paths."""
    folder = os.path.dirname(prefix)
    if folder:
        os.makedirs(folder, exist_ok=True)
    written = []

    def write(suffix: str, text: str) -> None:
        path = f"{prefix}_{suffix}"
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        written.append(path)

    path = f"{prefix}_jobs.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        times = jobs_csv.write_rows(sim.job_records, f)
    written.append(path)
    ms = sim.machine_states
    write("schedule.csv", schedule_text(sim, times, simulation_time))
    trace = sim.energy_trace
    if trace is not None:
        write("consumed_energy.csv", "time,energy,event_type,wattmin,epower\n"
              + "".join(r + "\n" for r in trace.rows))
        write("pstate_changes.csv", "time,machine_id,new_pstate\n"
              + "".join(r + "\n" for r in trace.pstate_rows))
    if sim.paje is not None:
        path = f"{prefix}_schedule.trace"
        with open(path, "w", encoding="utf-8", newline="") as f:
            for text in sim.paje.chunks(sim.engine.now):
                f.write(text)
        written.append(path)
    if sim.options.machine_state_tracing:
        path = f"{prefix}_machine_states.csv"
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(machine_states_csv.HEADER + "\n")
            for text in ms.text_chunks(jobs_csv.CHUNK):
                f.write(text)
        written.append(path)
    return written


def schedule_text(sim: Any, times: JobTimes, simulation_time: float) -> str:
    """schedule.csv of `sim` (header and row), from the job metrics jobs.csv computed."""
    return format_schedule(
        times=times,
        nb_machines=len(sim.machines),
        time_in_state=sim.machine_states.time_in(),
        consumed_joules=(sim.energy_trace.consumed_joules()
                         if sim.energy_trace is not None else 0.0),
        nb_grouped_switches=sim.nb_grouped_switches,
        nb_machine_switches=sim.nb_machine_switches,
        scheduling_time=sim.scheduling_time,
        simulation_time=simulation_time,
        version=sim.options.version,
    )
