"""Schedulers that misbehave over a real ZeroMQ socket on 127.0.0.1: a clear error, a non-zero
exit, outputs written; or, for a flood of decisions, a correct run.

Unless a test is about the flags themselves, batsim-py runs with its defaults (no
`--scheduler-timeout`, no `--scheduler-connect-timeout`): a dead or absent scheduler must be
found without them, in bounded time (every run here has a hard `timeout`).
"""

from __future__ import annotations

import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from batsim_py.cli import main

PROJECT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).with_name("fake_scheduler.py")
ARGS = ["-p", str(PROJECT / "platforms" / "small4.xml"),
        "-w", str(PROJECT / "workloads" / "delays_small.json")]
CLI = [sys.executable, "-m", "batsim_py.cli"]
# Seconds a detection "at once" may take: a Python start, imports and a small run on a loaded
# 2-core machine (tests run two at a time there: pytest -n 2), yet below the shortest timeout
# these tests rule out, the 30 s default connect timeout (the reply timeout is 600 s).
QUICK = 25


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(mode: str, tmp_path: Path, *extra: str, limit: float = 60) -> subprocess.CompletedProcess:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    sched = subprocess.Popen([sys.executable, str(FAKE), endpoint, mode])
    try:
        return run_cli(tmp_path, "-s", endpoint, *extra, limit=limit)
    finally:
        sched.kill()
        sched.wait()


def run_cli(tmp_path: Path, *extra: str, limit: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *ARGS, "-e", str(tmp_path / "out"), "-q", *extra],
                          capture_output=True, text=True, timeout=limit)


