"""What a Dask task does: run a batch of runs, one after the other, in this process.

Why in-process and batched: a short simulation (a few hundred milliseconds) costs less than
starting a Python process or a round trip to the Dask scheduler, so a task takes several runs
(`batch_size`) and runs them through the Python API (`batsim_py.api.Simulator`), exactly as
`batsim-py -p ... -w ... --scheduler ... -e PREFIX` would (same files, same bytes).

Each run is recorded on its own as soon as it ends (store.py: outputs, then the marker), so a
batch interrupted half-way keeps its finished runs, and a batch that Dask retries (its worker
died) skips them: a finished run is never computed twice.

The kernel sets process-wide interpreter state during a run (the garbage collector is frozen,
see run.py), so runs of one process never overlap: a lock serialises them even on a worker
with several threads (give workers one thread each: `--nthreads 1`).
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import socket
import threading
import time
from collections.abc import Sequence
from typing import Any

from batsim_py.campaign import store
from batsim_py.campaign.spec import Generated, InputFile, RunConfig

TOPIC = "batsim-py-campaign"
"""Dask event topic on which each finished run is announced (the client's progress bar)."""

_RUN_LOCK = threading.Lock()


def workload_paths(config: RunConfig, root: str) -> list[str]:
    """The files given as -w: a file as is, a generated workload in the run's folder."""
    folder = store.run_folder(root, config.run_id)
    return [w.path if isinstance(w, InputFile) else os.path.join(folder, f"w{i}.json")
            for i, w in enumerate(config.workloads)]


def command_line(config: RunConfig, root: str, prefix: str | None = None) -> list[str]:
    """The same run alone on the command line (`-e` defaults to the run's own prefix)."""
    argv = ["batsim-py", "-p", config.platform.path]
    for path in workload_paths(config, root):
        argv += ["-w", path]
    argv += ["--scheduler", config.scheduler]
    if config.sched_options:
        argv += ["--sched-cfg", config.options_json]
    argv += ["--timing", config.timing]
    if config.energy:
        argv.append("-E")
    argv += ["-e", prefix or store.output_prefix(root, config.run_id), "-q"]
    return argv


def _write_generated(config: RunConfig, root: str) -> None:
    from batsim_py.workload.generate import generate_delay_workload
    from batsim_py.workload.writer import workload_json_text

    folder = store.run_folder(root, config.run_id)
    for i, w in enumerate(config.workloads):
        if isinstance(w, Generated):
            data = generate_delay_workload(seed=config.workload_seed or 0, **dict(w.params))
            store.write_atomic(os.path.join(folder, f"w{i}.json"), workload_json_text(data))


def _error_line(exc: BaseException) -> str:
    from batsim_py.errors import BatsimPyError
    from batsim_py.text import printable

    if isinstance(exc, BatsimPyError):
        return f"{type(exc).__name__}: {exc}"
    return f"internal error: {type(exc).__name__}: {printable(str(exc))}"


def run_one(config: RunConfig, root: str, retry_failed: bool = False,
            time_limit: float | None = None) -> dict[str, Any]:
    """Run `config` unless its marker says it is complete; its record (`skipped` set when it
    was complete already). Errors of the run are recorded, not raised; only an error of the
    store itself (disk full, folder gone) escapes, for Dask to retry the task.

    `time_limit` (seconds): the run goes to a process of its own (child.py), stopped when the
    limit is reached; it is then recorded as timed out and its partial outputs removed."""
    done = store.read_marker(root, config.run_id)
    if done is not None and not (retry_failed and done.get("status") != store.STATUS_OK):
        return {**done, "skipped": True}
    folder = store.run_folder(root, config.run_id)
    os.makedirs(folder, exist_ok=True)
    where = f"{socket.gethostname()}:{os.getpid()}"
    with open(os.path.join(folder, "attempts.log"), "a", encoding="utf-8") as log:
        log.write(f"{time.time():.3f} {where}\n")
    store.write_atomic(os.path.join(folder, "command.txt"),
                       shlex.join(command_line(config, root)) + "\n")
    started = time.perf_counter()
    with _RUN_LOCK:
        status, error, metrics = store.STATUS_OK, None, None
        try:
            _write_generated(config, root)
            if time_limit is None:
                metrics = _simulate(config, root)
            else:
                from batsim_py.campaign.child import RunTimedOut, run_in_child

                try:
                    metrics = run_in_child(config, root, time_limit)
                except RunTimedOut:
                    removed = store.remove_outputs(root, config.run_id)
                    status, error = store.STATUS_TIMEOUT, timeout_line(time_limit, removed)
                except RuntimeError as exc:  # the run's own error, as the child wrote it
                    status, error = store.STATUS_FAILED, str(exc)
        except Exception as exc:  # a failing run is a result: recorded, the others go on
            status, error = store.STATUS_FAILED, _error_line(exc)
    record = {
        "run_id": config.run_id,
        "status": status,
        "error": error,
        "metrics": metrics,
        "factors": config.factors(),
        "wall_seconds": round(time.perf_counter() - started, 6),
        "worker": where,
    }
    store.write_atomic(os.path.join(folder, store.MARKER),
                       json.dumps(record, indent=1, allow_nan=True) + "\n")
    return record


def timeout_line(limit: float, removed: int) -> str:
    """The `error` of a run stopped at its time limit (one line: what, why, what to do)."""
    outputs = (f"its {removed} partial output file(s) were removed" if removed
               else "it left no output file")
    return (f"timed out: the run was stopped after the per-run time limit of {limit:g} s "
            f"(run_time_limit, --run-time-limit); {outputs}; raise the limit and rerun "
            "with --retry-failed")


def _simulate(config: RunConfig, root: str) -> dict[str, Any]:
    """One simulation through the Python API, outputs under the run's prefix; its metrics."""
    import math

    from batsim_py.analysis.metrics import run_metrics
    from batsim_py.api import Simulator

    sim = Simulator(config.platform.path, workload_paths(config, root),
                    scheduler=config.scheduler, sched_options=dict(config.sched_options),
                    export=store.output_prefix(root, config.run_id), timing=config.timing,
                    energy=config.energy,
                    sched_config=config.options_json if config.sched_options else "")
    results = sim.run()
    metrics = run_metrics(results.analysis_run(config.run_id))
    return {k: (None if isinstance(v, float) and math.isnan(v) else float(v))
            for k, v in metrics.items()}


def run_batch(configs: Sequence[RunConfig], root: str, retry_failed: bool = False,
              time_limit: float | None = None) -> list[dict[str, Any]]:
    """The Dask task: every run of the batch in turn; their records. Each finished run is
    announced on the `TOPIC` event topic when running in a Dask worker."""
    worker = _dask_worker()
    if worker is not None:  # no per-run chatter in a worker's log (its errors are recorded)
        logging.getLogger("batsim_py").setLevel(logging.ERROR)
    records = []
    for config in configs:
        record = run_one(config, root, retry_failed, time_limit)
        records.append(record)
        if worker is not None:
            try:
                worker.log_event(TOPIC, {"root": root, "run_id": config.run_id,
                                         "status": record["status"],
                                         "skipped": bool(record.get("skipped"))})
            except Exception:  # progress is best effort; the store is the truth
                pass
    return records


def _dask_worker() -> Any:
    try:
        from distributed import get_worker

        return get_worker()
    except (ImportError, ValueError):
        return None
