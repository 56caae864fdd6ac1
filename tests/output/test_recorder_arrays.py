"""The native recorders (output/_ctext.c's StateLog and JobLog) store their numbers straight
into the room their `array.array`s have (`FAST_ARRAYS`, checked at import), calling the
arrays' `append` only to grow them: the arrays must hold what `append` would have put there,
across many growths, and refuse what `append` refuses."""

from __future__ import annotations

from array import array

import pytest

from batsim_py.output.fixed import native_text


@pytest.fixture
def native(monkeypatch):  # noqa: ANN201
    monkeypatch.delenv("BATSIM_PY_PURE", raising=False)
    module = native_text()
    if module is None:
        pytest.skip("the native writer (batsim_py/output/_ctext.c) is not built: "
                    "python setup.py build_ext --inplace")
    return module


def test_the_array_layout_checks_out_on_this_python(native) -> None:  # noqa: ANN001
    assert native.FAST_ARRAYS == 1


def test_state_log_dates_across_growths(native) -> None:  # noqa: ANN001
    n = 5000
    state = bytearray(n + 1)
    dates, log = array("d"), []
    start = native.StateLog(state, 0, 1, dates.append, log, False, print)
    end = native.StateLog(state, 1, 0, dates.append, log, True, print)
    expected = array("d")
    for m in range(n):
        t = m * 0.1 + 1e-7
        start(range(m, m + 1), t)
        expected.append(t)
        if m % 3 == 0:
            end(range(m, m + 1), t + 0.5)
            expected.append(-(t + 0.5))
    start(range(n, n + 1), 7)  # (an int date: the array's own append converts it)
    expected.append(7.0)
    assert dates == expected
    assert len(log) == len(expected)


def test_job_log_kinds_and_ordinals_across_growths(native) -> None:  # noqa: ANN001
    ordinal: dict[str, int] = {}
    ids: list[str] = []
    allocs: list = []
    times, kinds, jobs = array("d"), array("b"), array("q")
    starts = native.JobLog(False, ordinal, ids, allocs, times.append, kinds.append, jobs.append,
                           print)
    ends = native.JobLog(True, ordinal, ids, allocs, times.append, kinds.append, jobs.append,
                         print)
    want_t, want_k, want_j = array("d"), array("b"), array("q")
    for k in range(3000):
        starts(f"j{k}", range(k % 7, k % 7 + 1), k * 1.5)
        want_t.append(k * 1.5)
        want_k.append(0)
        want_j.append(k)
        if k % 2:
            ends(f"j{k - 1}", range(0, 1), k * 1.5 + 0.25)
            want_t.append(k * 1.5 + 0.25)
            want_k.append(1)
            want_j.append(k - 1)
    assert (times, kinds, jobs) == (want_t, want_k, want_j)
    assert ids == [f"j{k}" for k in range(3000)]


def test_an_exported_buffer_refuses_as_append_does(native) -> None:  # noqa: ANN001
    state = bytearray(4)
    dates, log = array("d", [1.0, 2.0, 3.0]), []
    dates.append(4.0)  # (room for more: a store would fit)
    start = native.StateLog(state, 0, 1, dates.append, log, False, print)
    view = memoryview(dates)
    with pytest.raises(BufferError):
        dates.append(5.0)
    with pytest.raises(BufferError):
        start(range(0, 1), 5.0)
    view.release()
    start(range(1, 2), 5.0)
    assert dates.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