def error_line(result: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("batsim-py:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def assert_clean_failure(result: subprocess.CompletedProcess, tmp_path: Path, pattern: str):
    assert result.returncode == 1, result.stderr
    line = error_line(result)
    assert line.startswith("batsim-py: error: ") and pattern in line, result.stderr
    assert (tmp_path / "out_jobs.csv").read_text().startswith("job_id,")
    assert (tmp_path / "out_schedule.csv").exists()


def jobs_rows(tmp_path: Path) -> list[str]:
    return (tmp_path / "out_jobs.csv").read_text().splitlines()[1:]


def test_garbage_reply(tmp_path: Path) -> None:
    result = run("garbage", tmp_path)
    assert_clean_failure(result, tmp_path, "scheduler reply")


# -- a scheduler that goes away: found at once, without any timeout flag ------------------------

@pytest.mark.parametrize(("mode", "message"), [
    ("mute", 1),  # exits without answering anything
    ("once", 2),  # answers SIMULATION_BEGINS, then exits
    ("die", 2),  # exits instead of answering the 2nd message
])
def test_scheduler_that_exits_is_found_at_once(mode: str, message: int, tmp_path: Path) -> None:
    t0 = time.monotonic()
    result = run(mode, tmp_path, limit=QUICK)
    assert time.monotonic() - t0 < QUICK
    assert_clean_failure(result, tmp_path, "went away (connection lost)")
    assert f"message {message}" in error_line(result) or (
        mode == "once" and "after answering message 1" in error_line(result))


def test_scheduler_killed_mid_run_is_found_at_once(tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    marker = tmp_path / "waiting"
    sched = subprocess.Popen([sys.executable, str(FAKE), endpoint, "silent", str(marker)])
    proc = subprocess.Popen([*CLI, *ARGS, "-s", endpoint, "-e", str(tmp_path / "out"), "-q"],
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for(marker)
        sched.send_signal(signal.SIGKILL)
        sched.wait()
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=QUICK)
        assert time.monotonic() - t0 < QUICK
    finally:
        stop(proc, sched)
    result = subprocess.CompletedProcess(proc.args, proc.returncode, "", err)
    assert_clean_failure(result, tmp_path, "went away (connection lost) while batsim-py waited "
                                           "for the reply to message 2")


def test_silent_on_simulation_ends_keeps_the_results(tmp_path: Path) -> None:
    """The outputs are complete before SIMULATION_ENDS is even sent; a signal then reports them."""
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    sched = subprocess.Popen([sys.executable, str(FAKE), endpoint, "silent_end"])
    proc = subprocess.Popen([*CLI, *ARGS, "-s", endpoint, "-e", str(tmp_path / "out"), "-q"],
                            stderr=subprocess.PIPE, text=True)
    try:
        schedule = tmp_path / "out_schedule.csv"
        wait_for(schedule)
        assert proc.poll() is None  # still waiting for the acknowledgement
        assert len(jobs_rows(tmp_path)) == 20
        assert len(schedule.read_text().splitlines()) == 2
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=QUICK)
    finally:
        stop(proc, sched)
    assert proc.returncode == 143
    assert "Traceback" not in err
    assert f"interrupted by SIGTERM: outputs written: {tmp_path / 'out_jobs.csv'}" in err
    assert len(jobs_rows(tmp_path)) == 20


def test_silent_on_simulation_ends_with_a_timeout(tmp_path: Path) -> None:
    result = run("silent_end", tmp_path, "--scheduler-timeout", "1", limit=QUICK)
    assert_clean_failure(result, tmp_path, "did not answer message ")
    assert "(SIMULATION_ENDS)" in error_line(result)
    assert "the simulation was complete and its outputs are written" in error_line(result)
    assert len(jobs_rows(tmp_path)) == 20


def test_silent_scheduler_with_a_timeout(tmp_path: Path) -> None:
    result = run("silent", tmp_path, "--scheduler-timeout", "1")
    assert_clean_failure(result, tmp_path, "did not answer message 2 within 1 s")


@pytest.mark.slow
def test_silent_scheduler_default_says_what_it_waits_for(tmp_path: Path) -> None:
    """A connected scheduler may think (600 s by default): batsim-py says so after 10 s."""
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    sched = subprocess.Popen([sys.executable, str(FAKE), endpoint, "silent"])
    proc = subprocess.Popen([*CLI, *ARGS, "-s", endpoint, "-e", str(tmp_path / "out")],
                            stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 40
        while not any("still waiting" in line for line in lines):
            assert time.monotonic() < deadline, "".join(lines)
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        proc.wait(QUICK)
        reader.join(QUICK)
    finally:
        stop(proc, sched)
    text = "".join(lines)
    assert f"still waiting for the scheduler at '{endpoint}' to answer message 2; giving up " \
           "after 600 s (--scheduler-timeout)" in text
    assert proc.returncode == 130 and "interrupted by SIGINT: outputs written" in text


# -- a scheduler that is not there -----------------------------------------------------------------

@pytest.mark.slow
def test_nothing_listening_gives_up_after_the_default(tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    result = run_cli(tmp_path, "-s", endpoint, limit=90)
    assert 29 < time.monotonic() - t0 < 90
    assert_clean_failure(result, tmp_path, f"no scheduler at '{endpoint}': nothing accepted "
                                           "the connection within 30 s")


def test_nothing_listening_connect_timeout(tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    result = run_cli(tmp_path, "-s", endpoint, "--scheduler-connect-timeout", "0.5", limit=QUICK)
    assert_clean_failure(result, tmp_path, "nothing accepted the connection within 0.5 s")


def test_unresolvable_host_at_once(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "-s", "tcp://no-such-host.invalid:28000", limit=QUICK)
    assert result.returncode == 1
    assert "cannot resolve the host 'no-such-host.invalid'" in error_line(result)


def test_ipc_socket_in_a_missing_folder_at_once(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "-s", f"ipc://{tmp_path}/no/such/sock", limit=QUICK)
    assert result.returncode == 1
    assert f"the folder '{tmp_path}/no/such' does not exist" in error_line(result)


def test_not_a_zeromq_peer(tmp_path: Path) -> None:
    """Something listens, but speaks another protocol: the handshake fails, no hang."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    def answer() -> None:
        conn, _ = server.accept()
        conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n" * 4)
        time.sleep(1)
        conn.close()

    threading.Thread(target=answer, daemon=True).start()
    try:
        result = run_cli(tmp_path, "-s", f"tcp://127.0.0.1:{port}", limit=QUICK)
    finally:
        server.close()
    assert result.returncode == 1
    assert f"something listens at 'tcp://127.0.0.1:{port}' but it is not a ZeroMQ scheduler" \
        in error_line(result)


# -- --scheduler-command ---------------------------------------------------------------------------

def command(*words: str) -> str:
    return shlex.join([sys.executable, *words])


def test_scheduler_command_runs_the_scheduler(tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    result = run_cli(tmp_path, "-s", endpoint,
                     "--scheduler-command", command(str(FAKE), endpoint, "reject"), limit=60)
    assert result.returncode == 0, result.stderr
    assert len(jobs_rows(tmp_path)) == 20


def test_scheduler_command_exit_is_seen_at_once(tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    result = run_cli(tmp_path, "-s", endpoint, "--scheduler-command",
                     command("-c", "import sys; sys.exit(3)"), limit=QUICK)
    assert time.monotonic() - t0 < QUICK  # not the 30 s connect timeout
    assert_clean_failure(result, tmp_path, "exited with code 3 before accepting the connection")


def test_scheduler_command_death_mid_run(tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    result = run_cli(tmp_path, "-s", endpoint,
                     "--scheduler-command", command(str(FAKE), endpoint, "die"), limit=QUICK)
    assert_clean_failure(result, tmp_path, "message 2")
    assert "exited with code 3" in error_line(result)


def test_scheduler_command_is_stopped_after_an_error(tmp_path: Path) -> None:
    """A scheduler still running when the run fails is stopped (no orphan left)."""
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    pidfile = tmp_path / "pid"
    script = (f"import os, sys; open({str(pidfile)!r}, 'w').write(str(os.getpid())); "
              f"sys.argv = ['f', {endpoint!r}, 'garbage']; exec(open({str(FAKE)!r}).read())")
    result = run_cli(tmp_path, "-s", endpoint, "--scheduler-command", command("-c", script),
                     limit=QUICK)
    assert_clean_failure(result, tmp_path, "scheduler reply")
    assert gone(int(pidfile.read_text()))


def gone(pid: int) -> bool:
    """The process exited (a zombie counts: this sandbox's PID 1 may not reap orphans)."""
    status = Path(f"/proc/{pid}/status")
    try:
        return "zombie" in status.read_text()
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_scheduler_command_does_not_outlive_a_killed_batsim_py(tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    pidfile, marker = tmp_path / "pid", tmp_path / "waiting"
    script = (f"import os, sys; open({str(pidfile)!r}, 'w').write(str(os.getpid())); "
              f"sys.argv = ['f', {endpoint!r}, 'silent', {str(marker)!r}]; "
              f"exec(open({str(FAKE)!r}).read())")
    proc = subprocess.Popen([*CLI, *ARGS, "-s", endpoint, "-e", str(tmp_path / "out"), "-q",
                             "--scheduler-command", command("-c", script)])
    try:
        wait_for(marker)
        proc.kill()  # SIGKILL: batsim-py cannot stop the scheduler itself
        proc.wait()
        pid = int(pidfile.read_text())
        deadline = time.monotonic() + QUICK
        while not gone(pid):
            assert time.monotonic() < deadline, "the scheduler outlived batsim-py"
            time.sleep(0.05)
    finally:
        stop(proc)


# -- flags ------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["nan", "-1", "0"])
@pytest.mark.parametrize("flag", ["--scheduler-timeout", "--scheduler-connect-timeout"])
def test_timeouts_are_validated(flag: str, value: str, tmp_path: Path, capsys) -> None:
    rc = main([*ARGS, "-e", str(tmp_path / "out"), "-q", "-s", "tcp://127.0.0.1:9", flag, value])
    assert rc == 1
    err = capsys.readouterr().err
    assert err.startswith(f"batsim-py: error: {flag} must be a positive number of seconds "
                          "(or inf: wait forever), not "), err
    assert not (tmp_path / "out_jobs.csv").exists()


def test_infinite_timeout_is_accepted(tmp_path: Path) -> None:
    result = run("reject", tmp_path, "--scheduler-timeout", "inf",
                 "--scheduler-connect-timeout", "inf")
    assert result.returncode == 0, result.stderr
    assert len(jobs_rows(tmp_path)) == 20


def test_flood_of_decisions_is_a_correct_run(tmp_path: Path) -> None:
    result = run("flood", tmp_path)
    assert result.returncode == 0, result.stderr
    rows = jobs_rows(tmp_path)
    assert len(rows) == 20 and all(",REJECTED," in r for r in rows)


# -- signals ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signals_stop_cleanly_with_outputs(sig: int, code: int, tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    marker = tmp_path / "waiting"  # the scheduler got a request: the simulation runs
    sched = subprocess.Popen([sys.executable, str(FAKE), endpoint, "silent", str(marker)])
    proc = subprocess.Popen([*CLI, *ARGS, "-s", endpoint, "-e", str(tmp_path / "out"), "-q"],
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for(marker)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        stop(proc, sched)
    assert proc.returncode == code
    assert "Traceback" not in err
    name = signal.Signals(sig).name
    written = ", ".join(str(tmp_path / f"out_{s}") for s in (
        "jobs.csv", "schedule.csv", "schedule.trace", "machine_states.csv"))
    assert err.strip() == f"batsim-py: interrupted by {name}: outputs written: {written}"
    assert (tmp_path / "out_jobs.csv").exists()


def wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds  # (a loaded machine can take seconds to start)
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def stop(*procs: subprocess.Popen) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()
