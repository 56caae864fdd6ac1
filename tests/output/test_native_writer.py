"""The native writer (output/_ctext.c) writes exactly the pure-Python writers' bytes.

The pure writers (output/paje.py's `body_chunks`, output/jobs_csv.py's `_chunk_text`) are the
reference: every comparison here runs both on the same recorded run and compares bytes, on
random recordings built to reach every path (compute sharing, kills, unavailable machines,
non-contiguous allocations, odd ids and dates), on every reference case in both timings, and
on f_10k (slow). `%f` itself is checked against Python's on random and adversarial doubles.
"""

from __future__ import annotations

import io
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from batsim_py.output import jobs_csv
from batsim_py.output.fixed import native_text
from batsim_py.output.paje import PajeTrace

PROJECT = Path(__file__).resolve().parents[2]
REFERENCE = PROJECT / "tests" / "conformance" / "reference"


def _pure(monkeypatch) -> None:
    monkeypatch.setenv("BATSIM_PY_PURE", "1")
    assert native_text() is None


def _both(monkeypatch, make):  # noqa: ANN001, ANN202
    """`make()` with the native writer, then with the pure one."""
    monkeypatch.delenv("BATSIM_PY_PURE", raising=False)
    assert native_text() is not None
    fast = make()
    _pure(monkeypatch)
    slow = make()
    monkeypatch.delenv("BATSIM_PY_PURE", raising=False)
    return fast, slow


# ------------------------------------------------------------------ %f

def _adversarial(rng: np.random.Generator, n: int) -> np.ndarray:
    k = rng.integers(0, 10**12, n)
    ties = (k * 2 + 1) / 2e6  # about halfway between two printed values
    j = rng.integers(-2**40, 2**40, n)
    return np.concatenate([
        rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64),  # any bit pattern
        rng.uniform(-1e7, 1e7, n),
        ties, np.nextafter(ties, 0), np.nextafter(ties, np.inf), -ties,
        j / 2.0**21, j / 2.0**27,  # exact binary ties of the sixth decimal
        np.ldexp(rng.uniform(-1, 1, n), rng.integers(-1080, 1024, n)),  # every exponent
        np.ldexp(rng.uniform(-1, 1, n), rng.integers(50, 80, n)),  # around 2**64
        rng.integers(0, 10**9, n).astype(float),
        [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 5e-7, 4.9999999999999996e-07,
         -5e-7, 1.5e-6, 2.5e-6, -1e-9, 1.7976931348623157e308, -1.7976931348623157e308,
         math.nan, -math.nan, math.inf, -math.inf, 2.0**64, 2.0**64 - 2048, -(2.0**64),
         2.0**53, 2.0**53 + 2, 0.5, 1e15 + 0.3],
    ])


def _check_fixed6(native, xs: np.ndarray) -> None:  # noqa: ANN001
    with np.errstate(over="ignore"):
        xs = np.ascontiguousarray(xs, dtype=np.float64)
    got = native.fixed6_lines(xs)
    expected = "".join("%f\n" % x for x in xs.tolist()).encode()
    if got != expected:
        pairs = zip(xs.tolist(), got.split(b"\n"), expected.split(b"\n"), strict=False)
        bad = [(x, g, e) for x, g, e in pairs if g != e][:5]
        pytest.fail(f"native %f differs from Python's: {bad}")


def test_fixed6_is_pythons(native) -> None:  # noqa: ANN001
    _check_fixed6(native, _adversarial(np.random.default_rng(20), 20_000))
    assert native.fixed6(-0.0) == "-0.000000" and native.fixed6(float("-nan")) == "nan"


@pytest.mark.slow
def test_fixed6_is_pythons_on_millions(native) -> None:  # noqa: ANN001
    _check_fixed6(native, _adversarial(np.random.default_rng(2026), 600_000))


