"""The native recorders (output/_ctext.c's StateLog and JobLog, the per-job calls of a plain
run) record exactly what the Python methods record.

The same random sequence of job starts, ends and kills (blocks of idle machines, compute
sharing, scattered and stepped allocations, unavailable machines, int dates, a listener set
mid-run) is played on recorders made with the native writer and on recorders made under
BATSIM_PY_PURE (the methods alone); every container they fill, and the files written from
them, must be equal, and so must the errors of bad calls.
"""

from __future__ import annotations

import random

import pytest

from batsim_py.output.paje import PajeTrace
from batsim_py.sim.machines import COMPUTING, IDLE, SLEEPING, MachineStates


def _pair(monkeypatch, make):  # noqa: ANN001, ANN202
    """`make()` with the native writer (its recorders native), then under BATSIM_PY_PURE."""
    monkeypatch.delenv("BATSIM_PY_PURE", raising=False)
    fast = make()
    monkeypatch.setenv("BATSIM_PY_PURE", "1")
    slow = make()
    monkeypatch.delenv("BATSIM_PY_PURE", raising=False)
    return fast, slow


def _play(seed: int, states: MachineStates, trace: PajeTrace, calls: list) -> None:
    """A random run on `nb` machines: (kind, job, alloc, date) appended to `calls` as made."""
    rng = random.Random(seed)
    nb = len(states.state)
    now: float = 0.0
    running: dict[str, object] = {}
    sharing = seed % 3 == 0  # (else jobs only on idle machines: the log is kept throughout)
    for step in range(400):
        if rng.random() < 0.6:
            now = now + rng.choice([1, 0.5, 2.0 ** -30, 1e5 / 3]) if step % 7 else int(now) + 1
        if rng.random() < 0.55:
            busy = {m for a in running.values() for m in a}  # type: ignore[attr-defined]
            free = [m for m in range(nb) if m not in busy and states.state[m] == IDLE]
            pool = list(range(nb)) if sharing else free
            if not pool:
                continue
            lo = rng.choice(pool)
            width = rng.randint(1, 12)
            shape = rng.random()
            if shape < 0.6:
                alloc: object = range(lo, min(nb, lo + width))
                if not sharing and any(m in busy for m in alloc):  # type: ignore[attr-defined]
                    alloc = range(lo, lo + 1)
            elif shape < 0.8:
                alloc = tuple(sorted(rng.sample(pool, min(len(pool), rng.randint(1, 4)))))
            else:
                alloc = range(lo, min(nb, lo + 2 * width), 2)
                if not sharing and any(m in busy for m in alloc):  # type: ignore[attr-defined]
                    alloc = [lo]
            job = f"w0!{step}"
            running[job] = alloc
            states.job_starts(alloc, now)  # type: ignore[arg-type]
            trace.job_starts(job, alloc, now)  # type: ignore[arg-type]
            calls.append(("start", job, alloc, now))
        elif running:
            job = rng.choice(sorted(running))
            alloc = running.pop(job)
            if rng.random() < 0.15:
                trace.job_killed(job, alloc, now)  # type: ignore[arg-type]
            states.job_ends(alloc, now)  # type: ignore[arg-type]
            unavailable = (set(list(alloc)[:1]) if sharing and rng.random() < 0.2  # type: ignore[call-overload]
                           else ())
            if rng.random() < 0.5:
                trace.job_ends(job, alloc, now, unavailable)  # type: ignore[arg-type]
            else:
                trace.job_ends(job, alloc, now, unavailable=unavailable)  # type: ignore[arg-type]
            calls.append(("end", job, alloc, now))
        if step == 300 and seed % 4 == 1:
            states.listener = lambda date: calls.append(("listener", date))
        if step == 350 and seed % 4 == 2:  # (a switch: the live books from here)
            busy = {m for a in running.values() for m in a}  # type: ignore[attr-defined]
            m = min(m for m in range(nb) if m not in busy and states.state[m] == IDLE)
            states.set(m, SLEEPING, now)
            states.set(m, IDLE, now)
            calls.append(("switch", m))


