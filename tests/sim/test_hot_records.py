"""The records made per job on the hot path (decision/hot.py, compiled by mypyc) behave as the
dataclasses they are, and the per-run shortcuts of the kernel
(submission order, the lean kernel's choice) give what the plain computation gives."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import random

import pytest

from batsim_py import native
from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.sim.submitter import submission_order
from batsim_py.workload.model import Job, Workload

JOB = Job("w0!1", "w0", "1", 0.0, 10.0, 2, "p")
HOT = [
    ev.JobSubmitted(1.5, JOB),
    ev.JobSubmitted(timestamp=1.5, job=JOB, profile=None),
    ev.JobCompleted(3.0, "w0!1", "COMPLETED_SUCCESSFULLY", 0, range(2, 4)),
    d.ExecuteJob(1.5, "w0!1", range(2, 4)),
    d.ExecuteJob(1.5, "w0!1", (2, 3), mapping=(0, 1)),
    d.ExecuteJob(1.5, "w0!1", (2, 3), None, None, d.AdditionalIOJob("io", (0,)),
                 (("p", (2,), None),)),
    d.RejectJob(2.0, "w0!2"),
    d.Reply(1.5),
    d.Reply(1.5, (d.RejectJob(1.5, "w0!2"), d.ExecuteJob(1.5, "w0!1", range(0, 2)))),
]


@pytest.mark.parametrize("record", HOT, ids=lambda r: type(r).__name__)
def test_hot_records_copy_pickle_replace_compare(record: object) -> None:
    for twin in (copy.copy(record), copy.deepcopy(record),
                 pickle.loads(pickle.dumps(record)), dataclasses.replace(record)):
        assert type(twin) is type(record)
        assert twin == record and hash(twin) == hash(record)
        assert dataclasses.astuple(twin) == dataclasses.astuple(record)
    field = dataclasses.fields(record)[0].name  # (timestamp, or now)
    moved = dataclasses.replace(record, **{field: 99.0})
    assert moved != record and getattr(moved, field) == 99.0


def test_hot_records_defaults_and_repr() -> None:
    assert d.Reply(2.0).decisions == ()
    job = d.ExecuteJob(1.0, "w0!1", (0,))
    assert (job.mapping, job.storage_mapping, job.additional_io_job,
            job.profile_overrides) == (None, None, None, None)
    assert repr(d.RejectJob(2.0, "w0!2")) == "RejectJob(timestamp=2.0, job_id='w0!2')"
    assert ev.JobSubmitted(1.0, JOB).job_id == "w0!1"
    # a sequence where a tuple is kept (compiled, a tuple field refuses a list): a tuple
    listed = d.Reply(1.0, [d.RejectJob(1.0, "w0!2")])
    assert listed == d.Reply(1.0, (d.RejectJob(1.0, "w0!2"),))
    assert type(listed.decisions) is tuple
    assert d.ExecuteJob(1.0, "w0!1", (0, 1), mapping=[1, 0]).mapping == (1, 0)


@pytest.mark.skipif("batsim_py.decision.hot" not in native.compiled_modules(),
                    reason="the kernel is not compiled here")
def test_hot_records_are_built_by_compiled_code() -> None:
    """The point of writing their `__init__` out: the one `dataclass` writes stays interpreted
    under mypyc (an interpreted call per record, six per job)."""
    for kind in (ev.JobSubmitted, ev.JobCompleted, d.ExecuteJob, d.RejectJob, d.Reply):
        assert not inspect.isfunction(kind.__init__), kind


def _workload(subtimes: list[float], names: list[str]) -> Workload:
    jobs = tuple(Job(f"w0!{n}", "w0", n, t, -1.0, 1, "p") for t, n in zip(subtimes, names,
                                                                          strict=True))
    return Workload("w0", "/w.json", 4, jobs, {})


@pytest.mark.parametrize("subtimes", [
    [0.0, 1.0, 2.5, 7.0],  # strictly increasing: kept as given
    [0.0, 1.0, 1.0, 2.0],  # a tie, ids in order as strings ("w0!10" < "w0!2"): kept
    [0.0, 0.0, 1.0, 2.0],  # a tie, ids out of order as strings ("w0!5" > "w0!10"): sorted
    [float("-inf"), float("-inf"), 1.0, 2.0],
    [5.0, 1.0, 3.0, 0.0],  # out of order
    [0.0, float("nan"), 1.0, 2.0],
])
def test_submission_order_is_the_sort_by_subtime_then_id(subtimes: list[float]) -> None:
    names = ["5", "10", "2", "1"]
    workload = _workload(subtimes, names)
    expected = sorted(workload.jobs, key=lambda j: (j.subtime, j.id))
    assert submission_order(workload) == expected


def test_submission_order_random() -> None:
    rng = random.Random(7)
    for _ in range(50):
        n = rng.randrange(1, 30)
        subtimes = sorted(float(rng.randrange(10)) for _ in range(n))
        if rng.random() < 0.3:
            rng.shuffle(subtimes)
        workload = _workload(subtimes, [str(rng.randrange(100)) for _ in range(n)])
        assert submission_order(workload) == sorted(workload.jobs,
                                                    key=lambda j: (j.subtime, j.id))