def _g6_values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Doubles for `%g`: any bit pattern, dates of every size, whole numbers and ties of the
    sixth significant digit (x5 on the seventh, halves), the switch to scientific at 10**6."""
    return np.concatenate([
        _adversarial(rng, n), rng.uniform(0, 1e7, n), rng.uniform(0, 1e13, n),
        rng.uniform(1, 100, n), rng.integers(1, 10**13, n).astype(float),
        rng.integers(1, 10**12, n).astype(float) * 10 + 5,
        (rng.integers(1, 10**6, n) * 2 + 1) / 2.0,
        (rng.integers(1, 10**9, n) * 2 + 1) / 2.0 ** rng.integers(1, 30, n),
        np.arange(999_990.0, 1_000_010.0, 0.25),
        [9.999995, 99999.95, 999999.5, 999998.5, 1e-5, 2.0**64 - 2048, 1e19, 9.9999995e18],
    ])


def test_g6_is_pythons(native) -> None:  # noqa: ANN001
    xs = np.ascontiguousarray(_g6_values(np.random.default_rng(21), 5_000))
    got = native.g6_lines(xs)
    expected = "".join("%g\n" % x for x in xs.tolist()).encode()
    if got != expected:
        pairs = zip(xs.tolist(), got.split(b"\n"), expected.split(b"\n"), strict=False)
        pytest.fail(f"native %g differs from Python's: {[p for p in pairs if p[1] != p[2]][:5]}")


@pytest.mark.slow
def test_g6_is_pythons_on_millions(native) -> None:  # noqa: ANN001
    xs = np.ascontiguousarray(_g6_values(np.random.default_rng(2027), 150_000))
    assert native.g6_lines(xs) == "".join("%g\n" % x for x in xs.tolist()).encode()


def test_machine_state_rows_are_the_pure_writers(native, monkeypatch) -> None:  # noqa: ANN001
    """machine_states.csv's rows (`%g` of each date, then its counts' text) by the native
    writer and by the pure one's `%`, on every kind of double (whole numbers around 10**6,
    -0.0, nan, inf, subnormals, any bit pattern)."""
    from batsim_py.sim import machines

    rng = np.random.default_rng(7)
    dates = np.concatenate([_g6_values(rng, 1000), -np.arange(0.0, 20.0)])
    texts = [",0,0,0,1,2\n", ",0,0,0,0,3\n", ",1,0,0,-1,3\n"]
    which = rng.integers(0, 3, len(dates))
    fast = machines._rows_text(dates, which, texts)
    _pure(monkeypatch)
    assert fast == machines._rows_text(dates, which, texts)
    with pytest.raises(IndexError):
        native.state_rows(dates[:2], np.array([0, 3]), texts)


# ------------------------------------------------------------------ the Pajé trace

def _random_trace(seed: int, n: int = 24, jobs: int = 300) -> PajeTrace:
    """A recording reaching every path of the event writer: contiguous and scattered
    allocations (ranges, tuples, lists, a reversed range), compute sharing, kills,
    unavailable machines at a job's end, ids needing UTF-8, dates of every kind."""
    rng = random.Random(seed)
    trace = PajeTrace([f"host{i}" for i in range(n)])
    running: list[tuple[str, object]] = []
    t = rng.choice([0.0, -0.0, 1e-7])

    def tick() -> float:
        nonlocal t
        t += rng.choice([0.0, 1.0, 0.5e-6, 1e-3 * rng.random(), 17.25, 1e9 * rng.random()])
        return t

    for i in range(jobs):
        if running and rng.random() < 0.45:
            job, alloc = running.pop(rng.randrange(len(running)))
            now = tick()
            if rng.random() < 0.2:
                trace.job_killed(job, alloc, now)  # type: ignore[arg-type]
            skip = (set(rng.sample(list(alloc), rng.randint(1, len(alloc))))  # type: ignore
                    if alloc and rng.random() < 0.15 else ())
            trace.job_ends(job, alloc, now, skip)  # type: ignore[arg-type]
            continue
        width = rng.randint(1, 6)
        a = rng.randrange(n - width + 1)
        shape = rng.random()
        if shape < 0.5:
            alloc: object = range(a, a + width)
        elif shape < 0.6:
            alloc = range(a + width - 1, a - 1, -1) if a else range(width - 1, -1, -1)
        elif shape < 0.8:
            alloc = tuple(sorted(rng.sample(range(n), width)))
        else:
            alloc = [int(x) for x in rng.sample(range(n), width)]
        job = rng.choice([f"w0!{i}", f"wé!{i}", f'w"{i}', f"w 0!{i}", f"日{i}"])
        trace.job_starts(job, alloc, tick())  # type: ignore[arg-type]
        running.append((job, alloc))
    for job, alloc in running:
        trace.job_ends(job, alloc, tick())  # type: ignore[arg-type]
    return trace


