"""Outputs are never lost nor misreported (docs/reliability.md).

- a prefix that cannot be written is refused before anything is simulated;
- a write error names its file, and leaves no truncated file (each file is written under a
  temporary name and renamed once all are complete);
- a second SIGINT/SIGTERM cannot interrupt the writing that the first one started;
- the last line says exactly what was written; SIGTERM exits 143.
Tests that need a tiny file system mount a tmpfs (root only) and are skipped elsewhere.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from batsim_py.cli import main
from batsim_py.decision.inprocess import InProcess
from batsim_py.errors import OutputError
from batsim_py.output import files
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]
PLATFORM = str(PROJECT / "platforms" / "small4.xml")
WORKLOAD = str(PROJECT / "workloads" / "delays_small.json")
ARGS = ["-p", PLATFORM, "-w", WORKLOAD, "-q"]
FAKE = PROJECT / "tests" / "protocol" / "fake_scheduler.py"
FILES = ("jobs.csv", "schedule.csv", "schedule.trace", "machine_states.csv")  # written order
QUICK = 30
ENV = {**os.environ, "PYTHONPATH": str(PROJECT)}  # the driver imports this tree's batsim_py


def cli(capsys, prefix: str | Path, *extra: str) -> tuple[int, str]:
    rc = main([*ARGS, "-e", str(prefix), "--scheduler", "fcfs", *extra])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(err.strip().splitlines()) <= 1, err
    return rc, err.strip()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(files.TEMP_PREFIX))


# -- the prefix is checked before simulating ------------------------------------------------------

def test_a_file_in_the_way(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("f").write_text("")
    rc, err = cli(capsys, "f/sub/out")
    assert rc == 1
    assert err == ("batsim-py: error: -e f/sub/out: 'f' is a file, not a folder; choose another "
                   "output prefix with -e")


def test_etc_passwd(capsys) -> None:
    if not os.path.isfile("/etc/passwd"):
        pytest.skip("no /etc/passwd here")
    rc, err = cli(capsys, "/etc/passwd/x")
    assert rc == 1 and "'/etc/passwd' is a file, not a folder" in err


def test_a_name_too_long(tmp_path: Path, capsys) -> None:
    rc, err = cli(capsys, tmp_path / ("n" * 300))
    assert rc == 1 and "more than the file system allows" in err
    assert list(tmp_path.iterdir()) == []


def test_a_folder_in_the_way(tmp_path: Path, capsys) -> None:
    (tmp_path / "out_schedule.csv").mkdir()
    rc, err = cli(capsys, tmp_path / "out")
    assert rc == 1 and "out_schedule.csv' is a folder" in err
    assert not (tmp_path / "out_jobs.csv").exists()


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (root only; skipped elsewhere)."""
    mount = tmp_path / "fs"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
            capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_read_only_folder(tiny_fs: Path, capsys) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_fs)], check=True)
    rc, err = cli(capsys, tiny_fs / "out")
    assert rc == 1
    assert err == (f"batsim-py: error: -e {tiny_fs}/out: cannot write in the folder '{tiny_fs}' "
                   "(Read-only file system); choose a writable place with -e")


def test_a_read_only_folder_without_root(tmp_path: Path, capsys) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes in read-only folders (see test_a_read_only_folder)")
    tmp_path.chmod(0o555)
    try:
        rc, err = cli(capsys, tmp_path / "out")
    finally:
        tmp_path.chmod(0o755)
    assert rc == 1 and "cannot write in the folder" in err


# -- a full disk -----------------------------------------------------------------------------------

def fill(fs: Path, leave: int) -> None:
    """Leave about `leave` bytes free on the tmpfs."""
    st = os.statvfs(fs)
    (fs / "filler").write_bytes(b"x" * (st.f_bavail * st.f_frsize - leave))


