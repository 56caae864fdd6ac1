"""Shared test fixtures: where the reference runs of real Batsim live (shipped in
tests/conformance/reference, whose compressed files are written out here, once)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conformance.corpus import prepare  # (tests/ is on sys.path: pytest's rootdir conftest)
from hypothesis import HealthCheck, settings

from batsim_py import native

# Byte-code caches on, for this process and every process the tests start (the CLI runs,
# the xdist workers, the docs' commands): an environment with PYTHONDONTWRITEBYTECODE set (as
# some containers are) made each of the suite's ~thousand Python processes compile batsim_py
# from its sources again, and pytest rewrite the test modules in every worker: tests/cli took
# 31-34 CPU-s so, 22-24 with the caches (__pycache__ folders are git-ignored).
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

PROJECT = Path(__file__).resolve().parents[1]
REFERENCE = prepare()  # PROJECT / "tests" / "conformance" / "reference"

# A tree without compiled modules (a checkout not installed, a failed build) runs the pure
# kernel, which every run would otherwise report on stderr (batsim_py/native.py): the tests,
# and the programs they start, take it as asked for. tests/test_native.py tests the notice.
if not native.compiled_modules():
    os.environ.setdefault("BATSIM_PY_PURE", "1")


@pytest.fixture
def reference_dir() -> Path:
    return REFERENCE


# -- running in parallel (pytest-xdist: `python -m pytest -n 2`, README's test command) --------
#
# Every test must be safe to run beside any other, in another process: files in tmp_path (or
# tmp_path_factory, one folder per worker), free ports (never a fixed one), no writes into the
# project's folders, session fixtures that build something per process (or under a file lock),
# and time bounds that hold when the other cores are busy (CPU time for cost bounds:
# time.process_time(); wall-clock bounds only against a timeout that is being ruled out).
# tests/cost_bounds.py holds the pattern of cost-ratio tests.
#
# Hypothesis: no per-example deadline and no "data generation too slow" health check by default
# (both are wall-clock bounds that the other worker's load can break; a test's own @settings
# keeps whatever else it sets, and overrides these only if it names them).
settings.register_profile("batsim-py", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("batsim-py")

HEAVY_FIRST = ("tests/sharing/test_family_oracle.py", "tests/sim/test_energy_oracle.py",
               "tests/sim/test_availability_traces.py", "tests/sharing/test_oracle.py",
               "tests/test_docs.py")
"""Modules whose tests are among the longest (SimGrid oracles, the docs pages)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, the longest tests go first: its work-stealing scheduler hands each worker a
    contiguous share and balances by taking tests from the end of a queue, so a long test left
    at the end would run alone while the other core idles. The order is the same in every
    worker (xdist requires it); a plain run keeps the files' order."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return

    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        if path in HEAVY_FIRST:
            return 0
        return 1 if item.get_closest_marker("slow") is not None else 2

    items.sort(key=rank)  # (stable: the files' order within each rank)