@pytest.mark.parametrize("seed", range(12))
def test_trace_events_are_the_pure_writers(native, monkeypatch, seed: int) -> None:  # noqa: ANN001
    trace = _random_trace(seed)
    pure = "".join(trace.body_chunks(size=37)).encode()
    assert b"".join(trace.body_bytes(limit=1)) == pure  # a chunk per record
    assert b"".join(trace.body_bytes(limit=700)) == pure
    assert b"".join(trace.body_bytes()) == pure
    _pure(monkeypatch)
    assert b"".join(trace.body_bytes()) == pure


@pytest.mark.parametrize("seed", range(6))
def test_trace_written_to_its_file_is_the_pure_writers(native, monkeypatch, tmp_path: Path,
                                                      seed: int) -> None:  # noqa: ANN001
    """`write_body`: the native writer's lines written straight to the file's descriptor (by
    steps of any size), then the trailer through the buffered file, as the pure writer's."""
    trace = _random_trace(seed)
    pure = "".join(trace.body_chunks(size=37)).encode()  # (head included)
    for step in (1, 700, 8 << 20):
        path = tmp_path / f"t{step}"
        with open(path, "wb") as out:
            out.write(b"")  # (a buffered file, as files.py's)
            end = trace.write_body(out, step)
            assert end == len(pure) == out.tell()
            out.write(b"END")
        assert path.read_bytes() == pure + b"END"
    buffer = io.BytesIO()  # no descriptor: the chunks are written
    assert trace.write_body(buffer) == len(pure) and buffer.getvalue() == pure
    _pure(monkeypatch)
    with open(tmp_path / "p", "wb") as out:
        assert trace.write_body(out) == len(pure)
    assert (tmp_path / "p").read_bytes() == pure


def test_trace_of_wide_allocations_and_many_machines(native, tmp_path: Path) -> None:  # noqa: ANN001
    """Machine numbers of every length, from the table of numbers and beyond it (more
    machines than the table holds: digits computed), blocks of a thousand machines."""
    for n in (1500, (1 << 20) + 3):
        trace = PajeTrace([f"h{i}" for i in range(n)])
        top = n - 1200
        trace.job_starts("a", range(0, 1000), 0.0)
        trace.job_starts("b", range(top, n), 1.5)
        trace.job_starts("c", [n - 1, 999, 7], 2.0)  # machine n - 1 runs b: shared
        trace.job_ends("a", range(0, 1000), 3.0)
        trace.job_ends("b", range(top, n), 4.0)
        trace.job_ends("c", [n - 1, 999, 7], 5.0)
        pure = "".join(trace.body_chunks()).encode()
        with open(tmp_path / "t", "wb") as out:
            assert trace.write_body(out, 4096) == len(pure)
        assert (tmp_path / "t").read_bytes() == pure
        assert b"".join(trace.body_bytes()) == pure


def test_a_failed_write_raises(native, tmp_path: Path) -> None:  # noqa: ANN001
    """A write the kernel refuses (a full disk) is an OSError with its errno, as any write."""
    trace = _random_trace(1)
    if os.path.exists("/dev/full"):
        with pytest.raises(OSError) as caught, open("/dev/full", "wb", buffering=0) as out:
            trace.write_body(out)
        assert caught.value.errno == 28
    with open(tmp_path / "r", "wb") as out:
        read_only = os.open(tmp_path / "r", os.O_RDONLY)
        events = native.TraceEvents(len(trace.machine_names), trace.job_ids, trace.allocs,
                                    ["c"], trace._unavailable, trace.times, trace.kinds,
                                    trace.jobs)
        try:
            with pytest.raises(OSError):
                events.write(read_only, 0, 100)
        finally:
            os.close(read_only)
        assert events.write(out.fileno(), 0, 100)[0] > 0  # (usable after the error)


