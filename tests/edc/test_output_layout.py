"""`--output-layout v5` (Batsim 5.0.0-rc2's export code) and the record of
`--lift-v5-restrictions` in the outputs."""

from __future__ import annotations

import json
import subprocess
import sys

from edc.helpers import PROJECT


def _cli(*args):
    done = subprocess.run([sys.executable, "-m", "batsim_py.cli", *args], cwd=PROJECT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_v5_layout_files_and_contents(tmp_path):
    common = ["-p", "platforms/small4.xml", "-w", "workloads/delays_small.json", "-q", "-l",
              "batsim_py.edcs.fcfs", "{}"]
    _cli(*common, "-e", str(tmp_path / "v4"))
    _cli(*common, "--output-layout", "v5", "-e", str(tmp_path / "v5") + "/")
    assert sorted(p.name for p in (tmp_path / "v5").iterdir()) == [
        "jobs.csv", "machine_states.csv", "real_exec_info.json", "schedule.json"]
    v4_rows = (tmp_path / "v4_jobs.csv").read_text().splitlines()
    v5_rows = (tmp_path / "v5" / "jobs.csv").read_text().splitlines()
    assert v5_rows[0] == v4_rows[0]  # same columns
    # the same rows, but Batsim 5 leaves metadata empty instead of ""
    assert [r.removesuffix(',""') for r in v4_rows[1:]] == [r[:-1] for r in v5_rows[1:]]
    schedule = json.loads((tmp_path / "v5" / "schedule.json").read_text())
    text = (tmp_path / "v5" / "schedule.json").read_text()
    assert list(schedule) == sorted(schedule)  # a std::map: sorted keys
    assert "scheduling_time" not in schedule and "simulation_time" not in schedule
    assert '"makespan": 461.000450,' in text  # %f, last completion - first submission (0)
    assert schedule["nb_jobs"] == 20 and schedule["batsim_version"].startswith("batsim-py")
    info = json.loads((tmp_path / "v5" / "real_exec_info.json").read_text())
    assert set(info) == {"memory_VmHWM_kB", "memory_VmPeak_kB", "time_in_edc_seconds",
                         "time_in_simu_seconds"}


def test_v5_makespan_starts_at_the_first_submission(tmp_path):
    """Batsim 5: makespan = last completion - first submission (Batsim 4: last completion)."""
    workload = tmp_path / "late.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 0, "subtime": 100, "res": 1, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 10}}}))
    _cli("-p", "platforms/small4.xml", "-w", str(workload), "-q", "-l", "batsim_py.edcs.fcfs",
         "{}", "--output-layout", "v5", "-e", str(tmp_path / "o") + "/")
    schedule = json.loads((tmp_path / "o" / "schedule.json").read_text())
    assert 10.0 <= schedule["makespan"] < 10.001


def test_lifted_restrictions_are_recorded_in_the_outputs(tmp_path):
    _cli("-p", "platforms/small4.xml", "-w", "workloads/delays_small.json", "-q", "-l",
         "batsim_py.edcs.fcfs", "{}", "--lift-v5-restrictions", "-e", str(tmp_path / "o"))
    header, row = (tmp_path / "o_schedule.csv").read_text().splitlines()
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert values["batsim_version"].endswith("+lift-v5-restrictions")
