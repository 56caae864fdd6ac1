"""The real pybatsim of 2017 (protocol version 3 over ZeroMQ, jobs from Redis) drives batsim-py.

pybatsim's `easyBackfill` of April 2017 (jankopanski/pybatsim@2770daf, the Python-3 clean
ZeroMQ-era version, seed-systems §1.9) is not shipped with batsim-py: give its checkout in
BATSIM_PY_PYBATSIM2017 (`git clone https://github.com/jankopanski/pybatsim; git -C pybatsim
checkout 2770daf`) to run this test. Its decisions over the legacy protocol give the same
outputs as batsim-py's in-process `easy` (pybatsim 3.2.1's easyBackfill) over none.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from legacy_harness import PLATFORMS, WORKLOADS, free_port

from batsim_py.cli import main
from batsim_py.output.compare import compare

CHECKOUT = os.environ.get("BATSIM_PY_PYBATSIM2017", "")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (CHECKOUT and Path(CHECKOUT, "launcher.py").exists()),
                       reason="set BATSIM_PY_PYBATSIM2017 to a checkout of "
                       "jankopanski/pybatsim@2770daf (see this file's docstring)"),
    pytest.mark.skipif(shutil.which("redis-server") is None,
                       reason="redis-server is not installed"),
]


@pytest.mark.parametrize("platform,workload", [("small4.xml", "delays_small.json"),
                                               ("cluster128.xml", "gen_delay_1k_128.json")])
def test_pybatsim_2017_easy_backfill(tmp_path: Path, platform: str, workload: str) -> None:
    from batsim_py.decision.redis_store import RedisServer

    server = RedisServer()
    try:
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        command = (f"{sys.executable} {CHECKOUT}/launcher.py easyBackfill -s {endpoint} "
                   f"--redis-port {server.port}")
        legacy = str(tmp_path / "pybatsim2017")
        rc = main(["-p", str(PLATFORMS / platform), "-w", str(WORKLOADS / workload), "-q",
                   "--legacy-protocol", "3", "-s", f"zmq:{endpoint}", "--enable-redis",
                   "--redis-port", str(server.port), "-e", legacy,
                   "--scheduler-command", command])
    finally:
        server.stop()
    assert rc == 0
    inprocess = str(tmp_path / "easy")
    assert main(["-p", str(PLATFORMS / platform), "-w", str(WORKLOADS / workload), "-q",
                 "--scheduler", "easy", "-e", inprocess]) == 0
    assert compare(legacy, inprocess).differences == []