def test_trace_reaches_sharing_and_kills(native) -> None:  # noqa: ANN001
    """The random recordings do take the rare paths (else the test above proves little)."""
    text = "".join(PajeTrace.body_chunks(_random_trace(3)))
    assert " km m" in text and "é" in text and "日" in text
    trace = _random_trace(3)
    assert trace._unavailable  # machines skipped at a job's end
    events = native.TraceEvents(len(trace.machine_names), trace.job_ids, trace.allocs,
                                ["c"], trace._unavailable, trace.times, trace.kinds, trace.jobs)
    out, r = events.chunk(0, 10**9)
    assert r == len(trace.times) and out.count(b"\n") > len(trace.times)


def test_bad_recording_is_an_error_not_a_crash(native) -> None:  # noqa: ANN001
    trace = PajeTrace(["a", "b"])
    trace.job_starts("j", (0, 5), 1.0)  # machine 5 does not exist
    events = native.TraceEvents(2, trace.job_ids, trace.allocs, ["c"], {}, trace.times,
                                trace.kinds, trace.jobs)
    with pytest.raises(IndexError, match="machine id 5"):
        events.chunk(0, 100)


# ------------------------------------------------------------------ jobs.csv

def _records(n: int, seed: int, rejected: bool = True) -> list[jobs_csv.JobRecord]:
    """Random records; without `rejected`, no job is rejected and only the jobs 300 to 309
    have a name to quote (the native writer reads such records itself, but for their chunk)."""
    from batsim_py.workload.model import Job

    rng = random.Random(seed)
    out = []
    for i in range(n):
        workload = "w0" if rejected else rng.choice(["w0", "wé", "日"])
        res = rng.choice([1, 4, 64, 2**70])  # (a huge count takes Python's %d)
        if rejected:
            ident, name = rng.choice([f"w0!{i}", f"wé!{i}", f'w,"{i}']), str(i)
        else:  # (the name is a column of jobs.csv, the id is not)
            name = f'n,"{i}' if 300 <= i < 310 else rng.choice([str(i), f"é{i}", f"日 {i}"])
            # (an id `workload!name` keeps no name, which the native writer cuts from the id;
            # another id keeps it)
            ident = rng.choice([f"{workload}!{name}", f"{workload}!{name}", f"{workload}!x{i}"])
        job = Job(ident, workload, name,
                  rng.choice([0.0, -0.0, rng.random() * 1e5, float(rng.randint(0, 10**6))]),
                  res, rng.choice([-1.0, 1e-7, rng.random() * 1e4, 3600]), "p", {})
        start = rng.choice([0.0, rng.random() * 1e5, float(rng.randint(0, 10**6))])
        end = start + rng.choice([0.0, 1e-9, rng.random() * 1e4])
        lo = rng.randint(0, 100)
        alloc = rng.choice([range(lo, lo + 3), range(lo, lo + 1), range(lo, lo + 9, 2),
                            (lo, lo + 2), [lo]])
        state = rng.choice(("COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED", "COMPLETED_FAILED",
                            "COMPLETED_WALLTIME_REACHED", "REJECTED" if i % 50 == 7 and rejected
                            else "COMPLETED_SUCCESSFULLY"))
        joules = jobs_csv.LD(rng.random() * 1e6) if seed % 2 and rng.random() < 0.9 else None
        out.append(jobs_csv.JobRecord(job, state, start, end, alloc, joules,
                                      rng.choice(["", "meta", 'a ""b""'])))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_jobs_rows_are_the_pure_writers(native, monkeypatch, seed: int) -> None:  # noqa: ANN001
    """Seeds 0-3: chunks with and without rejected jobs; 4-7: none rejected (the records read
    by the native writer, a chunk with names to quote by the other paths)."""
    monkeypatch.setattr(jobs_csv, "CHUNK", 61)
    records = _records(700, seed, rejected=seed < 4)
    read = []
    rows_of = native.jobs_rows_of

    def counting(chunk, *args):  # noqa: ANN001, ANN002, ANN202
        rows = rows_of(chunk, *args)
        read.append(rows is not None)
        return rows

    monkeypatch.setattr(native, "jobs_rows_of", counting)

    def text() -> str:
        out = io.StringIO()
        jobs_csv.write_rows(records, out)
        return out.getvalue()

    def file_bytes() -> bytes:
        raw = io.BytesIO()
        with io.TextIOWrapper(raw, encoding="utf-8", newline="", write_through=False) as f:
            jobs_csv.write_rows(records, f)
            f.flush()
            return raw.getvalue()

    fast, slow = _both(monkeypatch, text)
    assert fast == slow
    fast_bytes, slow_bytes = _both(monkeypatch, file_bytes)
    assert fast_bytes == slow_bytes == slow.encode()
    if seed >= 4:  # (every chunk read by the native writer but the two with quotes; twice)
        assert read == 2 * [k not in (300 // 61, 309 // 61) for k in range(-(-700 // 61))]


def _ld_bits(a: np.ndarray) -> bytes:
    """The value bytes of a long double array (x86-64: 10 of each 16, the rest is padding)."""
    width = min(np.finfo(jobs_csv.LD).nmant // 8 + 3, a.itemsize)
    return a.view(np.uint8).reshape(-1, a.itemsize)[:, :width].tobytes()


@pytest.mark.parametrize("seed", (0, 5))
def test_job_times_are_the_pure_ones(native, monkeypatch, seed: int) -> None:  # noqa: ANN001
    """The long double metrics from the dates the native writer reads (`record_doubles`) are
    the pure path's, bit for bit (rejected jobs left out, ints taken as floats)."""
    records = _records(300, seed, rejected=seed < 4)
    records[3].starting_time = 7  # (an int date, as a user's run may give)
    fast, slow = _both(monkeypatch, lambda: jobs_csv.compute_times(records))
    for a, b in zip((*fast[1:], fast[0].waiting, fast[0].completion, fast[0].turnaround,
                     fast[0].slowdown),
                    (*slow[1:], slow[0].waiting, slow[0].completion, slow[0].turnaround,
                     slow[0].slowdown), strict=True):
        assert a.dtype == b.dtype == jobs_csv.LD and _ld_bits(a) == _ld_bits(b)
    assert fast[0].final_states == slow[0].final_states
    rejected = [r.final_state for r in records].count("REJECTED")
    assert fast[0].nb_rejected == slow[0].nb_rejected == rejected and (rejected > 0) == (seed < 4)
    with pytest.raises(ValueError, match="n float64"):
        native.record_doubles(records, *np.zeros((3, 2)))


def test_jobs_rows_read_the_name_slot(native) -> None:  # noqa: ANN001
    """The native writer reads a job's name slot itself (no `name` property call per row):
    the slot is found, and a name cut from the id is the property's, byte for byte."""
    from batsim_py import intervalset
    from batsim_py.workload.model import Job

    slot = jobs_csv._name_slot()
    assert slot is not None  # (workload/model.py's Job keeps no name given by its id)
    jobs = [Job("日!é,1", "日", "é,1", 0.0, -1.0, 1, "p"), Job("w!2", "w", "2", 0.0, -1.0, 1, "p"),
            Job("w!3", "w", "other", 0.0, -1.0, 1, "p")]
    assert [slot.__get__(j) for j in jobs] == [None, None, "other"]
    records = [jobs_csv.JobRecord(j, "COMPLETED_SUCCESSFULLY", 0.0, 1.0, range(1), None, "")
               for j in jobs]
    doubles = tuple(np.zeros(k) for k in (1, 1, 1, 1, 1))
    rows = [native.jobs_rows_of(records[k:k + 1], doubles, intervalset.format, jobs_csv.ld_text,
                                 s) for k in range(3) for s in (slot, None)]
    assert rows[0] is None and rows[1] is None  # (a name to quote: the Python paths)
    assert rows[2] == rows[3] and rows[2].startswith(b"2,w,p,")
    assert rows[4] == rows[5] and rows[4].startswith(b"other,w,p,")
    with pytest.raises(TypeError, match="name_slot"):
        native.jobs_rows_of(records, doubles, intervalset.format, jobs_csv.ld_text, "name")


# ------------------------------------------------------------------ whole runs

def _run_outputs(folder: Path, out: Path, timing: str) -> dict[str, bytes]:
    """Run a reference case (its transcript in batsim timing, its equivalent in-process
    scheduler in ideal timing) and return its output files."""
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.decision.transcript import ReplayPeer
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options

    spec = json.loads((folder / "case.json").read_text())
    args = spec["batsim_args"]
    flags = {"--forward-profiles-on-submission": "forward_profiles_on_submission",
             "--enable-dynamic-jobs": "dynamic_jobs",
             "--acknowledge-dynamic-jobs": "acknowledge_dynamic_jobs", "--energy": "energy"}
    options = {flags[a]: True for a in args if a in flags}
    if timing == "ideal":
        if options.get("dynamic_jobs"):
            pytest.skip("dynamic jobs need the case's own scheduler")
        options = {k: v for k, v in options.items() if k == "energy"}
        decision = InProcess(get_scheduler("fcfs" if "fcfs" in spec["scheduler"]["name"].lower()
                                           else "easy"))
        events = []  # (the in-process schedulers do not handle unavailable machines)
    else:
        decision = ReplayPeer(str(folder / "transcript.jsonl"), strict=True)
        events = [str(folder / e) for e in spec.get("events", [])]
    out.mkdir(parents=True, exist_ok=True)
    run_simulation(
        RunSpec(platform=str(folder / spec["platform"]),
                workloads=[str(folder / w) for w in spec["workloads"]],
                options=Options(export_prefix=str(out / "out"), timing=timing, **options),
                events=events, mmax_workload="--mmax-workload" in args),
        decision)
    return _files(out)


def _files(out: Path) -> dict[str, bytes]:
    """The output files' bytes (schedule.csv without its two wall-clock columns)."""
    files = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    header, row = files["out_schedule.csv"].decode().splitlines()
    keep = [i for i, name in enumerate(header.split(","))
            if name not in ("scheduling_time", "simulation_time")]
    assert len(keep) == len(header.split(",")) - 2
    files["out_schedule.csv"] = ",".join(row.split(",")[i] for i in keep).encode()
    return files


CASES = sorted(p.parent.name for p in REFERENCE.glob("*/transcript.jsonl")
               if not p.parent.name.startswith("f_"))


@pytest.mark.parametrize("timing", ["batsim", "ideal"])
@pytest.mark.parametrize("case", CASES)
def test_reference_case_outputs_identical(native, monkeypatch, tmp_path: Path,  # noqa: ANN001
                                          case: str, timing: str) -> None:
    fast, slow = _both(monkeypatch, lambda: _run_outputs(
        REFERENCE / case, tmp_path / ("pure" if os.environ.get("BATSIM_PY_PURE") else "native"),
        timing))
    assert list(fast) == list(slow) and "out_schedule.trace" in fast
    for name in fast:
        assert fast[name] == slow[name], f"{case} ({timing}): {name} differs"


@pytest.mark.slow
@pytest.mark.parametrize("timing", ["batsim", "ideal"])
def test_f_10k_outputs_identical(native, monkeypatch, tmp_path: Path,  # noqa: ANN001
                                 timing: str) -> None:
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options

    folder = REFERENCE / "f_10k_easy_cluster128_quiet"
    spec = json.loads((folder / "case.json").read_text())

    def run() -> dict[str, bytes]:
        out = tmp_path / ("pure" if os.environ.get("BATSIM_PY_PURE") else "native")
        out.mkdir()
        run_simulation(RunSpec(platform=str(folder / spec["platform"]),
                               workloads=[str(folder / w) for w in spec["workloads"]],
                               options=Options(export_prefix=str(out / "out"), timing=timing),
                               mmax_workload=True),
                       InProcess(get_scheduler("easy")))
        return _files(out)

    fast, slow = _both(monkeypatch, run)
    assert list(fast) == list(slow)
    for name in fast:
        assert fast[name] == slow[name], f"f_10k ({timing}): {name} differs"


# ------------------------------------------------------------------ choosing the writer

def test_pure_environment_selects_the_pure_writer(monkeypatch) -> None:
    from batsim_py.output.fixed import writer_label

    _pure(monkeypatch)
    assert writer_label() == "output writer: pure Python (BATSIM_PY_PURE is set)"


def test_version_names_the_writer(native) -> None:  # noqa: ANN001
    env = {k: v for k, v in os.environ.items() if k != "BATSIM_PY_PURE"}
    out = subprocess.run([sys.executable, "-m", "batsim_py.cli", "--version"], cwd=PROJECT,
                         env=env, check=True, capture_output=True, text=True).stdout
    assert "; output writer: native (C))" in out
    out = subprocess.run([sys.executable, "-m", "batsim_py.cli", "--version"], cwd=PROJECT,
                         env={**env, "BATSIM_PY_PURE": "1"}, check=True, capture_output=True,
                         text=True).stdout
    assert "output writer: pure Python (BATSIM_PY_PURE is set)" in out


def test_a_failed_writer_build_installs_the_pure_writer(tmp_path: Path, monkeypatch) -> None:
    """No working C compiler: the build still succeeds, leaves why in the package, and the
    writer label reports it (the kernel's own build is kept out by a stand-in mypyc without
    its build module, as when mypyc is missing)."""
    import shutil

    from batsim_py.output import fixed

    tree = tmp_path / "tree"  # (a copy: the build leaves files beside setup.py)
    tree.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(PROJECT / name, tree / name)
    for name in ("platforms", "workloads"):
        (tree / name).mkdir()
    shutil.copytree(PROJECT / "batsim_py", tree / "batsim_py",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "_kernel_*",
                                                  "_writer_*"))
    fake = tmp_path / "fake"
    (fake / "mypyc").mkdir(parents=True)
    (fake / "mypyc" / "__init__.py").write_text("")
    built = tmp_path / "built"
    env = {k: v for k, v in os.environ.items() if k != "BATSIM_PY_PURE"}
    env.update(CC="false", PYTHONPATH=str(fake))
    done = subprocess.run([sys.executable, "setup.py", "build_py", "--build-lib", str(built),
                           "build_ext", "--build-lib", str(built)],
                          cwd=tree, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "the native output writer was not built at install" in done.stderr
    assert not list(built.rglob("_ctext*.so"))
    note = (built / "batsim_py" / "output" / fixed.WRITER_NOT_BUILT).read_text()
    assert note.startswith("not built at install: compiling output/_ctext.c failed")
    monkeypatch.setattr(fixed, "__file__", str(built / "batsim_py" / "output" / "fixed.py"))
    monkeypatch.setattr(fixed, "native_text", lambda: None)
    monkeypatch.delenv("BATSIM_PY_PURE", raising=False)
    assert fixed.writer_label().startswith(
        "output writer: pure Python (not built at install: compiling output/_ctext.c failed")


def test_jobs_rows_read_slots_and_what_replaces_them(native) -> None:  # noqa: ANN001
    """The native writer reads the records' slots at their offsets (cached per type): records
    of another shape give the same rows through getattr, and a type changed after a write (a
    property put over a slot) is read anew."""
    import types

    from batsim_py import intervalset

    records = _records(40, 4, rejected=False)
    doubles = tuple(np.arange(40, dtype=np.float64) + k for k in range(5))

    def rows(recs: list) -> bytes:
        return native.jobs_rows_of(recs, doubles, intervalset.format, jobs_csv.ld_text,
                                   jobs_csv._name_slot())

    expected = rows(records)
    fields = ("job", "final_state", "starting_time", "end_time", "alloc", "consumed_energy",
              "metadata")
    ducks = [types.SimpleNamespace(**{f: getattr(r, f) for f in fields}) for r in records]
    assert rows(ducks) == expected

    class Later(jobs_csv.JobRecord):
        __slots__ = ()

    later = [Later(*(getattr(r, f) for f in fields)) for r in records]
    assert rows(later) == expected
    Later.metadata = property(lambda self: "changed")  # type: ignore[assignment]
    assert rows(later) == expected.replace(b',""\n', b',"changed"\n').replace(
        b',"meta"\n', b',"changed"\n').replace(b',"a ""b"""\n', b',"changed"\n')
    del Later.metadata
    assert rows(later) == expected
