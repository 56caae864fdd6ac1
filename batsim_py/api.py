"""The Python API: build a simulation from files or objects, extend it with SimPy processes,
run it, get its results as pandas DataFrames.

    import batsim_py

    sim = batsim_py.Simulator("platforms/small4.xml", ["workloads/delays_small.json"],
                              scheduler="easy")
    sim.process(my_process)          # my_process(env, sim), or a generator
    results = sim.run()
    results.jobs                      # the columns of PREFIX_jobs.csv

A `Simulator` is also what `batsim-py --process MODULE:FUNCTION` hands to `FUNCTION(env, sim)`:
one object for reading the state (clock, machines, queue, energy so far), waiting on signals
(SimPy events), and acting (external events and jobs through sources, stopping).
"""

from __future__ import annotations

import dataclasses
import inspect
import io
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import simpy

from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import UsageError, UserCodeError
from batsim_py.platform.model import Platform
from batsim_py.run import RunSpec, build_simulation, execute
from batsim_py.sim.machines import NAMES as MACHINE_STATES
from batsim_py.sim.options import Options
from batsim_py.sim.signals import SIGNALS
from batsim_py.sim.simulation import Simulation
from batsim_py.sim.sources import EventSource, JobSource
from batsim_py.workload.model import Workload

_OPTION_NAMES = tuple(f.name for f in dataclasses.fields(Options))


