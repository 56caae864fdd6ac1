"""The shipped legacy FCFS (batsim_py.legacy_client.fcfs, over a Unix socket) gives the same
outputs as the in-process `fcfs` of the JSON mode: jobs.csv byte for byte, every other output
file but the wall-clock columns of schedule.csv (`batsim-py compare`), energy included."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from legacy_harness import PLATFORMS, WORKLOADS

from batsim_py.cli import main
from batsim_py.legacy_client.fcfs import Fcfs
from batsim_py.legacy_client.network import run_scheduler
from batsim_py.output.compare import compare


def legacy_run(tmp_path: Path, platform: str, workload: str, version: int,
               extra: list[str]) -> Path:
    sock = str(tmp_path / "bat_socket")
    client = ["-s", f"unix:{sock}", "--version", str(version), "-w", str(WORKLOADS / workload)]
    if "-E" in extra:
        client += ["--nb-res", "8"]  # energy8 has 8 machines, the workload says 4
    errors: list[BaseException] = []

    def scheduler() -> None:
        try:
            run_scheduler(Fcfs(), client)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=scheduler, daemon=True)
    thread.start()
    if version == 0:  # the scheduler listens: let it bind first
        import os
        import time

        for _ in range(300):
            if os.path.exists(sock):
                break
            time.sleep(0.01)
    prefix = tmp_path / f"legacy{version}"
    rc = main(["-p", str(PLATFORMS / platform), "-w", str(WORKLOADS / workload), "-q",
               "--legacy-protocol", str(version), "-s", f"unix:{sock}", "-e", str(prefix),
               "--scheduler-connect-timeout", "20", "--scheduler-timeout", "20", *extra])
    thread.join(20)
    assert rc == 0 and not errors and not thread.is_alive(), errors
    return prefix


def json_run(tmp_path: Path, platform: str, workload: str, extra: list[str]) -> Path:
    prefix = tmp_path / "inprocess"
    rc = main(["-p", str(PLATFORMS / platform), "-w", str(WORKLOADS / workload), "-q",
               "--scheduler", "fcfs", "-e", str(prefix), *extra])
    assert rc == 0
    return prefix


@pytest.mark.parametrize("platform,workload,extra", [
    ("small4.xml", "delays_small.json", []),  # delay profiles
    ("small4.xml", "mixed_small.json", []),  # composed profiles, walltimes
    ("small4.xml", "parallel_small.json", []),  # ptasks (parallel, homogeneous, total)
    ("energy8.xml", "delays_small.json", ["-E"]),  # energy outputs
])
def test_legacy_fcfs_equals_inprocess_fcfs(tmp_path: Path, platform: str, workload: str,
                                           extra: list[str]) -> None:
    legacy = legacy_run(tmp_path, platform, workload, 1, extra)
    inprocess = json_run(tmp_path, platform, workload, extra)
    assert compare(str(legacy), str(inprocess)).differences == []
    assert Path(f"{legacy}_jobs.csv").read_bytes() == Path(f"{inprocess}_jobs.csv").read_bytes()
    if extra:
        energy = Path(f"{legacy}_consumed_energy.csv").read_text()
        assert energy == Path(f"{inprocess}_consumed_energy.csv").read_text()
        assert len(energy.splitlines()) > 2


@pytest.mark.parametrize("version", [0, 2, 3])
def test_every_version_gives_the_same_run(tmp_path: Path, version: int) -> None:
    legacy = legacy_run(tmp_path, "small4.xml", "delays_small.json", version, [])
    inprocess = json_run(tmp_path, "small4.xml", "delays_small.json", [])
    assert compare(str(legacy), str(inprocess)).differences == []


def test_version_3_over_zeromq(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a free port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    endpoint = f"zmq:tcp://127.0.0.1:{port}"
    errors: list[BaseException] = []

    def scheduler() -> None:
        try:
            run_scheduler(Fcfs(), ["-s", endpoint, "--version", "3",
                                   "-w", str(WORKLOADS / "mixed_small.json")])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=scheduler, daemon=True)
    thread.start()
    prefix = tmp_path / "zmq"
    rc = main(["-p", str(PLATFORMS / "small4.xml"), "-w", str(WORKLOADS / "mixed_small.json"),
               "-q", "--legacy-protocol", "3", "-s", endpoint, "-e", str(prefix),
               "--scheduler-connect-timeout", "20", "--scheduler-timeout", "20"])
    thread.join(20)
    assert rc == 0 and not errors and not thread.is_alive(), errors
    inprocess = json_run(tmp_path, "small4.xml", "mixed_small.json", [])
    assert compare(str(prefix), str(inprocess)).differences == []
