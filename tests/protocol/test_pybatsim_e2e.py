"""Unchanged pybatsim 3.2.1 schedulers driving batsim-py over ZeroMQ on 127.0.0.1.

pybatsim binds a REP socket, batsim-py connects its REQ socket (as Batsim does). On the reference
cases the outputs must equal real Batsim's. Skipped when pybatsim is not installed (CI installs
it: `pip install --no-deps pybatsim==3.2.1` next to a current pyzmq, procset,
sortedcontainers, docopt).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from batsim_py.cli import main
from batsim_py.output.compare import compare

PROJECT = Path(__file__).resolve().parents[2]
REFERENCE = PROJECT / "tests" / "conformance" / "reference"
PYBATSIM = shutil.which("pybatsim")

pytestmark = pytest.mark.skipif(PYBATSIM is None, reason="pybatsim 3.2.1 is not installed")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_with_pybatsim(scheduler: str, args: list[str], out: Path) -> int:
    port = free_port()
    log = open(out / "pybatsim.log", "w")  # a pipe would fill up and block pybatsim
    proc = subprocess.Popen(
        [PYBATSIM, scheduler, "-s", f"tcp://127.0.0.1:{port}", "-t", "0", "-v", "warning"],
        stdout=log, stderr=subprocess.STDOUT, text=True,
        cwd=out,  # pybatsim writes out_events.csv in its working directory
    )
    try:
        time.sleep(0.3)
        rc = main([*args, "-q", "-s", f"tcp://127.0.0.1:{port}", "--scheduler-timeout", "60",
                   "-e", str(out / "out")])
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    assert proc.returncode == 0, (out / "pybatsim.log").read_text()[-2000:]
    return rc


def reference_args(case: str) -> tuple[str, list[str]]:
    folder = REFERENCE / case
    if not folder.is_dir():
        pytest.skip(f"{folder} is not available")
    spec = json.loads((folder / "case.json").read_text())
    args = ["-p", str(folder / spec["platform"])]
    for w in spec["workloads"]:
        args += ["-w", str(folder / w)]
    return spec["scheduler"]["name"], args + spec["batsim_args"]


# (b_delays_easy_small, c1_mixed_profiles_easy_small, d5_energy_ptask_clusterenergy128_easy:
# run over ZeroMQ and checked against Batsim's outputs by test_pybatsim_inprocess.py's
# test_same_outputs_as_over_zeromq, which also runs them in-process)
FAST = ["a_delays_fcfs_small", "c4_sequence_delay_fcfs_small", "b4_hpc250_easy_nonet128",
        "d2_energy_easy_nonet128"]
# The large cases over ZeroMQ. a2, b2 and b3 (paper800, pybatsim's schedFcfs, easyBackfill,
# schedEasySjfBackfill) are not run live here any more: tests/conformance/test_replay.py
# replays their transcripts strictly, every message batsim-py encodes (the ZeroMQ peer sends
# the same encode_batsim_message text) equal to the one real Batsim sent pybatsim, byte for
# byte, with pybatsim's recorded replies decoded as the ZeroMQ peer decodes them, and the
# outputs equal to Batsim's: pybatsim answers our messages as it answered Batsim's. They cost
# 40-60 s of pybatsim's own scheduling; the ZeroMQ transport is run live on every FAST case
# and on f_10k (no transcript). tests/protocol/test_pybatsim_inprocess.py still runs all four
# in-process, where pybatsim gets decoded messages, not that text.
SLOW = ["f_10k_easy_cluster128_quiet"]


def check_case(case: str, tmp_path: Path) -> None:
    scheduler, args = reference_args(case)
    assert run_with_pybatsim(scheduler, args, tmp_path) == 0
    result = compare(str(REFERENCE / case / "expected" / "out"), str(tmp_path / "out"))
    assert result.ok, result.table()


@pytest.mark.parametrize("case", FAST)
def test_pybatsim_reference_case(case: str, tmp_path: Path) -> None:
    check_case(case, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW)
def test_pybatsim_large_reference_case(case: str, tmp_path: Path) -> None:
    check_case(case, tmp_path)


@pytest.mark.parametrize("scheduler", ["fillerSched", "schedFiller", "schedFcfs",
                                       "easyBackfill", "schedEasySjfBackfill"])
def test_pybatsim_scheduler_runs_on_shipped_inputs(scheduler: str, tmp_path: Path) -> None:
    # Integer job ids: pybatsim's batsim.sched layer parses ids as integers.
    args = ["-p", str(PROJECT / "platforms" / "small4.xml"),
            "-w", str(PROJECT / "workloads" / "delays_small.json")]
    assert run_with_pybatsim(scheduler, args, tmp_path) == 0
    rows = (tmp_path / "out_jobs.csv").read_text().splitlines()
    assert len(rows) == 1 + 20


def test_a_scheduler_that_disappears_is_a_clear_error(tmp_path: Path, capsys) -> None:
    port = free_port()
    rc = main(["-p", str(PROJECT / "platforms" / "small4.xml"),
               "-w", str(PROJECT / "workloads" / "delays_small.json"), "-q",
               "-s", f"tcp://127.0.0.1:{port}", "--scheduler-connect-timeout", "0.5",
               "-e", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 1
    assert "nothing accepted the connection within 0.5 s" in err
    assert (tmp_path / "out_jobs.csv").exists()