class Simulator:
    """One simulation. Inputs are files (paths) or objects (`Platform`, `Workload`); the
    scheduler is a name (`"easy"`, `"fcfs"`, `"module:Class"`, `"path/file.py:Class"`), a
    scheduler instance (a `DecisionProcess`) or an endpoint (`"tcp://..."`, an external
    Batsim scheduler). Keyword options are those of `batsim_py.sim.options.Options`
    (`timing`, `energy`, `allow_compute_sharing`, ...); `export` writes the output files
    under that prefix as the command line does (default: results in memory only).
    `workflows` (DAX files started at 0, `-W`), `workflow_starts` ((file, start time) pairs,
    `--WS`), `workflow_jobs_limit` and `ignore_beyond_last_workflow` are the command line's
    workflow options (docs/workflows.md)."""

    def __init__(
        self,
        platform: str | Platform,
        workloads: Sequence[str | Workload] | str | Workload = (),
        *,
        scheduler: str | DecisionProcess = "easy",
        sched_options: Mapping[str, Any] | None = None,
        events: Sequence[str] = (),
        export: str | None = None,
        master_host: str = "master_host",
        roles: Sequence[tuple[Sequence[str], str]] = (),
        mmax: int = 0,
        mmax_workload: bool = False,
        workflows: Sequence[str] = (),
        workflow_starts: Sequence[tuple[str, float]] = (),
        workflow_jobs_limit: int = 0,
        ignore_beyond_last_workflow: bool = False,
        **options: Any,
    ) -> None:
        unknown = sorted(set(options) - set(_OPTION_NAMES))
        if unknown:
            raise UsageError(
                f"unknown option(s) {', '.join(unknown)} (known: {', '.join(_OPTION_NAMES)})"
            )
        if "export_prefix" in options:
            raise UsageError("give the output prefix as export=PREFIX")
        if isinstance(workloads, (str, Workload)):
            workloads = [workloads]
        opts = Options(export_prefix=export or "out", **options)
        self.spec = RunSpec(platform=platform, workloads=list(workloads), options=opts,
                            master_host=master_host, extra_roles=roles, mmax=mmax,
                            mmax_workload=mmax_workload, events=list(events),
                            workflows=list(workflows), workflow_starts=list(workflow_starts),
                            workflow_jobs_limit=workflow_jobs_limit,
                            ignore_beyond_last_workflow=ignore_beyond_last_workflow,
                            write_outputs=export is not None)
        self._t0 = time.perf_counter()
        self.sim: Simulation = build_simulation(self.spec, _decision(scheduler, sched_options))
        self._results: Results | None = None
        self._running = False

    @classmethod
    def around(cls, sim: Simulation, spec: RunSpec) -> Simulator:
        """The API object of a simulation built elsewhere (the command line's `--process`)."""
        self = cls.__new__(cls)
        self.spec = spec
        self.sim = sim
        self._t0 = time.perf_counter()
        self._results = None
        self._running = False
        return self

    # ------------------------------------------------------------------ SimPy
    @property
    def env(self) -> simpy.Environment:
        """The `simpy.Environment` on the kernel's clock (`batsim_py.sim.simpy_env`);
        `env.run(until)` is `Simulator.run(until)`."""
        env = self.sim.env
        env.runner = self.run
        return env  # type: ignore[no-any-return]

    def process(self, target: Any, *args: Any) -> Any:
        """Start user code: a generator (a SimPy process), or a function called as
        `target(env, sim, *args)` (if it returns a generator, that is started as a process).
        Returns the `simpy.Process`, or what the function returned."""
        env = self.env
        if inspect.isgenerator(target):
            return env.process(target)
        if not callable(target):
            raise UserCodeError(f"process {target!r} is neither a generator nor a function")
        result = target(env, self, *args)
        if inspect.isgenerator(result):
            return env.process(result)
        return result

    # ------------------------------------------------------------------ state
    @property
    def now(self) -> float:
        """The simulation clock (seconds)."""
        return self.sim.engine.now

    @property
    def nb_machines(self) -> int:
        """Machines, compute and storage (ids 0 to nb_machines - 1)."""
        return len(self.sim.hosts)

    @property
    def compute_machines(self) -> range:
        """Ids of the compute machines (storage machines come after them)."""
        return range(self.sim.nb_compute)

    @property
    def export_prefix(self) -> str | None:
        """The output prefix, when outputs are written (user code may write files beside)."""
        return self.spec.options.export_prefix if self.spec.write_outputs else None

    def machine_states(self) -> list[str]:
        """The state of every machine, by id: sleeping, switching_on, switching_off, idle,
        computing or unavailable."""
        return [MACHINE_STATES[s] for s in self.sim.machine_states.state]

    def machines_in(self, state: str) -> list[int]:
        """Ids of the machines in `state` (see `machine_states`)."""
        code = MACHINE_STATES.index(state)
        return [m for m, s in enumerate(self.sim.machine_states.state) if s == code]

    def queue(self) -> list[str]:
        """Ids of the jobs submitted and not started yet, in submission order."""
        return [j for j, run in self.sim.runs.items() if run.state == "SUBMITTED"]

    def running(self) -> list[str]:
        """Ids of the running jobs."""
        return [j for j, run in self.sim.runs.items() if run.state == "RUNNING"]

    def nb_jobs_in_system(self) -> int:
        """Jobs submitted and not ended yet (queued or running)."""
        sim = self.sim
        return sim.nb_submitted - sim.nb_completed

    def nb_jobs_ended(self) -> int:
        return len(self.sim.job_records)

    def energy(self) -> float:
        """Joules consumed by all machines so far (needs `energy=True`)."""
        trace = self.sim.energy_trace
        if trace is None:
            raise UsageError("energy() needs the energy model: Simulator(..., energy=True)")
        hosts = trace.hosts
        return float(sum(hosts.consumed_now(h) for h in trace.machine_hosts))

    # ------------------------------------------------------------------ signals
    def signal(self, name: str) -> simpy.Event:
        """A SimPy event that succeeds at the next occurrence of signal `name`."""
        return self.sim.user_signals().next(name)  # type: ignore[no-any-return]

    def subscribe(self, name: str) -> simpy.Store:
        """A `simpy.Store` receiving every occurrence of signal `name`."""
        return self.sim.user_signals().subscribe(name)  # type: ignore[no-any-return]

    signal_names = tuple(SIGNALS)

    # ------------------------------------------------------------------ actions
    def event_source(self, name: str | None = None, keep_alive: bool = False) -> EventSource:
        """A source of external events (like one `--events` file): created before the run it
        says hello with the files, during the run at once."""
        self._before_run("event_source()")
        sim = self.sim
        if name is None:
            name = f"we{len(sim.event_lists)}"
        self._check_name(name)
        return EventSource(sim, name, keep_alive)

    def job_source(self, profiles: Mapping[str, Any], name: str | None = None,
                   keep_alive: bool = True, path: str = "") -> JobSource:
        """A source of jobs (a workload of its own, named `name`, default the next `wN`),
        with its profiles (`Profile` objects or Batsim JSON objects); created before the run
        it says hello with the workload files, during the run at once."""
        self._before_run("job_source()")
        sim = self.sim
        if name is None:
            name = f"w{len(sim.workloads)}"
        self._check_name(name)
        return JobSource(sim, name, profiles, keep_alive, path)

    def at_end(self, function: Callable[[], Any]) -> None:
        """Call `function()` once the simulation is over (ended or stopped), before the
        outputs are written (a process's last chance to save what it gathered)."""
        from batsim_py.plugins import call_user

        name = getattr(function, "__qualname__", repr(function))
        self.sim.end_hooks.append(lambda: call_user(function, f"at_end function '{name}'"))

    def stop(self) -> None:
        """End the simulation now: what was simulated so far is kept (jobs still running
        have no row), and written with `export`."""
        self.sim.env.stop()

    # ------------------------------------------------------------------ running
    def run(self, until: float | None = None) -> Results:
        """Simulate to the end (or to date `until`, then stop); return the results."""
        if self._running or self._results is not None:
            raise UsageError("a Simulator runs once; build another one for another run")
        if until is not None:
            def stopper(env: Any, sim: Simulator) -> Any:
                yield env.timeout(until)
                sim.stop()

            self.process(stopper)
        self._running = True
        try:
            execute(self.sim, self.spec, self._t0)
        finally:
            self._running = False
            self._results = Results(self.sim, time.perf_counter() - self._t0)
        return self._results

    @property
    def results(self) -> Results:
        if self._results is None:
            raise UsageError("no results yet: call run() first")
        return self._results

    def _before_run(self, what: str) -> None:
        if self._results is not None or self.sim.end_sent:
            raise UserCodeError(f"{what}: the simulation is over")

    def _check_name(self, name: str) -> None:
        sim = self.sim
        taken = {w.name for w in sim.workloads} | {e.name for e in sim.event_lists}
        if name in taken:
            raise UsageError(f"the name '{name}' is taken (taken: {', '.join(sorted(taken))})")


