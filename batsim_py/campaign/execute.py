"""Running a campaign on a `dask.distributed` cluster: which client, which batches, the wait.

Dask does the scheduling, the retries and the placement; this module only decides what a task
is (a batch of runs, worker.py), opens the cluster the user asked for, follows progress, and
builds the table from the store at the end, also when interrupted:

- no client and no address: a `LocalCluster` sized to the machine (one worker process per core
  this process may use, one thread each: runs are CPU-bound and serialised per process);
- `scheduler_address`: an existing Dask scheduler (`dask scheduler`, a dask-jobqueue
  SLURMCluster/OARCluster's `scheduler_address`), whose workers must see the campaign folder;
- `client`: a `distributed.Client` the caller made (the Python API; dask-jobqueue recipes).

A task whose worker dies (killed, out of memory, node lost) is rescheduled by Dask on another
worker (up to `distributed.scheduler.allowed-failures` times, default 3); a task that raises
(the store cannot be written) is retried `retries` times. Runs are recorded one by one by the
workers, so whatever Dask retries, a finished run is not run again (worker.py).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from batsim_py.campaign import store
from batsim_py.campaign.lock import campaign_lock
from batsim_py.campaign.progress import CampaignProgress
from batsim_py.campaign.spec import CampaignError, CampaignSpec, RunConfig, check_time_limit
from batsim_py.campaign.worker import TOPIC, run_batch

log = logging.getLogger(__name__)

MAX_BATCH = 50
"""Largest default batch: a longer task would make progress and load balance coarse."""
TASKS_PER_WORKER = 4
"""Default batching aims at this many tasks per worker (the tail of the campaign balances)."""
CONNECT_TIMEOUT = 30.0
"""Seconds to reach an existing scheduler before giving up with a clear error."""


class CampaignIncomplete(CampaignError):
    """Some runs could not be run (their tasks failed in Dask): rerun to resume them."""


def default_workers() -> int:
    """One worker per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def batch_size_for(n_runs: int, n_workers: int, given: int | None = None) -> int:
    if given is not None:
        return max(1, given)
    return max(1, min(MAX_BATCH, math.ceil(n_runs / (TASKS_PER_WORKER * max(1, n_workers)))))


def batches(runs: Sequence[RunConfig], size: int) -> list[list[RunConfig]]:
    return [list(runs[i:i + size]) for i in range(0, len(runs), size)]


@contextmanager
def open_client(client: Any = None, scheduler_address: str | None = None,
                workers: int | None = None) -> Iterator[Any]:
    """The client to use: the caller's, one connected to `scheduler_address`, or a new
    LocalCluster's (closed on exit, its worker processes stopped)."""
    if client is not None:
        yield client
        return
    from batsim_py.campaign.deps import need

    need("distributed", "Dask runs the campaign")
    from distributed import Client, LocalCluster

    if scheduler_address:
        try:
            own = Client(scheduler_address, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise CampaignError(
                f"--scheduler-address {scheduler_address}: cannot reach a Dask scheduler "
                f"there ({type(exc).__name__}: {exc}); start one (dask scheduler) or run "
                "without --scheduler-address for a local cluster") from None
        try:
            yield own
        finally:
            own.close()
        return
    n = workers or default_workers()
    if n < 1:
        raise CampaignError(f"--workers must be >= 1, not {n}")
    # No dashboard; the scheduler's HTTP server (health, metrics) on a free port, not 8787
    # (another cluster may hold it: Dask would then warn on stderr).
    # Its workers drop the heartbeat traceback of distributed's shutdown race (quiet.py).
    from batsim_py.campaign.quiet import QuietHeartbeat

    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR,
                           scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                           plugins=(QuietHeartbeat(),))
    own = Client(cluster)
    try:
        yield own
    finally:
        own.close()
        cluster.close()


def _worker_count(client: Any) -> int:
    try:
        return len(client.scheduler_info().get("workers", {}))
    except Exception:
        return 1


