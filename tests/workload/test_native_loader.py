"""The native loader (workload/_cload.c) and orjson read exactly what the pure-Python reader
reads, or hand the input back to it.

The pure reader is the reference: each test loads the same input both ways and compares the
results field by field, with their exact types (an int subtime must come back as an int in the
job's description, a float as a float), and the same error message where the input is wrong.
Inputs: every workload shipped or in the reference corpus, hand-made edge cases, and random
workloads and JSON numbers (hypothesis).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_py.errors import WorkloadError
from batsim_py.rapidjson_number import rapidjson_double
from batsim_py.workload import fast
from batsim_py.workload import jobs as jobs_module
from batsim_py.workload.jobs import parse_jobs
from batsim_py.workload.reader import load_workload, parse_workload

PROJECT = Path(__file__).resolve().parents[2]

try:
    from batsim_py.workload import _cload  # type: ignore[attr-defined]
except ImportError:
    _cload = None
try:
    import orjson
except ImportError:
    orjson = None

needs_native = pytest.mark.skipif(
    _cload is None, reason="the native loader (batsim_py/workload/_cload.c) is not built: "
    "python setup.py build_ext --inplace")
needs_orjson = pytest.mark.skipif(orjson is None, reason="orjson is not installed")


def _use(monkeypatch: pytest.MonkeyPatch, native: bool, with_orjson: bool = True) -> None:
    monkeypatch.setattr(fast, "NATIVE", _cload if native else None)
    monkeypatch.setattr(fast, "ORJSON", orjson if native and with_orjson else None)


def _typed(value: Any) -> Any:
    """`value` with the type of every number, string and container spelt out."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


def _job_fields(job: Any) -> Any:
    return _typed((job.id, job.workload, job.name, job.subtime, job.walltime, job.res,
                   job.profile, dict(job.description)))


def _workload_fields(w: Any) -> Any:
    profiles = [(name, type(p).__name__, _typed(p.name), _typed(p.ret),
                 _typed(dict(p.description)),
                 [_typed(getattr(p, f)) for f in p.__slots__ if f not in ("description",)])
                for name, p in w.profiles.items()]
    return (w.name, w.path, _typed(w.nb_res), [_job_fields(j) for j in w.jobs], profiles)


def _outcome(fn: Any) -> Any:
    try:
        return ("ok", fn())
    except WorkloadError as e:
        return ("error", str(e))


def _both(monkeypatch: pytest.MonkeyPatch, fn: Any, fields: Any) -> tuple[Any, Any]:
    """`fn()` by the native loader (and orjson) and by the pure reader, as comparable values."""
    results = []
    for native in (True, False):
        _use(monkeypatch, native)
        kind, value = _outcome(fn)
        results.append((kind, fields(value) if kind == "ok" else value))
    return results[0], results[1]


def _workload_files() -> list[Path]:
    files = sorted((PROJECT / "workloads").rglob("*.json"))
    files += sorted((PROJECT / "tests" / "conformance" / "reference").rglob("*.json"))
    return [f for f in files if f.name != "case.json" and f.stat().st_size < 2_000_000]


# ------------------------------------------------------------------ whole workloads


@needs_native
def test_every_shipped_and_reference_workload_loads_the_same(monkeypatch):
    files = _workload_files()
    assert len(files) >= 20
    for path in files:
        native, pure = _both(monkeypatch, lambda p=path: load_workload(str(p), "w0"),
                             _workload_fields)
        assert native == pure, path


@needs_native
@pytest.mark.parametrize("extra, used", [(False, "scan_jobs"), (True, "uniform_jobs")])
def test_the_native_paths_are_taken(monkeypatch, write, extra, used):
    """A plain workload's jobs are read from the text; with extra keys, from the decoded
    objects (else the comparisons here would compare the pure reader with itself)."""
    if used == "scan_jobs" and orjson is None:
        pytest.skip("reading the jobs from the text needs orjson (the rest of it is decoded)")
    jobs = [{"id": i, "subtime": i * 10, "walltime": 100, "res": 1 + i % 3, "profile": "p"}
            | ({"x": [i]} if extra else {}) for i in range(50)]
    path = write({"nb_res": 4, "jobs": jobs, "profiles": {"p": {"type": "delay", "delay": 5}}})
    _use(monkeypatch, True)
    calls = []
    real = _cload

    class Spy:
        API = real.API

        def __getattr__(self, name: str) -> Any:
            function = getattr(real, name)

            def spy(*args: Any) -> Any:
                result = function(*args)
                calls.append((name, result is not None))
                return result

            return spy

    monkeypatch.setattr(fast, "NATIVE", Spy())
    load_workload(path, "w0")
    assert (used, True) in calls and ("delay_profiles", True) in calls