def test_a_full_disk_names_the_file_and_leaves_no_truncated_file(tiny_fs: Path, capsys) -> None:
    for s in FILES:
        (tiny_fs / f"out_{s}").write_text("old\n")  # a previous run's outputs
    fill(tiny_fs, 4096)  # room for one small file: out_jobs.csv, then nothing
    rc, err = cli(capsys, tiny_fs / "out")
    assert rc == 1
    assert err == (f"batsim-py: error: {tiny_fs}/out_schedule.csv: cannot write it (No space "
                   "left on device); no output file was written (the previous ones, if any, "
                   "are unchanged)")
    assert leftovers(tiny_fs) == []
    for s in FILES:
        assert (tiny_fs / f"out_{s}").read_text() == "old\n"


def test_a_full_disk_does_not_hide_the_runs_own_error(tiny_fs: Path, tmp_path: Path,
                                                     capsys) -> None:
    transcript = tmp_path / "t.jsonl"  # one reply only: the run fails at its 2nd request
    transcript.write_text('{"seq": 1, "from": "scheduler", "msg": {"now": 0, "events": []}}\n')
    fill(tiny_fs, 0)
    rc = main([*ARGS, "-e", str(tiny_fs / "out"), "--scheduler", f"replay:{transcript}"])
    err = capsys.readouterr().err.strip()
    assert rc == 1
    assert err.startswith(f"batsim-py: error: replay of {transcript}: request 2 has no "
                          "recorded reply"), err
    assert err.endswith(f"; besides, {tiny_fs}/out_jobs.csv: cannot write it (No space left on "
                        "device); no output file was written (the previous ones, if any, are "
                        "unchanged)"), err
    assert leftovers(tiny_fs) == []


