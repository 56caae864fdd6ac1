"""The native JobRecord (output/_ctext.c) behaves as the reference dataclass
(jobs_csv.PURE_JOB_RECORD) wherever code can tell them apart, and is not tracked by the
cyclic garbage collector (why it exists: a run keeps one per job)."""

from __future__ import annotations

import copy
import gc
import pickle

import pytest

from batsim_py.output import jobs_csv
from batsim_py.output.fixed import native_text
from batsim_py.workload.model import Job

native = native_text()
pytestmark = pytest.mark.skipif(native is None, reason="native writer not built")
PURE = jobs_csv.PURE_JOB_RECORD


def _fields(job: Job, state: str = "COMPLETED_SUCCESSFULLY") -> tuple:
    return (job, state, 1.5, 2.25, range(3, 5), None, 'a "b"')


def _job() -> Job:
    return Job("w0!7", "w0", "7", 0.0, 10.0, 2, "p")


def test_the_run_uses_the_native_record() -> None:
    assert jobs_csv.JobRecord is native.JobRecord
    assert jobs_csv.JobRecord.__module__ == PURE.__module__
    assert jobs_csv.JobRecord.__qualname__ == PURE.__qualname__


@pytest.mark.parametrize("kind", ["positional", "keywords", "mixed"])
def test_same_construction_attributes_repr_and_equality(kind: str) -> None:
    job = _job()
    values = _fields(job)
    names = PURE.__match_args__
    made = []
    for cls in (native.JobRecord, PURE):
        if kind == "positional":
            made.append(cls(*values))
        elif kind == "keywords":
            made.append(cls(**dict(zip(names, values, strict=True))))
        else:
            made.append(cls(*values[:2], **dict(zip(names[2:], values[2:], strict=True))))
    c, p = made
    assert [getattr(c, n) for n in names] == [getattr(p, n) for n in names]
    assert repr(c) == repr(p)
    assert native.JobRecord.__match_args__ == PURE.__match_args__
    other = native.JobRecord(*_fields(job, "COMPLETED_KILLED"))
    assert c == native.JobRecord(*values) and not c != native.JobRecord(*values)
    assert c != other and not c == other
    assert (c == p) is False  # (another class: the dataclass's __eq__ says NotImplemented)
    c.final_state = "COMPLETED_KILLED"
    assert c == other
    with pytest.raises(TypeError):
        hash(c)
    with pytest.raises(TypeError):
        hash(p)


def test_wrong_calls_fail_as_the_dataclass() -> None:
    for cls in (native.JobRecord, PURE):
        with pytest.raises(TypeError):
            cls(_job())
        with pytest.raises(TypeError):
            cls(*_fields(_job()), "extra")
        with pytest.raises(TypeError):
            cls(*_fields(_job()), metadata="twice")
        with pytest.raises(TypeError):
            cls(*_fields(_job())[:6], unknown="x")
        with pytest.raises(AttributeError):
            cls(*_fields(_job())).other = 1  # (slots: no other attribute)


def test_copy_pickle_subclass_and_deletion() -> None:
    record = native.JobRecord(*_fields(_job()))
    assert copy.copy(record) == record and copy.copy(record) is not record
    assert copy.deepcopy(record) == record
    again = pickle.loads(pickle.dumps(record))
    assert type(again) is native.JobRecord and again == record

    class Later(native.JobRecord):
        __slots__ = ()

    later = Later(*_fields(_job()))
    assert repr(later).startswith(
        "test_copy_pickle_subclass_and_deletion.<locals>.Later(job=Job(")
    assert later == Later(*_fields(_job())) and later != record
    for cls in (native.JobRecord, PURE):
        record = cls(*_fields(_job()))
        del record.metadata
        with pytest.raises(AttributeError):
            record.metadata  # noqa: B018
        with pytest.raises(AttributeError):
            record == cls(*_fields(_job()))  # noqa: B015 (== reads every field)


def test_records_are_not_tracked_by_the_collector() -> None:
    job = _job()
    assert not gc.is_tracked(native.JobRecord(*_fields(job)))
    assert gc.is_tracked(PURE(*_fields(job)))  # (what the C type saves)
    # and so a run's records add nothing to the young generation's count
    gc.collect()
    before = gc.get_count()[0]
    records = [native.JobRecord(*_fields(job)) for _ in range(1000)]
    assert gc.get_count()[0] - before < 50
    assert len(records) == 1000