def _recorded(states: MachineStates, trace: PajeTrace) -> dict:
    return {
        "log kept": states._log is not None,
        "state": bytes(states.state), "counts": list(states.counts),
        "time_in": states.time_in(), "rows": "".join(states.text_chunks(50)),
        "times": trace.times.tobytes(), "kinds": trace.kinds.tobytes(),
        "jobs": trace.jobs.tobytes(), "ids": list(trace.job_ids), "allocs": list(trace.allocs),
        "ordinal": dict(trace._ordinal), "unavailable": dict(trace._unavailable),
        "trace": "".join(trace.chunks(1e6)),
    }


@pytest.mark.parametrize("seed", range(8))
def test_native_recorders_record_what_the_methods_record(native, monkeypatch,  # noqa: ANN001
                                                         seed: int) -> None:
    def run() -> tuple[dict, list, bool]:
        states, trace = MachineStates(40, 38), PajeTrace([f"h{m}" for m in range(40)])
        native_made = type(states.job_starts).__name__ == "StateLog"
        calls: list = []
        _play(seed, states, trace, calls)
        return _recorded(states, trace), calls, native_made

    (fast, fast_calls, was_native), (slow, slow_calls, was_pure) = _pair(monkeypatch, run)
    assert was_native and not was_pure
    assert fast_calls == slow_calls
    for key in slow:
        assert fast[key] == slow[key], key
    # (without compute sharing nor a switch, the log was kept: the native calls recorded)
    assert fast["log kept"] == (seed % 3 != 0 and seed % 4 != 2)


def test_a_cached_native_call_after_the_log_is_left(native) -> None:  # noqa: ANN001
    """A caller holding the native job_starts keeps recording right after the log is left
    (compute sharing), through the methods: the same books as the methods alone."""
    states = MachineStates(8, 8)
    start, end = states.job_starts, states.job_ends
    start(range(0, 4), 1.0)
    start(range(2, 6), 2.0)  # machines 2, 3 computing: compute sharing, the live books
    assert states._log is None and states.job_starts == states._job_starts
    start(range(6, 8), 3.0)  # (the native callable, switched off: the method)
    end(range(0, 4), 4.0)
    assert list(states.nb_jobs) == [0, 0, 1, 1, 1, 1, 1, 1]
    assert bytes(states.state) == bytes([IDLE, IDLE] + [COMPUTING] * 6)


def test_bad_calls_fail_as_the_methods_do(native, monkeypatch) -> None:  # noqa: ANN001
    def errors() -> list[str]:
        states, trace = MachineStates(4, 4), PajeTrace(["a", "b", "c", "d"])
        out = []
        for call in (lambda: states.job_starts(range(0, 2)),
                     lambda: states.job_starts(range(0, 2), "x"),
                     lambda: states.job_ends(range(0, 9), 1.0),
                     lambda: trace.job_ends("w0!none", range(0, 1), 1.0),
                     lambda: trace.job_starts("w0!1", range(0, 1), "x"),
                     lambda: trace.job_starts("w0!1", range(0, 1)),
                     lambda: trace.job_starts("w0!1", range(0, 1), 1.0, ())):
            try:
                call()
                out.append("ok")
            except Exception as exc:  # noqa: BLE001
                out.append(f"{type(exc).__name__}")
        out.append(repr((bytes(states.state), states._log, trace.times.tolist(),
                         trace.job_ids, trace.jobs.tolist())))
        return out

    fast, slow = _pair(monkeypatch, errors)
    assert fast == slow
    assert fast[:7] == ["TypeError", "TypeError", "IndexError", "KeyError", "TypeError",
                        "TypeError", "TypeError"]


def test_an_uninitialised_recorder_is_an_error(native) -> None:  # noqa: ANN001
    with pytest.raises(RuntimeError, match="not initialised"):
        native.StateLog.__new__(native.StateLog)(range(0, 1), 1.0)
    with pytest.raises(RuntimeError, match="not initialised"):
        native.JobLog.__new__(native.JobLog)("w0!1", range(0, 1), 1.0)
    with pytest.raises(ValueError, match="bytes"):
        native.StateLog(bytearray(2), 0, 256, print, [], False, print)