# ------------------------------------------------------------------ jobs

BASE = {"id": 1, "subtime": 0, "walltime": 100, "res": 2, "profile": "p"}


def _jobs_case(jobs: list[Any], workload: str = "w0") -> Any:
    return lambda: parse_jobs(jobs, workload=workload, source="wl.json")


EDGE_CASES: list[Any] = [
    [dict(BASE, id=i, subtime=i) for i in range(5)],
    [dict(BASE, id=f"job{i}", subtime=i + 0.5, walltime=-1) for i in range(5)],
    [{"id": i, "subtime": 1.5, "res": 3, "profile": "p"} for i in range(3)],  # no walltime
    [dict(BASE, id=i, res=10**30) for i in range(3)],  # huge sizes
    [dict(BASE, id=i, res=300 + i % 2) for i in range(6)],  # shared sizes > 256
    [dict(BASE, id=i, extra=[1, {"a": 2.5}], more="x") for i in range(3)],  # extra values
    [{"profile": "p", "res": 1, "id": i, "subtime": 2, "walltime": 7.0} for i in range(3)],
    [dict(BASE, id=i, subtime=2**53) for i in range(2)],  # exact limit
    [dict(BASE, id=i, subtime=2**53 + 1) for i in range(2)],  # beyond: job by job
    [dict(BASE, id=i, subtime=-(2**60)) for i in range(2)],
    [dict(BASE, id=1), dict(BASE, id="2")],  # mixed id kinds
    [dict(BASE, id=1), dict(BASE, id=1)],  # duplicated (found by the reader)
    [dict(BASE, id="w0!3")],  # with its workload part
    [dict(BASE, id="x!3")],
    [dict(BASE, id="")],
    [dict(BASE, id="aw0b")],
    [dict(BASE, id=True)],
    [dict(BASE, id=1.0)],
    [dict(BASE, id=1, subtime=True)],
    [dict(BASE, id=1, subtime=float("nan"))],
    [dict(BASE, id=1, subtime=float("inf"))],
    [dict(BASE, id=1, subtime="3")],
    [dict(BASE, id=1), dict(BASE, id=2, subtime=1.0)],  # int and float subtimes
    [dict(BASE, id=1, walltime=0)],
    [dict(BASE, id=1, walltime=-1.0)],
    [dict(BASE, id=1, walltime=-2)],
    [dict(BASE, id=1, walltime=False)],
    [dict(BASE, id=1, res=-1)],
    [dict(BASE, id=1, res=-(10**30))],
    [dict(BASE, id=1, res=2.0)],
    [dict(BASE, id=1, res=None)],
    [dict(BASE, id=1, profile=3)],
    [dict(BASE, id=1), {"id": 2, "subtime": 0, "res": 2, "profile": "p", "walltime": 100}],
    [dict(BASE, id=1), dict(BASE, id=2, extra=1)],  # other keys
    [dict(BASE, id=1), [1]],
    [dict(BASE, id=1, smpi_ranks_to_hosts_mapping=[0, 1])],
    [{"id": 1, "res": 1, "profile": "p"}],  # no subtime
    [dict(BASE, id=1), {"id": 2}],
    [],
]


@needs_native
@pytest.mark.parametrize("jobs", EDGE_CASES, ids=range(len(EDGE_CASES)))
def test_jobs_edge_cases_read_the_same(monkeypatch, jobs):
    native, pure = _both(monkeypatch, _jobs_case(jobs),
                         lambda js: [_job_fields(j) for j in js])
    assert native == pure


@needs_native
@pytest.mark.parametrize("workload", ["", "1", "w\0", "w0"])
def test_workload_names_read_the_same(monkeypatch, workload):
    jobs = [dict(BASE, id=i) for i in (1, 12, 21)]
    native, pure = _both(monkeypatch, _jobs_case(jobs, workload),
                         lambda js: [_job_fields(j) for j in js])
    assert native == pure


