"""The campaign's own LocalCluster ends without an upstream race's traceback on the terminal.

When a campaign ends, the LocalCluster it started closes its scheduler (in the campaign's
process) and stops its workers. A worker's periodic heartbeat can be in flight at that moment;
distributed then logs, in the worker process at ERROR level, "Failed to communicate with
scheduler during heartbeat." with a 30-line traceback (dask/distributed#7105, still open). The
line says nothing about the campaign: every run is already recorded. On a loaded machine it
showed up in the middle of `batsim-py campaign`'s output (CI broke on docs/campaigns.md once).

Why only that message, and only on our own cluster: the scheduler lives in the campaign's
process, so a worker that cannot reach it means the campaign is closing or gone (the worker's
nanny then stops it). Every other worker log line is kept. On a cluster the user gives
(`client=`, `--scheduler-address`) the logs are theirs and nothing is filtered.
"""

from __future__ import annotations

import logging

from distributed import WorkerPlugin

HEARTBEAT_FAILURE = "Failed to communicate with scheduler during heartbeat."
"""distributed.worker's message when a heartbeat's connection is closed under it."""

WORKER_LOGGER = "distributed.worker"


class HeartbeatFailureFilter(logging.Filter):
    """Drops the heartbeat-failure record; lets every other record through."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != HEARTBEAT_FAILURE


_FILTER = HeartbeatFailureFilter()


class QuietHeartbeat(WorkerPlugin):
    """Installs the filter in a worker process (given to the LocalCluster's workers)."""

    name = "batsim-py-quiet-heartbeat"

    def setup(self, worker: object) -> None:
        # addFilter ignores a filter already there: a restarted plugin adds nothing twice.
        logging.getLogger(WORKER_LOGGER).addFilter(_FILTER)