def test_a_write_error_is_named_everywhere(tmp_path: Path, monkeypatch) -> None:
    """Without root: the writer raises ENOSPC on the second file."""
    def full(**_: object) -> str:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "format_schedule", full)
    spec = RunSpec(PLATFORM, [WORKLOAD], Options(export_prefix=str(tmp_path / "out")))
    with pytest.raises(OutputError, match=r"out_schedule.csv: cannot write it \(No space left"):
        run_simulation(spec, InProcess(get_scheduler("fcfs")))
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_an_interrupted_write_replaces_nothing(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "out_jobs.csv").write_text("old\n")

    def interrupted(**_: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(files, "format_schedule", interrupted)
    spec = RunSpec(PLATFORM, [WORKLOAD], Options(export_prefix=str(tmp_path / "out")))
    with pytest.raises(KeyboardInterrupt):
        run_simulation(spec, InProcess(get_scheduler("fcfs")))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out_jobs.csv"]
    assert (tmp_path / "out_jobs.csv").read_text() == "old\n"


def test_outputs_keep_the_usual_file_mode(tmp_path: Path, capsys) -> None:
    old = os.umask(0o022)
    try:
        rc, _ = cli(capsys, tmp_path / "out")
    finally:
        os.umask(old)
    assert rc == 0
    for s in FILES:
        assert (tmp_path / f"out_{s}").stat().st_mode & 0o777 == 0o644


def test_transcript_on_a_full_device_is_not_the_schedulers_fault(tmp_path: Path, capsys) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    rc, err = cli(capsys, tmp_path / "out", "--record-transcript", "/dev/full")
    assert rc == 1
    assert err == ("batsim-py: error: /dev/full: cannot write the transcript (No space left on "
                   "device); --record-transcript needs a writable file")


# -- signals -------------------------------------------------------------------------------------

DRIVER = """
import sys, time, pathlib
marker, mode = pathlib.Path(sys.argv[1]), sys.argv[2]
modes = mode.split(",")
if "slow_write" in modes:  # the outputs take a second to write: signals land in the middle
    import batsim_py.output.jobs_csv as jobs_csv
    write_rows = jobs_csv.write_rows
    def slow(records, out):
        times = write_rows(records, out)
        out.flush()
        marker.touch()
        time.sleep(1.0)
        return times
    jobs_csv.write_rows = slow
if "slow_load" in modes:  # loading takes 3 s
    import batsim_py.run as run
    load = run.load_workload
    def slow(*args, **kwargs):
        marker.touch()
        time.sleep(3)
        return load(*args, **kwargs)
    run.load_workload = slow
from batsim_py.cli import main
code = main(sys.argv[3:])
if "slow_exit" in modes:  # the interpreter takes a second to exit
    pathlib.Path(str(marker) + ".done").touch()
    time.sleep(1)
sys.exit(code)
"""


def start(tmp_path: Path, mode: str, *args: str) -> tuple[subprocess.Popen, Path]:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    marker = tmp_path / "marker"
    proc = subprocess.Popen([sys.executable, str(driver), str(marker), mode, *ARGS,
                             "-e", str(tmp_path / "out"), *args],
                            stderr=subprocess.PIPE, text=True, env=ENV)
    return proc, marker


def wait_for(path: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.01)


def assert_complete_outputs(tmp_path: Path, err: str, name: str) -> None:
    written = ", ".join(str(tmp_path / f"out_{s}") for s in FILES)
    assert err.strip() == f"batsim-py: interrupted by {name}: outputs written: {written}"
    for s in FILES:
        assert (tmp_path / f"out_{s}").read_text().endswith("\n")
    assert len((tmp_path / "out_schedule.csv").read_text().splitlines()) == 2
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(("sig", "gap"), [(signal.SIGTERM, 0.001), (signal.SIGINT, 0.05),
                                          (signal.SIGTERM, 0.2)])
def test_a_second_signal_cannot_truncate_the_outputs(sig: int, gap: float,
                                                     tmp_path: Path) -> None:
    """The first signal stops the run mid-simulation, the second lands while it writes."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        endpoint = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    running = tmp_path / "running"
    sched = subprocess.Popen([sys.executable, str(FAKE), endpoint, "silent", str(running)])
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    writing = tmp_path / "writing"
    proc = subprocess.Popen([sys.executable, str(driver), str(writing), "slow_write", *ARGS,
                             "-e", str(tmp_path / "out"), "-s", endpoint],
                            stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        wait_for(running, proc)
        proc.send_signal(sig)
        wait_for(writing, proc)
        time.sleep(gap)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=QUICK)
    finally:
        for p in (proc, sched):
            if p.poll() is None:
                p.kill()
            p.wait()
    assert proc.returncode == 128 + sig, err
    assert_complete_outputs(tmp_path, err, signal.Signals(sig).name)


def test_signals_while_the_final_outputs_are_written(tmp_path: Path) -> None:
    """Both signals land in the writing at the end of a complete run: it completes anyway."""
    proc, marker = start(tmp_path, "slow_write", "--scheduler", "fcfs")
    try:
        wait_for(marker, proc)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=QUICK)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    # (on a loaded machine both may be pending at once: Python then handles SIGINT first)
    assert proc.returncode in (130, 143)
    assert_complete_outputs(tmp_path, err, "SIGTERM" if proc.returncode == 143 else "SIGINT")
    assert len((tmp_path / "out_jobs.csv").read_text().splitlines()) == 21


def test_sigint_while_loading_writes_nothing_and_says_so(tmp_path: Path) -> None:
    proc, marker = start(tmp_path, "slow_load", "--scheduler", "fcfs")
    try:
        wait_for(marker, proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=QUICK)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.returncode == 130
    assert err.strip() == ("batsim-py: interrupted by SIGINT: nothing was written (stopped "
                           "before the simulation)")
    assert not list(tmp_path.glob("out_*"))


def test_a_signal_after_the_last_line_does_not_change_the_exit(tmp_path: Path) -> None:
    proc, marker = start(tmp_path, "slow_load,slow_exit", "--scheduler", "fcfs")
    try:
        wait_for(marker, proc)
        proc.send_signal(signal.SIGTERM)
        wait_for(Path(str(marker) + ".done"), proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=QUICK)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.returncode == 143  # exited with 143, not killed by the second SIGTERM (-15)
    assert "interrupted by SIGTERM: nothing was written" in err
