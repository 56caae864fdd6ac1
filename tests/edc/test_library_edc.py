"""Library EDCs through the C ABI (§5.2 item 3): a small C EDC (JSON mode, FCFS, no
batprotocol dependency: tests/edc/c/fcfs_edc.c) compiled at test time with `cc`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from batsim_py.decision.edc_transports import LibraryEdc
from batsim_py.errors import SchedulerError, UsageError
from edc.helpers import PROJECT, run_edc

CC = shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) to build the C EDC")
SOURCE = PROJECT / "examples" / "edc" / "fcfs_edc.c"


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    out = tmp_path_factory.mktemp("cedc") / "libfcfs_edc.so"
    subprocess.run([CC, "-shared", "-fPIC", "-O2", "-o", str(out), str(SOURCE)], check=True)
    return out


def _cli(*args):
    done = subprocess.run([sys.executable, "-m", "batsim_py.cli", *args], cwd=PROJECT,
                          capture_output=True, text=True, timeout=120)
    return done


def _simultaneous(tmp_path):
    """Jobs submitted and ending in pairs: messages carry several events each."""
    jobs = [{"id": i, "subtime": 10 * (i // 2), "res": 1 + i % 3, "walltime": 100,
             "profile": f"d{5 + 10 * (i % 4)}"} for i in range(30)]
    profiles = {f"d{5 + 10 * k}": {"type": "delay", "delay": 5 + 10 * k} for k in range(4)}
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    return str(path)


@pytest.mark.parametrize("workload", ["workloads/delays_small.json", "pairs"])
def test_library_and_process_give_the_same_jobs(library, tmp_path, workload):
    if workload == "pairs":
        workload = _simultaneous(tmp_path)
    common = ["-p", "platforms/small4.xml", "-w", workload, "-q"]
    done = _cli(*common, "-l", str(library), "{}", "-e", str(tmp_path / "lib"))
    assert done.returncode == 0, done.stderr
    endpoint = f"ipc://{tmp_path}/edc.sock"
    server = subprocess.Popen([sys.executable, "-m", "batsim_py.edcs.serve", str(library),
                               endpoint], cwd=PROJECT,
                              env={**os.environ, "PYTHONPATH": str(PROJECT)})
    try:
        done = _cli(*common, "--edc-socket-str", endpoint, "{}", "-e", str(tmp_path / "proc"))
        assert done.returncode == 0, done.stderr
        assert server.wait(10) == 0
    finally:
        if server.poll() is None:
            server.kill()
    lib_jobs = (tmp_path / "lib_jobs.csv").read_text()
    assert lib_jobs == (tmp_path / "proc_jobs.csv").read_text()
    assert len(lib_jobs.splitlines()) in (21, 31)
    # and the same jobs as the Python FCFS EDC, whose policy the C EDC implements
    done = _cli(*common, "-l", "batsim_py.edcs.fcfs", "{}", "-e", str(tmp_path / "py"))
    assert done.returncode == 0, done.stderr
    assert lib_jobs == (tmp_path / "py_jobs.csv").read_text()


def test_nonzero_take_decisions_stops_with_a_clear_error_and_outputs(library, tmp_path):
    done = _cli("-p", "platforms/small4.xml", "-w", "workloads/delays_small.json", "-q",
                "-l", str(library), '{"fail_at": 5}', "-e", str(tmp_path / "out"))
    assert done.returncode == 1
    assert "batsim_edc_take_decisions returned 1" in done.stderr
    assert done.stderr.count("\n") == 1
    assert (tmp_path / "out_jobs.csv").read_text().startswith("job_id,")


def test_dlmopen_load_method(library, tmp_path):
    run_edc(LibraryEdc(str(library), "dlmopen"), tmp_path / "out")
    assert len((tmp_path / "out_jobs.csv").read_text().splitlines()) == 21


def test_a_library_without_the_abi_is_refused(tmp_path):
    src = tmp_path / "nothing.c"
    src.write_text("int nothing(void) { return 0; }\n")
    lib = tmp_path / "libnothing.so"
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    with pytest.raises(UsageError, match="does not export 'batsim_edc_init'"):
        LibraryEdc(str(lib))


def test_nonzero_init_is_an_error(tmp_path):
    src = tmp_path / "refuse.c"
    src.write_text("#include <stdint.h>\n"
                   "uint8_t batsim_edc_init(const uint8_t *d, uint32_t s, uint32_t *f, "
                   "uint8_t **r, uint32_t *rs) { return 3; }\n"
                   "uint8_t batsim_edc_take_decisions(const uint8_t *d, uint32_t s, "
                   "uint8_t **r, uint32_t *rs) { return 0; }\n"
                   "uint8_t batsim_edc_deinit(void) { return 0; }\n")
    lib = tmp_path / "librefuse.so"
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    with pytest.raises(SchedulerError, match="batsim_edc_init returned 3"):
        run_edc(LibraryEdc(str(lib)), tmp_path / "out")
