"""What a simulation run is configured with, independent of how the CLI spells it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Options:
    export_prefix: str = "out"
    timing: str = "batsim"  # "batsim" (internal message delays) or "ideal"
    allow_compute_sharing: bool = False
    allow_storage_sharing: bool = True
    forward_profiles_on_submission: bool = False
    dynamic_jobs: bool = False
    acknowledge_dynamic_jobs: bool = False
    profile_reuse: bool = False
    sched_config: str = ""
    forward_unknown_events: bool = False
    machine_state_tracing: bool = True
    schedule_tracing: bool = True  # PREFIX_schedule.trace (Pajé), as Batsim writes it
    energy: bool = False
    # Legacy text protocol (seed 001): SIMULATION_ENDS (`Z`) travels with the batch holding the
    # last job's end instead of a message of its own, as 2016 Batsim sent it.
    end_in_last_batch: bool = False
    # Legacy `F` (seed 001: "machines in a failure state, crashed, no jobs can be computed on
    # them"): a machine_unavailable external event kills the jobs running there (sim/failures.py).
    unavailable_kills: bool = False
    version: str = "batsim-py-0.1.0"
    # Batsim 5's rules where they differ from 4's (a batprotocol EDC drives the run):
    # a CallMeLater already due fires at once instead of being an error.
    v5_semantics: bool = False
    # Batsim's --no-sched (batexec): no scheduler, every job starts at 0 (sim/batexec.py).
    no_sched: bool = False
    output_layout: str = "v4"  # "v5": Batsim 5's file names and formats (output/v5_layout.py)
