"""The campaign's own LocalCluster: its workers drop distributed's heartbeat-failure traceback
(an upstream shutdown race, dask/distributed#7105) and keep every other log line."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("distributed")

from batsim_py.campaign.execute import open_client  # noqa: E402
from batsim_py.campaign.quiet import HEARTBEAT_FAILURE, HeartbeatFailureFilter  # noqa: E402

OTHER = "batsim-py test: another worker error, to be kept"


def test_the_filter_drops_only_the_heartbeat_failure() -> None:
    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("distributed.worker", logging.ERROR, __file__, 1, msg, None,
                                 None)

    keep = HeartbeatFailureFilter()
    assert not keep.filter(record(HEARTBEAT_FAILURE))
    assert keep.filter(record(OTHER))
    assert keep.filter(record("Heartbeat to scheduler failed"))


def _log_both() -> None:
    log = logging.getLogger("distributed.worker")
    log.error(OTHER)
    try:
        raise OSError("Stream is closed")
    except OSError:
        log.exception(HEARTBEAT_FAILURE)


def test_the_local_cluster_workers_drop_it_and_keep_the_rest(
        capfd: pytest.CaptureFixture[str]) -> None:
    with open_client(workers=1) as client:
        client.run(_log_both)
    err = capfd.readouterr().err
    assert OTHER in err  # the worker's stderr reaches ours: the check below can fail
    assert HEARTBEAT_FAILURE not in err and "Stream is closed" not in err


def test_a_cluster_given_by_the_user_is_left_alone(capfd: pytest.CaptureFixture[str]) -> None:
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as theirs, open_client(theirs) as client:
        assert client is theirs
        client.run(_log_both)
    err = capfd.readouterr().err
    assert OTHER in err and HEARTBEAT_FAILURE in err
