"""Strict replay of the reference transcripts: every message batsim-py sends must be the one
real Batsim sent (SIMULATION_BEGINS compared as JSON, see `decision.transcript`), and the
outputs must equal Batsim's.

Cases whose scheduler we cannot run (batsched, custom) are covered this way too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from batsim_py.decision.transcript import ReplayPeer
from batsim_py.output.compare import compare
from batsim_py.run import run_simulation
from conformance.cases import case_run_spec

REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "conformance" / "reference"

# Every reference transcript.
CASES = [
    "a_delays_fcfs_small",
    "a2_paper800_fcfs_cluster32",
    "b_delays_easy_small",
    "b2_paper800_easy_cluster32",
    "b3_paper800_easysjf_cluster32",
    "b4_hpc250_easy_nonet128",
    "b5_paper800_batsched_easy_cluster32",
    "c1_mixed_profiles_easy_small",
    "c2_mixed_profiles_fcfs_small",
    "c3_long_workload_fcfs_small",
    "c4_sequence_delay_fcfs_small",
    "c5_ptask_cluster32_easy",
    "e1_walltime_easy_cluster64",
    "e2_kill_batsched_killer_seq_small",
    "e3_kill_batsched_killer2_delays_small",
    "e4_kill_pybatsim_fcfsKiller_seq_small",
    "e5_reject_batsched_rejecter_small",
    "g1_dynsubmit_batsched_submitter_small",
    "d1_energy_sleep_fcfs_mercury4",
    "d2_energy_easy_nonet128",
    "d3_energy_batsched_sleeper_nonet128",
    "d4_energy_batsched_energybf_nonet128",
    "d5_energy_ptask_clusterenergy128_easy",
    "d6_energy_batsched_energywatcher_nonet128",
    "g2_extevents_batsched_filler_small",
]


@pytest.mark.parametrize("case", CASES)
def test_strict_replay(case: str, tmp_path: Path) -> None:
    folder = REFERENCE / case
    peer = ReplayPeer(str(folder / "transcript.jsonl"), strict=True)
    run_simulation(case_run_spec(case, str(tmp_path / "out")), peer)
    assert peer.k == len(peer.replies)  # every recorded exchange was replayed
    assert peer.nb_identical == len(peer.requests)
    result = compare(str(folder / "expected" / "out"), str(tmp_path / "out"))
    assert result.ok, result.table()