@needs_native
def test_a_large_workload_is_read_in_blocks_the_same(monkeypatch):
    """Blocks of jobs (jobs.py's _BLOCK, 65,536 jobs, here 16): uniform ones, one not."""
    monkeypatch.setattr(jobs_module, "_BLOCK", 16)
    jobs = [dict(BASE, id=i, subtime=i) for i in range(70)]
    jobs[40]["subtime"] = 1.5
    native, pure = _both(monkeypatch, _jobs_case(jobs), lambda js: [_job_fields(j) for j in js])
    assert native == pure


VALUES = st.one_of(
    st.integers(-3, 300), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
    st.text(alphabet="w0!ab1", max_size=4), st.lists(st.integers(0, 3), max_size=2))
KEYS = st.sampled_from(["id", "subtime", "walltime", "res", "profile", "x",
                        "smpi_ranks_to_hosts_mapping"])


@needs_native
@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(KEYS, VALUES, max_size=6), min_size=1, max_size=4),
       st.integers(0, 2**32))
def test_random_jobs_read_the_same(jobs, seed):
    """Random job objects, most made well formed from a random template (so that the uniform
    paths are reached), the others as drawn."""
    rng = random.Random(seed)
    template = dict(BASE, **{k: v for k, v in jobs[0].items() if rng.random() < 0.3})
    made = [dict(template, id=rng.choice([i, f"j{i}"]) if rng.random() < 0.9 else obj.get("id"))
            if rng.random() < 0.8 else obj for i, obj in enumerate(jobs)]
    with pytest.MonkeyPatch.context() as mp:
        native, pure = _both(mp, _jobs_case(made), lambda js: [_job_fields(j) for j in js])
    assert native == pure


# ------------------------------------------------------------------ profiles


def _workload_case(profiles: Any, jobs: Any = None) -> Any:
    data = {"nb_res": 4, "profiles": profiles,
            "jobs": jobs if jobs is not None else [dict(BASE, id=1)]}
    return lambda: parse_workload(data, name="w0", path="/x/wl.json", source="wl.json")


