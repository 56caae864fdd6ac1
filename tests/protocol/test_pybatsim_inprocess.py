"""`--scheduler pybatsim:NAME`: unchanged pybatsim 3.2.1 schedulers driven in-process.

On every reference case a pybatsim scheduler drives, the outputs must equal real Batsim's (as
over ZeroMQ, tests/protocol/test_pybatsim_e2e.py) and, byte for byte, those of the same scheduler
over ZeroMQ. pybatsim is optional: without it the tests that need it are skipped and the error
a user gets is checked.
"""

from __future__ import annotations

import builtins
import json
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batsim_py.cli import main
from batsim_py.output.compare import compare

PROJECT = Path(__file__).resolve().parents[2]
from conformance.corpus import REFERENCE  # noqa: E402  (the corpus shipped in tests/)

try:
    import batsim.batsim  # noqa: F401  (pybatsim's package)
    HAVE_PYBATSIM = True
except ImportError:
    HAVE_PYBATSIM = False
needs_pybatsim = pytest.mark.skipif(not HAVE_PYBATSIM, reason="pybatsim 3.2.1 is not installed")

# (b_delays_easy_small, c1_mixed_profiles_easy_small, d5_energy_ptask_clusterenergy128_easy:
# run in-process, and over ZeroMQ, by test_same_outputs_as_over_zeromq below)
FAST = ["a_delays_fcfs_small", "c2_mixed_profiles_fcfs_small", "c3_long_workload_fcfs_small",
        "c4_sequence_delay_fcfs_small", "b4_hpc250_easy_nonet128", "d2_energy_easy_nonet128",
        "c5_ptask_cluster32_easy", "e1_walltime_easy_cluster64"]
SLOW = ["a2_paper800_fcfs_cluster32", "b2_paper800_easy_cluster32",
        "b3_paper800_easysjf_cluster32", "f_10k_easy_cluster128_quiet"]


def reference_args(case: str) -> tuple[str, list[str]]:
    folder = REFERENCE / case
    if not folder.is_dir():
        raise AssertionError(f"{folder} is missing from the shipped corpus")
    spec = json.loads((folder / "case.json").read_text())
    assert spec["scheduler"]["kind"] == "pybatsim" and not spec["scheduler"]["options"]
    args = ["-p", str(folder / spec["platform"])]
    for w in spec["workloads"]:
        args += ["-w", str(folder / w)]
    return spec["scheduler"]["name"], args + spec["batsim_args"]


def run_inprocess(case: str, out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scheduler, args = reference_args(case)
    monkeypatch.chdir(out)  # pybatsim's batsim.sched layer writes out_events.csv in the cwd
    assert main([*args, "-q", "--scheduler", f"pybatsim:{scheduler}",
                 "-e", str(out / "out")]) == 0
    result = compare(str(REFERENCE / case / "expected" / "out"), str(out / "out"))
    assert result.ok, result.table()


@needs_pybatsim
@pytest.mark.parametrize("case", FAST)
def test_reference_case_in_process(case: str, tmp_path: Path, monkeypatch) -> None:
    run_inprocess(case, tmp_path, monkeypatch)


@needs_pybatsim
@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW)
def test_large_reference_case_in_process(case: str, tmp_path: Path, monkeypatch) -> None:
    run_inprocess(case, tmp_path, monkeypatch)


def identical_outputs(a: Path, b: Path) -> None:
    """Every output file byte for byte, but schedule.csv's two wall-clock columns."""
    for suffix in ("_jobs.csv", "_machine_states.csv"):
        assert (a / f"out{suffix}").read_bytes() == (b / f"out{suffix}").read_bytes(), suffix
    rows_a = (a / "out_schedule.csv").read_text().splitlines()
    rows_b = (b / "out_schedule.csv").read_text().splitlines()
    header = rows_a[0].split(",")
    keep = [i for i, name in enumerate(header)
            if name not in ("scheduling_time", "simulation_time")]
    assert len(keep) == len(header) - 2
    assert [[r.split(",")[i] for i in keep] for r in rows_a] == \
        [[r.split(",")[i] for i in keep] for r in rows_b]


@needs_pybatsim
@pytest.mark.skipif(shutil.which("pybatsim") is None, reason="the pybatsim command is absent")
@pytest.mark.parametrize("case", ["b_delays_easy_small", "c1_mixed_profiles_easy_small",
                                  "d5_energy_ptask_clusterenergy128_easy"])
def test_same_outputs_as_over_zeromq(case: str, tmp_path: Path, monkeypatch) -> None:
    from test_pybatsim_e2e import run_with_pybatsim  # (rootdir-less import: a sibling file)

    scheduler, args = reference_args(case)
    (tmp_path / "zmq").mkdir()
    (tmp_path / "inproc").mkdir()
    assert run_with_pybatsim(scheduler, args, tmp_path / "zmq") == 0
    # (these cases are not in test_pybatsim_e2e.py's FAST: the check of the run over ZeroMQ
    # against Batsim's outputs is here)
    result = compare(str(REFERENCE / case / "expected" / "out"), str(tmp_path / "zmq" / "out"))
    assert result.ok, result.table()
    run_inprocess(case, tmp_path / "inproc", monkeypatch)
    identical_outputs(tmp_path / "zmq", tmp_path / "inproc")


SMALL = ["-p", str(PROJECT / "platforms" / "small4.xml"),
         "-w", str(PROJECT / "workloads" / "delays_small.json"), "-q"]

