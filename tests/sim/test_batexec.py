"""`--no-sched` (sim/batexec.py): the launch order Batsim's unordered_map gives, and the CLI.

The expected hashes and orders were printed by g++ 12's libstdc++ (`std::hash<std::string>`,
and iterating a `std::unordered_map<std::string, int>` filled in the order given), the library
the reference Batsim 4.2.1 was built with; the c1 order is also the order in which that Batsim
created the job executors (its log numbers them) in a --no-sched run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batsim_py.cli import main
from batsim_py.sim.batexec import stl_hash, stl_order

PROJECT = Path(__file__).resolve().parents[2]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")

GXX_HASHES = {
    "": 6142509188972423790,
    "a": 4993892634952068459,
    "abcdefgh": 8664279048047335611,  # one whole 8-byte block
    "abcdefghi": 13036955925923793583,  # a block and a tail
    "w0!delay": 11682886952037806450,
    "w1!1": 11829943063127866612,
    "w0!4_resources": 10034568163660758875,
}


@pytest.mark.parametrize("text", sorted(GXX_HASHES))
def test_hash_is_libstdcxx(text: str) -> None:
    assert stl_hash(text) == GXX_HASHES[text]


def test_order_of_the_c1_workload() -> None:
    ids = ["w0!delay", "w0!simple", "w0!reach_walltime", "w0!homo", "w0!homo_no_cpu",
           "w0!homo_no_com", "w0!seq", "w0!2_resources", "w0!4_resources"]
    assert stl_order(ids) == [
        "w0!4_resources", "w0!2_resources", "w0!seq", "w0!homo_no_cpu", "w0!reach_walltime",
        "w0!homo", "w0!simple", "w0!homo_no_com", "w0!delay"]


def test_order_across_rehashes() -> None:
    """40 keys: the map grows from 13 to 29 to 59 buckets on the way."""
    got = stl_order(f"w0!{i}" for i in range(40))
    assert got == [f"w0!{i}" for i in (
        39, 38, 32, 31, 30, 9, 8, 1, 6, 4, 36, 2, 11, 7, 14, 26, 27, 33, 5, 35, 16, 20, 3, 34,
        12, 0, 29, 13, 17, 10, 21, 15, 23, 18, 19, 22, 37, 24, 25, 28)]


def test_help_lists_no_sched_as_supported(capsys) -> None:
    main(["--help"])
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, x in enumerate(lines) if x.strip().startswith("--no-sched"))
    assert "batexec" in lines[at]
    assert "not yet supported" not in " ".join(lines[at:at + 3])


def test_execution_context_has_no_external_scheduler(capsys) -> None:
    assert main(["--dump-execution-context", "--no-sched"]) == 0
    assert json.loads(capsys.readouterr().out)["external_scheduler"] is False


def test_a_run_from_the_command_line(tmp_path: Path) -> None:
    """Two delay jobs, both started at 0 on machine 0 (a 1-machine and a 2-machine job): the
    machine-state rows and schedule figures the real Batsim 4.2.1 printed for this input
    (b is launched first: "w0!b" comes before "w0!a" in its unordered_map), no job row."""
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 5}},
                             "jobs": [{"id": "a", "subtime": 3, "res": 1, "profile": "d"},
                                      {"id": "b", "subtime": 9, "res": 2, "profile": "d",
                                       "walltime": 2}]}))
    prefix = str(tmp_path / "out")
    assert main(["-p", SMALL4, "-w", str(w), "-e", prefix, "-q", "--no-sched"]) == 0
    assert (tmp_path / "out_jobs.csv").read_text().count("\n") == 1
    rows = (tmp_path / "out_machine_states.csv").read_text().splitlines()[1:]
    assert rows == ["0,0,0,0,2,2", "0,0,0,0,2,2", "2,0,0,0,3,1", "5,0,0,0,4,0"]
    head, row = (tmp_path / "out_schedule.csv").read_text().splitlines()
    figures = dict(zip(head.split(","), row.split(","), strict=True))
    assert figures["time_computing"] == "7.000000"  # 2 machines x 2 s + 1 machine x 5 s
    assert figures["nb_jobs"] == "0" and figures["success_rate"] == "-nan"
