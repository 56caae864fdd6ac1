"""One simulation from files to outputs: what `batsim-py -p ... -w ...` does after parsing."""

from __future__ import annotations

import gc
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import BatsimPyError, OutputError, UsageError
from batsim_py.native import log_kernel
from batsim_py.output.files import check_prefix, write_outputs
from batsim_py.output.report import OutputReport
from batsim_py.platform.machines import build_machines
from batsim_py.platform.model import Platform
from batsim_py.platform.reader import load_platform
from batsim_py.sim.options import Options
from batsim_py.sim.simulation import Simulation
from batsim_py.workload.dax import load_workflows
from batsim_py.workload.events import load_events
from batsim_py.workload.model import Workload
from batsim_py.workload.reader import load_workload

log = logging.getLogger(__name__)
# The collector's thresholds during a run (`execute`): few collections of the young objects,
# the generations above almost never.
RUN_GC_THRESHOLDS = (50_000, 50, 100)


@dataclass
class RunSpec:
    platform: str | Platform  # a file, or a platform already read (the Python API)
    workloads: Sequence[str | Workload]
    options: Options = field(default_factory=Options)
    master_host: str = "master_host"
    extra_roles: Sequence[tuple[Sequence[str], str]] = ()
    mmax: int = 0
    mmax_workload: bool = False
    events: Sequence[str] = ()
    # DAX workflows (docs/workflows.md): files started at 0 (-W), named wf0, wf1, ..., then
    # (file, start time) pairs (--WS), named wfc0, wfc1, ...: Batsim's names and order
    workflows: Sequence[str] = ()
    workflow_starts: Sequence[tuple[str, float]] = ()
    workflow_jobs_limit: int = 0  # most unfinished jobs per workflow (0: no limit)
    ignore_beyond_last_workflow: bool = False  # Batsim's -k rule (docs/workflows.md)
    write_outputs: bool = True  # False: results stay in memory (the Python API)
    progress: bool = False  # a progress line on stderr (batsim_py.progress)


def run_simulation(
    spec: RunSpec, decision: DecisionProcess, setup: Callable[[Simulation], None] | None = None,
    report: OutputReport | None = None,
) -> Simulation:
    """Load inputs, simulate, write outputs (also after an error), return the simulation.

    `setup(sim)` runs between loading and simulating: user code plugs in there (SimPy
    processes, sources: `--process`, the Python API). `report` (if given) tells which output
    files were written (docs/reliability.md)."""
    t0 = time.perf_counter()
    sim = build_simulation(spec, decision)
    if setup is not None:
        try:
            setup(sim)
        except BaseException:
            decision.close()
            raise
    execute(sim, spec, t0, report)
    return sim


def _check_needs(decision: DecisionProcess, options: Options) -> None:
    """An in-process scheduler that needs the energy model (`needs_energy`, e.g. fcfs_sleep)
    is refused before the run, not when it first switches a machine off."""
    scheduler: object = decision
    while (inner := getattr(scheduler, "inner", None) or getattr(scheduler, "scheduler", None)
           ) is not None:
        scheduler = inner
    if getattr(scheduler, "needs_energy", False) and not options.energy:
        name = getattr(scheduler, "name", type(scheduler).__name__)
        raise UsageError(f"scheduler {name} switches machines to sleep pstates, which needs the "
                         "energy model: run with -E/--energy (Python API: energy=True)")


def _bind_simulation(decision: DecisionProcess, sim: Simulation) -> None:
    """A peer that needs the simulation before it runs (a batprotocol EDC: its handshake and
    SimulationBegins need the platform; the Flux job manager: the hosts' core counts) gets it
    through `bind_simulation(sim)`, also under wrappers (`inner`; `scheduler` of InProcess)."""
    peer: object = decision
    for _ in range(8):  # (wrappers nest a few deep; never follow a cycle)
        if peer is None:
            return
        bind = getattr(peer, "bind_simulation", None)
        if bind is not None:
            bind(sim)
            return
        peer = getattr(peer, "inner", None) or getattr(peer, "scheduler", None)