PROFILE_CASES: list[Any] = [
    {"p": {"type": "delay", "delay": 5}},
    {"p": {"type": "delay", "delay": 5.5, "ret": 3}, "q": {"type": "delay", "delay": 1}},
    {"p": {"delay": 5, "type": "delay", "extra": [1, 2]}},
    {"p": {"type": "delay", "delay": 0}},
    {"p": {"type": "delay", "delay": -1}},
    {"p": {"type": "delay", "delay": 2**1023}},
    {"p": {"type": "delay", "delay": 2**1023 - 1}},
    {"p": {"type": "delay", "delay": 10**400}},
    {"p": {"type": "delay", "delay": float("inf")}},
    {"p": {"type": "delay", "delay": float("nan")}},
    {"p": {"type": "delay", "delay": True}},
    {"p": {"type": "delay", "delay": "5"}},
    {"p": {"type": "delay"}},
    {"p": {"type": "delay", "delay": 5, "ret": 1.0}},
    {"p": {"type": "delay", "delay": 5, "ret": True}},
    {"p": {"type": "Delay", "delay": 5}},
    {"p": {"type": 3, "delay": 5}},
    {"p": {"delay": 5}},
    {"p": [1]},
    {"p": {"type": "composed", "seq": ["q"]}, "q": {"type": "delay", "delay": 2}},
    {"p": {"type": "composed", "seq": ["r"]}, "q": {"type": "delay", "delay": 2}},
    {"p": {"type": "delay", "delay": 1}, "q": {"type": "delay", "delay": 2}},  # q unused
    {"q": {"type": "delay", "delay": 2}},  # p undefined
    {"p": {"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0, 0]}},  # 2 cpus, res 2
    {"p": {"type": "parallel", "cpu": [1], "com": [0]}},  # res mismatch
    {"p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}},
    [],
]


@needs_native
@pytest.mark.parametrize("profiles", PROFILE_CASES, ids=range(len(PROFILE_CASES)))
def test_profile_edge_cases_read_the_same(monkeypatch, profiles):
    native, pure = _both(monkeypatch, _workload_case(profiles), _workload_fields)
    assert native == pure


# ------------------------------------------------------------------ JSON numbers and orjson


def _reference_json(text: str) -> Any:
    return json.loads(text, parse_float=rapidjson_double)


REFUSED = ["1234567890123456789", "18446744073709551616", "123456789012345678901234567890",
           "100000000000.00003", "1.7976931348623157e308", "5e-324", "1e23", "1e-23",
           "1234567890123456e0", "0.30000000000000004", "1e400", "1e-400", "1e99999",
           "9007199254740993.0", '["\\\\", 1.0000000000000000001]', '{"a\\\\": 1e300}']
ACCEPTED = ["0", "-0", "-0.0", "1.5", "123456789012345678", "-123456789012345678", "0.1",
            "1e22", "1e-22", "123456789012345e7", "2.5E+3", '"12345678901234567890"',
            '"\\"1.0000000000000000001"', '{"a": [1, 2.5, {"b": -3e-5}], "c": "1e999"}']


@needs_native
@needs_orjson
@pytest.mark.parametrize("text", REFUSED + ACCEPTED)
def test_numbers_read_by_orjson_only_where_they_agree(text):
    """Where `numbers_agree` says yes, orjson's value is the reference's (types included);
    long or huge numbers (outside strings) get a no: orjson reads some of them differently."""
    agree = _cload.numbers_agree(text.encode())
    assert agree == (text in ACCEPTED), text
    if agree:
        assert _typed(orjson.loads(text)) == _typed(_reference_json(text)), text


@needs_native
@needs_orjson
def test_the_check_matters():
    """A number that orjson and Batsim's reader read differently exists (so the check is not
    vacuous), and the check refuses it."""
    text = "1.0000000000000000001e0"
    candidates = [text] + [f"0.{random.Random(k).randrange(10**19, 10**20)}" for k in range(400)]
    differ = [t for t in candidates if orjson.loads(t) != rapidjson_double(t)]
    assert differ
    assert not any(_cload.numbers_agree(t.encode()) for t in differ)


@needs_native
@needs_orjson
def test_deep_nesting_goes_to_json():
    deep = "[" * 300 + "]" * 300
    assert not _cload.numbers_agree(deep.encode())
    assert _cload.numbers_agree(("[" * 150 + "]" * 150).encode())


@needs_native
@needs_orjson
@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.integers(-(10**22), 10**22).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.tuples(st.integers(0, 10**17), st.integers(0, 10**17), st.integers(-30, 30)).map(
        lambda t: f"{t[0]}.{t[1]}e{t[2]}"),
    st.tuples(st.integers(0, 999), st.integers(0, 99999), st.integers(-330, 330)).map(
        lambda t: f"-{t[0]}.{t[1]:05d}E{t[2]:+d}")))
def test_random_numbers_agree_where_said(token):
    text = f'{{"x": [{token}, "{token}"]}}'
    if _cload.numbers_agree(text.encode()):
        assert _typed(orjson.loads(text)) == _typed(_reference_json(text)), token


@needs_native
@needs_orjson
@pytest.mark.parametrize("text", [
    '{"nb_res": 1e999, "profiles": {}, "jobs": []}',
    '{"nb_res": NaN, "profiles": {}, "jobs": []}',
    '{"nb_res": 1, "profiles": {}, "jobs": ["\\ud800"]}',
    '\ufeff{"nb_res": 1, "profiles": {}, "jobs": []}',
    '{"nb_res": 1, "profiles": {}, "jobs": [}',
    '{"nb_res": 123456789012345678901234567890, "profiles": {}, "jobs": []}',
    "[" * 3000 + "]" * 3000,
])
def test_json_errors_read_the_same(monkeypatch, write, text):
    path = write(text)
    native, pure = _both(monkeypatch, lambda: load_workload(path, "w0"), _workload_fields)
    assert native == pure
    assert native[0] == ("ok" if "1234567890" in text else "error")


@needs_native
def test_invalid_utf8_reads_the_same(monkeypatch, tmp_path):
    path = tmp_path / "w.json"
    path.write_bytes(b'{"nb_res": 1, "profiles": {}, "jobs": [], "x": "\xff"}')
    native, pure = _both(monkeypatch, lambda: load_workload(str(path), "w0"), _workload_fields)
    assert native == pure and native[0] == "error"


# ------------------------------------------------------------------ jobs read from the text

PLAIN = '{"id": %s, "subtime": %s, "walltime": %s, "res": %s, "profile": %s}'


def _text(jobs: str, head: str = '"nb_res": 4, ', tail: str = "") -> str:
    return ('{' + head + '"profiles": {"p": {"type": "delay", "delay": 5}, '
            '"q": {"type": "delay", "delay": 7.5}}, "jobs": ' + jobs + tail + '}')


def _plain(*rows: tuple[Any, ...]) -> str:
    return "[" + ", ".join(PLAIN % row for row in rows) + "]"


TEXT_CASES = [
    _text(_plain(("1", "0", "100", "1", '"p"'), ("2", "5", "100", "2", '"q"'))),
    _text(_plain(("3", "0", "100", "1", '"p"'), ("2", "5", "100", "2", '"q"'))),  # decreasing
    _text(_plain(("1", "0", "100", "1", '"p"'), ("1", "5", "100", "2", '"q"'))),  # duplicated
    _text(_plain(('"a"', "0.5", "-1", "300", '"p"'), ('"b"', "1e2", "2.5E1", "300", '"q"'))),
    _text(_plain(('"a"', "0.5", "-1", "1", '"p"'), ('"a"', "1.5", "-1", "1", '"p"'))),
    _text(_plain(("1", "0", "100", "1", '"p"'), ("2", "0.5", "100", "2", '"q"'))),  # int, float
    _text(_plain(("1", "0", "100", "1", '"p"'), ('"2"', "5", "100", "2", '"q"'))),  # id kinds
    _text(_plain(("-0", "0", "100", "1", '"p"'))),
    _text(_plain(("0", "-0", "-1", "0", '"p"'))),
    _text(_plain(("1", "0", "-0", "1", '"p"'))),
    _text(_plain(("1", "0", "0", "1", '"p"'))),
    _text(_plain(("1", "0", "-2", "1", '"p"'))),
    _text(_plain(("1", "0", "100", "-0", '"p"'))),
    _text(_plain(("1", "0", "100", "-1", '"p"'))),
    _text(_plain(("1", "0", "100", "1.0", '"p"'))),
    _text(_plain(("1.0", "0", "100", "1", '"p"'))),
    _text(_plain(("01", "0", "100", "1", '"p"'))),  # invalid JSON
    _text(_plain(("1", "1.", "100", "1", '"p"'))),  # invalid JSON
    _text(_plain(("1", "9007199254740993", "100", "1", '"p"'))),  # beyond 2**53
    _text(_plain(("1", "100000000000.00003", "100", "1", '"p"'))),  # read differently
    _text(_plain(("1", "0", "1e23", "1", '"p"'))),
    _text(_plain(("1", "0", "100", "1234567890123456789", '"p"'))),
    _text(_plain(("1234567890123456789", "0", "100", "1", '"p"'))),
    _text(_plain(("1", "0.5", "2.5e-3", "1", '"p"'))),
    _text(_plain(("1", "-9007199254740992", "100", "1", '"p"'))),
    _text(_plain(('"w0!1"', "0", "100", "1", '"p"'))),
    _text(_plain(('"xw0"', "0", "100", "1", '"p"'))),
    _text(_plain(('"a!b"', "0", "100", "1", '"p"'))),
    _text(_plain(('""', "0", "100", "1", '"p"'))),
    _text(_plain(('"\\u0061"', "0", "100", "1", '"p"'))),  # escapes: the general path
    _text(_plain(('"\u00e9"', "0", "100", "1", '"p"'))),
    _text(_plain(("1", "0", "100", "1", '"\\u0070"'))),
    _text(_plain(("1", "0", "100", "1", '"r"'))),  # undefined profile
    _text(_plain(("1", "0", "100", "1", "3"))),
    _text(_plain(("1", "0", "100", "1", '"' + "x" * 30 + '"'))),  # a long profile name
    _text(_plain(("1", '"0"', "100", "1", '"p"'))),
    _text(_plain(("1", "0", "100", "1", '"p"')), tail=', "jobs": []'),  # "jobs" twice
    _text(_plain(("1", "0", "100", "1", '"p"')), tail=', "\\u006aobs": []'),
    _text(_plain(("1", "0", "100", "1", '"p"')), tail=', "x": [1, {"y": "]}"}]'),
    _text(_plain(("1", "0", "100", "1", '"p"')), head='"nb_res": 0, '),
    _text(_plain(("1", "0", "100", "1", '"p"')) + ", "),  # invalid JSON after the jobs
    _text(_plain(("1", "0", "100", "1", '"p"')), tail=', "nb_res": 2'),
    _text("[]"),
    _text("{}"),
    _text("[1]"),
    _text('[{"id": 1, "subtime": 0, "res": 1, "profile": "p"}, '
          '{"id": 2, "res": 1, "subtime": 0, "profile": "p"}]'),  # key order
    _text('[{"id": 1, "subtime": 0, "res": 1, "profile": "p", "id": 3}]'),  # a key twice
    _text('[{"id": 1, "subtime": 0, "res": 1, "profile": "p", "x": [1]}]'),  # other keys
    _text('[{"id": 1, "subtime": 0, "res": 1, "profile": "p"},'
          '{"id": 2, "subtime": 0, "res": 1, "profile": "p", "walltime": 5}]'),
    _text('[{"id": 1, "subtime": 0, "res": 1, "profile": "p"}\n,\t{"id":2,"subtime":0,'
          '"res":1,"profile":"q"}\r\n]'),
    _text('[{"id": 1, "subtime": 0, "res": 1, "profile": "p"}, {"id": 2}]'),
    _text('[{"id": 1, "subtime": 0, "res": 1, "profile": "p"} {"id": 2}]'),
    '[' + _text(_plain(("1", "0", "100", "1", '"p"'))) + ']',
    _text(_plain(("1", "0", "100", "1", '"p"'))) + " x",
]


@needs_native
@needs_orjson
@pytest.mark.parametrize("text", TEXT_CASES, ids=range(len(TEXT_CASES)))
def test_jobs_read_from_the_text_the_same(monkeypatch, write, text):
    path = write(text)
    native, pure = _both(monkeypatch, lambda: load_workload(path, "w0"), _workload_fields)
    assert native == pure


@needs_native
def test_a_plain_array_is_read_from_the_text(write):
    """(Else the comparisons above would compare the other paths only.)"""
    from batsim_py.workload.jobs import _JOB_SLOTS, _shape_of
    from batsim_py.workload.model import Job

    path = write(TEXT_CASES[0])
    data = Path(path).read_bytes()
    start, stop, jobs, used, distinct = _cload.scan_jobs(data, "w0", Job, _JOB_SLOTS,
                                                         _shape_of)
    assert data[start:stop].startswith(b"[{") and data[start:stop].endswith(b"}]")
    assert [j.id for j in jobs] == ["w0!1", "w0!2"] and used == {"p", "q"} and distinct
    assert _cload.scan_jobs(Path(write(TEXT_CASES[1])).read_bytes(), "w0", Job, _JOB_SLOTS,
                            _shape_of)[4] is False  # (decreasing ids)
    for number in ("100000000000.00003", "1e23", "0.30000000000000004", "1e-400"):
        text = _text(_plain(("1", number, "100", "1", '"p"')))  # (read differently: refused)
        assert _cload.scan_jobs(text.encode(), "w0", Job, _JOB_SLOTS, _shape_of) is None


PLAIN_VALUES = {
    "id": st.one_of(st.integers(-5, 10**6), st.text(alphabet="ab1!w0", max_size=3)),
    "subtime": st.one_of(st.integers(-10, 10**9), st.floats(-1e9, 1e12, allow_nan=False)),
    "walltime": st.one_of(st.just(-1), st.integers(-2, 10**6), st.floats(-2, 1e7)),
    "res": st.one_of(st.integers(-1, 300), st.integers(10**6, 10**12)),
    "profile": st.sampled_from(["p", "q", "r", "p" * 30]),
}


@needs_native
@needs_orjson
@settings(max_examples=120, deadline=None)
@given(st.lists(st.fixed_dictionaries({k: v for k, v in PLAIN_VALUES.items() if k != "walltime"},
                                      optional={"walltime": PLAIN_VALUES["walltime"]}),
                min_size=1, max_size=5),
       st.sampled_from([None, 0, 2]), st.booleans())
def test_random_plain_arrays_read_the_same(tmp_path_factory, jobs, indent, compact):
    text = json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {
        "p": {"type": "delay", "delay": 5}, "q": {"type": "delay", "delay": 2.5},
        "r": {"type": "composed", "seq": ["p"]}, "p" * 30: {"type": "delay", "delay": 1}}},
        indent=indent, separators=(",", ":") if compact else None)
    path = tmp_path_factory.mktemp("w") / "w.json"
    path.write_text(text)
    with pytest.MonkeyPatch.context() as mp:
        native, pure = _both(mp, lambda: load_workload(str(path), "w0"), _workload_fields)
    assert native == pure