def _decision(scheduler: Any, options: Mapping[str, Any] | None) -> DecisionProcess:
    from batsim_py.decision.inprocess import InProcess

    if isinstance(scheduler, str):
        if scheduler.startswith(("tcp://", "ipc://", "inproc://")):
            from batsim_py.decision.zmq_peer import ZmqPeer

            return ZmqPeer(scheduler)
        if scheduler.startswith("replay:"):
            from batsim_py.decision.transcript import ReplayPeer

            return ReplayPeer(scheduler[len("replay:"):])
        from batsim_py.schedulers import get_scheduler

        return InProcess(get_scheduler(scheduler, options))
    if isinstance(scheduler, type):
        from batsim_py.schedulers import _instantiate_user

        return InProcess(_instantiate_user(scheduler.__name__, scheduler, dict(options or {})))
    if callable(getattr(scheduler, "exchange", None)):
        return InProcess(scheduler)
    raise UsageError(
        f"scheduler {scheduler!r}: expected a name, a DecisionProcess instance or class, "
        "or an endpoint like tcp://localhost:28000"
    )


class Results:
    """What a run produced, as pandas DataFrames with the columns (and values) of the output
    files: `jobs` (PREFIX_jobs.csv), `machine_states`, `schedule` (one row), and with the
    energy model `consumed_energy` and `pstate_changes`. `csv(name)` is the file's text."""

    def __init__(self, sim: Simulation, simulation_time: float) -> None:
        from batsim_py.output import jobs_csv, machine_states_csv
        from batsim_py.output.files import schedule_text

        self.sim = sim
        self.stopped = sim.stopped
        self.end_time = sim.engine.now
        jobs_text, times = jobs_csv.format_rows(sim.job_records)
        ms = sim.machine_states
        self._texts: dict[str, str] = {
            "jobs": jobs_text,
            "schedule": schedule_text(sim, times, simulation_time),
        }
        if sim.options.machine_state_tracing:
            self._texts["machine_states"] = (machine_states_csv.HEADER + "\n"
                                             + "".join(ms.text_chunks(jobs_csv.CHUNK)))
        trace = sim.energy_trace
        if trace is not None:
            self._texts["consumed_energy"] = ("time,energy,event_type,wattmin,epower\n"
                                              + "".join(r + "\n" for r in trace.rows))
            self._texts["pstate_changes"] = ("time,machine_id,new_pstate\n"
                                             + "".join(r + "\n" for r in trace.pstate_rows))
        self._frames: dict[str, Any] = {}

    def csv(self, name: str) -> str:
        """The text of output file `name` (jobs, schedule, machine_states, ...)."""
        try:
            return self._texts[name]
        except KeyError:
            raise UsageError(f"no output '{name}' (there are: {', '.join(self._texts)})") from None

    def frame(self, name: str) -> Any:
        """Output `name` as a DataFrame, read from the file's text as `batsim_py.analysis`
        reads the file (ids and interval sets as strings, times as floats), so its metrics
        take it as they take the file."""
        frame = self._frames.get(name)
        if frame is None:
            import pandas as pd

            from batsim_py.analysis import load

            text = io.StringIO(self.csv(name))
            if name == "jobs":
                frame = load.read_jobs(text)  # type: ignore[arg-type]
            elif name == "schedule":
                frame = pd.read_csv(text, dtype={"batsim_version": str})
            elif name == "pstate_changes":
                frame = pd.read_csv(text, dtype={"machine_id": str})
            else:
                frame = pd.read_csv(text)
            self._frames[name] = frame
        return frame

    def analysis_run(self, name: str = "run") -> Any:
        """These results as a `batsim_py.analysis` run (its metrics, plots and reports)."""
        from batsim_py.analysis.load import Run

        optional = {k: self.frame(k) if k in self._texts else None
                    for k in ("machine_states", "pstate_changes", "consumed_energy")}
        return Run(name, self.jobs, optional["machine_states"],
                   self.schedule.iloc[0].to_dict(), optional["pstate_changes"],
                   optional["consumed_energy"], self.sim.nb_compute)

    @property
    def jobs(self) -> Any:
        return self.frame("jobs")

    @property
    def machine_states(self) -> Any:
        return self.frame("machine_states")

    @property
    def schedule(self) -> Any:
        return self.frame("schedule")

    @property
    def consumed_energy(self) -> Any:
        return self.frame("consumed_energy")

    @property
    def pstate_changes(self) -> Any:
        return self.frame("pstate_changes")

    def write(self, prefix: str) -> list[str]:
        """Write the output files under `prefix` (as `batsim-py -e PREFIX`); their paths."""
        import os

        folder = os.path.dirname(prefix)
        if folder:
            os.makedirs(folder, exist_ok=True)
        paths = []
        for name, text in self._texts.items():
            path = f"{prefix}_{name}.csv"
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            paths.append(path)
        return paths


def simulate(platform: str | Platform, workloads: Sequence[str | Workload] | str = (),
             *, processes: Sequence[Callable[..., Any]] = (), **kwargs: Any) -> Results:
    """Build, extend with `processes` (each called as `process(env, sim)`), run: the results."""
    sim = Simulator(platform, workloads, **kwargs)
    for p in processes:
        sim.process(p)
    return sim.run()