USER_SCHEDULER = '''
from batsim.batsim import BatsimScheduler


class RejectOrRun(BatsimScheduler):
    """Runs the jobs one at a time on the first hosts, or rejects them all with {"reject": true}."""

    def __init__(self, options):
        super().__init__(options)
        self.queue, self.busy = [], False

    def onJobSubmission(self, job):
        if self.options.get("reject"):
            self.bs.reject_jobs([job])
        else:
            self.queue.append(job)

    def onJobCompletion(self, job):
        self.busy = False

    def onNoMoreEvents(self):
        if self.queue and not self.busy:
            job = self.queue.pop(0)
            job.allocation = "0-%d" % (job.requested_resources - 1)
            self.bs.execute_jobs([job])
            self.busy = True
'''


@needs_pybatsim
@pytest.mark.parametrize("options, state", [("{}", "COMPLETED_SUCCESSFULLY"),
                                            ('{"reject": true}', "REJECTED")])
def test_a_file_scheduler_gets_its_options(options: str, state: str, tmp_path: Path) -> None:
    path = tmp_path / "rejectOrRun.py"  # pybatsim: class = file name capitalised
    path.write_text(USER_SCHEDULER)
    assert main([*SMALL, "--scheduler", f"pybatsim:{path}", "--sched-cfg", options,
                 "-e", str(tmp_path / "out")]) == 0
    rows = (tmp_path / "out_jobs.csv").read_text().splitlines()
    column = rows[0].split(",").index("final_state")
    assert len(rows) == 21
    assert {r.split(",")[column] for r in rows[1:]} == {state}


@needs_pybatsim
def test_a_failing_scheduler_is_one_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "crash.py"
    path.write_text("from batsim.batsim import BatsimScheduler\n\n"
                    "class Crash(BatsimScheduler):\n"
                    "    def onJobSubmission(self, job):\n"
                    "        raise RuntimeError('boom')\n")
    assert main([*SMALL, "--scheduler", f"pybatsim:{path}", "-e", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"scheduler pybatsim:{path} failed: RuntimeError: boom" in err
    assert "crash.py:5" in err


@needs_pybatsim
def test_an_unknown_pybatsim_scheduler_names_the_known_ones(tmp_path: Path, capsys) -> None:
    assert main([*SMALL, "--scheduler", "pybatsim:noSuchSched",
                 "-e", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err
    assert "pybatsim has no scheduler 'noSuchSched'" in err
    assert "easyBackfill" in err


def test_without_pybatsim_the_error_says_how_to_install_it(tmp_path: Path, capsys,
                                                           monkeypatch) -> None:
    real_import = builtins.__import__

    def no_pybatsim(name, *args, **kwargs):
        if name == "batsim" or name.startswith("batsim."):
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return real_import(name, *args, **kwargs)

    for name in [m for m in sys.modules if m == "batsim" or m.startswith("batsim.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(builtins, "__import__", no_pybatsim)
    assert main([*SMALL, "--scheduler", "pybatsim:easyBackfill",
                 "-e", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "pybatsim:easyBackfill needs pybatsim 3.2.1, which is not installed" in err[0]
    assert "pip install --no-deps pybatsim==3.2.1 procset sortedcontainers docopt" in err[0]


# --------------------------------------------- the decoded messages equal the wire's, both ways

json_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=5),
    st.floats(allow_nan=False, allow_infinity=False), st.floats(-2e9, 2e9),
)
json_values = st.recursive(
    json_leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers()), inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_what_pybatsim_gets_equals_what_it_would_parse(value) -> None:
    from batsim_py.protocol import batsim_json

    expected = json.loads(batsim_json.dumps(value))
    got = batsim_json.as_parsed(value)
    assert got == expected
    assert json.dumps(got) == json.dumps(expected)  # same types too (1 vs 1.0, -0.0)


@settings(max_examples=300, deadline=None)
@given(json_values, st.floats(0, 2e9) | st.integers(0, 10**12))
def test_what_batsim_py_reads_equals_what_it_would_read_over_the_wire(value, now) -> None:
    from batsim_py.decision.pybatsim_peer import _decode
    from batsim_py.protocol.replies import decode_reply

    reply = {"now": now, "events": [
        {"timestamp": now, "type": "SET_JOB_METADATA",
         "data": {"job_id": "w0!1", "metadata": "m"}, "extra": value},
        {"timestamp": now, "type": "CALL_ME_LATER", "data": {"timestamp": now}},
    ]}
    assert _decode(reply, "pybatsim:x") == decode_reply(json.dumps(reply))


@needs_pybatsim
@pytest.mark.skipif(shutil.which("pybatsim") is None, reason="the pybatsim command is absent")
def test_the_documented_command_gives_the_zeromq_outputs(tmp_path: Path, monkeypatch) -> None:
    """docs/schedulers.md's first `pybatsim:easyBackfill` command, against the same over ZeroMQ."""
    from test_pybatsim_e2e import run_with_pybatsim  # (rootdir-less import: a sibling file)

    doc = (PROJECT / "docs" / "schedulers.md").read_text()
    assert ("batsim-py -p platforms/small4.xml -w workloads/delays_small.json \\\n"
            "      --scheduler pybatsim:easyBackfill") in doc
    inputs = ["-p", str(PROJECT / "platforms" / "small4.xml"),
              "-w", str(PROJECT / "workloads" / "delays_small.json")]
    (tmp_path / "zmq").mkdir()
    (tmp_path / "inproc").mkdir()
    assert run_with_pybatsim("easyBackfill", inputs, tmp_path / "zmq") == 0
    monkeypatch.chdir(tmp_path / "inproc")
    assert main([*inputs, "--scheduler", "pybatsim:easyBackfill", "-q",
                 "-e", str(tmp_path / "inproc" / "out")]) == 0
    identical_outputs(tmp_path / "zmq", tmp_path / "inproc")