def build_simulation(spec: RunSpec, decision: DecisionProcess) -> Simulation:
    """Read and check the inputs; the simulation, not started (closes `decision` on error).

    The output prefix is checked writable first: not after the whole run."""
    # Reading builds a million objects for a large workload and no reference cycles: with the
    # collector on, each of its passes would scan them all again.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _check_needs(decision, spec.options)
        if spec.workflow_jobs_limit < 0:
            raise UsageError(f"--workflow-jobs-limit must be >= 0, not {spec.workflow_jobs_limit}")
        if spec.write_outputs:
            check_prefix(spec.options.export_prefix)
        platform = (spec.platform if isinstance(spec.platform, Platform)
                    else load_platform(spec.platform))
        workloads = [w if isinstance(w, Workload) else load_workload(w, f"w{i}")
                     for i, w in enumerate(spec.workloads)]
        machines = build_machines(
            platform,
            master_host=spec.master_host,
            extra_roles=spec.extra_roles,
            mmax=spec.mmax,
            mmax_workload=max((w.nb_res for w in workloads), default=None)
            if spec.mmax_workload
            else None,
        )
        event_lists = [
            load_events(path, f"we{i}", spec.options.forward_unknown_events)
            for i, path in enumerate(spec.events)
        ]
        sim = Simulation(platform, machines, workloads, decision, spec.options, event_lists,
                         load_workflows(spec.workflows, spec.workflow_starts),
                         spec.workflow_jobs_limit,
                         spec.ignore_beyond_last_workflow)
        _bind_simulation(decision, sim)
        return sim
    except BaseException:
        decision.close()
        raise
    finally:
        if collecting:
            # Everything read counts as allocated since the last collection (f_50k: 71,000
            # objects, beyond any threshold): re-enabled as it is, the collector would scan
            # them all at the next allocation (f_50k: 62,000 objects, 10-20 ms, collecting
            # nothing). Moved to the oldest generation instead (freeze, then unfreeze: the
            # young generations' count starts again from 0), they are scanned only by a full
            # collection, and a run freezes them anyway (`execute`). Nothing is left out of
            # the collector's reach: a cycle there is still collected by a full collection.
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def execute(sim: Simulation, spec: RunSpec, t0: float,
            report: OutputReport | None = None) -> None:
    """Simulate `sim` (built by `build_simulation`), then write its outputs, error or not.

    The outputs are written as soon as every job is over, before SIMULATION_ENDS is sent (a
    scheduler that dies or hangs on it loses nothing), and otherwise when the run stops,
    whatever stopped it. A write error never hides the run's own error: it is added to it.
    """
    report = OutputReport() if report is None else report
    decision = sim.decision
    prefix = spec.options.export_prefix
    log_kernel(log)  # a pure kernel nobody asked for: say so, and how to compile it

    def write(only: frozenset[str] | None = None) -> None:
        if only is None:
            report.paths.clear()
        paths = write_outputs(sim, prefix, time.perf_counter() - t0, report, only)
        (log.info if only is None else log.debug)(  # (a rewrite: the same files)
            "outputs written: %s", ", ".join(os.path.normpath(p) for p in paths))

    written_at_end = False
    end_date = 0.0

    def on_end() -> None:
        nonlocal written_at_end, end_date
        write()
        written_at_end = True
        end_date = sim.engine.now

    if spec.write_outputs:
        sim.on_end = on_end
    error: BaseException | None = None
    try:
        # The inputs live for the whole run: keep the collector from scanning them again and
        # again, and collect less often (the engine allocates many short-lived objects and,
        # since actors drop their last request, no cycles; a scheduler's own cycles are still
        # collected). No collection first: loading makes no garbage cycles (a full collection
        # there found none on f_10k and f_50k, and took 27 and 78 ms to say so); any that
        # were made would be collected after the run, once unfrozen.
        gc.freeze()
        thresholds = gc.get_threshold()
        gc.set_threshold(*RUN_GC_THRESHOLDS)
        try:
            if spec.progress:
                from batsim_py.progress import ProgressDisplay

                with ProgressDisplay(sim):
                    sim.run()
            else:
                sim.run()
        finally:
            # The run's survivors (a record per job) join the inputs in the oldest generation
            # (frozen, then unfrozen with them): left in the younger ones, the collector's
            # thresholds restored would rescan them all at once, for nothing (a million jobs:
            # 0.6 s; 400,000: 0.31 s, collecting nothing). A cycle among them is still
            # collected, by the next full collection.
            gc.freeze()
            gc.set_threshold(*thresholds)
            gc.unfreeze()
        if spec.write_outputs:
            if not written_at_end or sim.decided_after_end:
                write()  # stopped early (the Python API), or the last reply decided something
            elif sim.paje is not None and sim.engine.now != end_date:
                write(frozenset({"schedule.trace"}))  # it ends at Batsim's clock at exit
    except BaseException as exc:
        error = exc
        if spec.write_outputs and not written_at_end and report.error is None:
            try:
                write()
            except OutputError as write_error:
                _add_write_error(exc, write_error)
        raise
    finally:
        try:
            decision.close()
        except OutputError as close_error:  # the transcript's last lines
            if error is None:
                raise
            _add_write_error(error, close_error)


def _add_write_error(error: BaseException, write_error: OutputError) -> None:
    """A run's own error stays the one reported; a write error is added to its message."""
    if isinstance(error, BatsimPyError) and error is not write_error:
        error.args = (f"{error}; besides, {write_error}",)
