"""Random small cases run by the real Batsim 4.2.1 (tests/conformance/oracle/README.md says how),
reproduced by batsim-py: with the in-process equivalent of the case's pybatsim scheduler, and
with that pybatsim scheduler itself, unchanged, in-process (where pybatsim is installed).

They widen the round-1 corpus (tests/conformance/reference) over what random inputs reach:
mixed profile types (delay, parallel, parallel_homogeneous(_total), composed) with walltimes
hit or not, submission ties, fractional dates, string and integer ids, three platforms (with
and without a network), `--mmax-workload`, `--energy`. Every column of jobs.csv and schedule.csv
(but the two wall-clock ones and batsim_version) and every row of machine_states.csv (and the
energy files) must be Batsim's.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from batsim_py.decision.inprocess import InProcess
from batsim_py.decision.pybatsim_peer import PybatsimPeer
from batsim_py.output.compare import compare
from batsim_py.run import run_simulation
from batsim_py.schedulers import get_scheduler

from .cases import case_json, case_run_spec
from .test_reference_cases import PYBATSIM_EQUIVALENT

ORACLE = Path(__file__).resolve().parent / "oracle"
CASES = sorted(p.parent.name for p in ORACLE.glob("*/case.json"))


def test_the_oracle_corpus_is_there() -> None:
    assert len(CASES) == 20, f"{ORACLE}: expected 20 cases, found {len(CASES)}"


def _check(case: str, tmp_path: Path, decision: object) -> None:
    prefix = tmp_path / "out"
    run_simulation(case_run_spec(case, str(prefix), root=ORACLE), decision)
    result = compare(str(ORACLE / case / "expected" / "out"), str(prefix))
    assert result.ok, result.table()


@pytest.mark.parametrize("case", CASES)
def test_oracle_case(case: str, tmp_path: Path) -> None:
    name = PYBATSIM_EQUIVALENT[case_json(case, ORACLE)["scheduler"]["name"]]
    _check(case, tmp_path, InProcess(get_scheduler(name)))


@pytest.mark.skipif(importlib.util.find_spec("batsim") is None,
                    reason="pybatsim 3.2.1 is not installed (pip install --no-deps pybatsim==3.2.1 "
                    "procset sortedcontainers docopt)")
@pytest.mark.parametrize("case", CASES)
def test_oracle_case_with_pybatsim(case: str, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # (pybatsim's scheduling layer writes out_events.csv here)
    scheduler = case_json(case, ORACLE)["scheduler"]
    _check(case, tmp_path, PybatsimPeer(scheduler["name"], scheduler["options"]))