def run_campaign(spec: CampaignSpec, root: str, *, client: Any = None,
                 scheduler_address: str | None = None, workers: int | None = None,
                 batch_size: int | None = None, retry_failed: bool = False,
                 retries: int = 2, progress: bool = False,
                 run_time_limit: float | None = None) -> Any:
    """Run every run of `spec` not yet complete in `root`; the metrics table (DataFrame).

    The table (root/metrics.parquet, root/metrics.csv) is written at the end, also when the
    campaign is interrupted (Ctrl-C, SIGTERM) or some tasks fail; then `CampaignIncomplete`
    (or the interruption) is raised after it is written. `run_time_limit` (seconds; default
    the spec's `run_time_limit`): a run still going then is stopped and recorded as timed out.
    The campaign folder is locked for the whole call (lock.py): a second campaign process on
    it stops at once with `CampaignBusy`."""
    root = os.path.abspath(root)
    limit = spec.run_time_limit if run_time_limit is None else check_time_limit(
        run_time_limit, "--run-time-limit")
    with campaign_lock(root):
        return _run_locked(spec, root, client, scheduler_address, workers, batch_size,
                           retry_failed, retries, progress, limit)


def _run_locked(spec: CampaignSpec, root: str, client: Any, scheduler_address: str | None,
                workers: int | None, batch_size: int | None, retry_failed: bool,
                retries: int, progress: bool, limit: float | None) -> Any:
    store.write_campaign_index(root, spec.name, spec.source, spec.runs)
    todo = [r for r in spec.runs if not store.is_complete(root, r.run_id, retry_failed)]
    meter = CampaignProgress(len(spec.runs), len(spec.runs) - len(todo), enabled=progress)
    errors: list[str] = []
    try:
        if todo:
            with open_client(client, scheduler_address, workers) as c:
                errors = _submit_and_wait(c, todo, root, retry_failed, retries,
                                          batch_size or spec.batch_size, meter, limit)
    finally:
        meter.close()
        frame = store.table(root, spec.runs)
        store.write_table(root, frame)
    if errors:
        pending = int((frame["status"] == store.STATUS_PENDING).sum())
        raise CampaignIncomplete(
            f"{pending} run(s) of campaign {spec.name} could not be run ({errors[0]}"
            f"{f'; and {len(errors) - 1} more task error(s)' if len(errors) > 1 else ''}); "
            f"rerun the same command to resume them ({root})")
    return frame


def _submit_and_wait(client: Any, todo: Sequence[RunConfig], root: str, retry_failed: bool,
                     retries: int, batch_size: int | None, meter: CampaignProgress,
                     limit: float | None = None) -> list[str]:
    from distributed import as_completed

    size = batch_size_for(len(todo), _worker_count(client), batch_size)
    counted: set[str] = set()
    lock = threading.Lock()

    def count(run_id: str, status: str) -> None:
        with lock:
            if run_id in counted:
                return
            counted.add(run_id)
        meter.finished(status)

    def on_event(event: Any) -> None:
        _, msg = event
        if isinstance(msg, dict) and msg.get("root") == root and not msg.get("skipped"):
            count(msg["run_id"], msg["status"])

    try:
        client.subscribe_topic(TOPIC, on_event)
        subscribed = True
    except Exception:  # an old or asynchronous client: progress at the end of each task
        subscribed = False
    meter.start()
    token = uuid.uuid4().hex[:8]
    futures = [client.submit(run_batch, batch, root, retry_failed, limit,
                             key=f"batsim-py-campaign-"
                             f"{token}-{i}", pure=False, retries=retries)
               for i, batch in enumerate(batches(todo, size))]
    errors: list[str] = []
    try:
        for future in as_completed(futures):
            try:
                records = future.result()
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            for record in records:  # (events may be late or lost: the results are not)
                if not record.get("skipped"):
                    count(record["run_id"], record["status"])
    finally:
        if subscribed:
            try:
                client.unsubscribe_topic(TOPIC)
            except Exception:
                pass
        pending = [f for f in futures if not f.done()]
        if pending:  # (interrupted: one call for all, not one round trip each)
            try:
                client.cancel(pending)
            except Exception:
                pass
    return errors
