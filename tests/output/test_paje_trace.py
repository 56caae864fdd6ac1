"""PREFIX_schedule.trace, Batsim's Pajé trace: its format (Batsim's src/export.cpp format
strings, written out here by hand) and its events, checked against the job times real Batsim
printed in the reference runs' out_jobs.csv."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from batsim_py.output.paje import PajeTrace, job_colors

# The header as PajeTracer::initialize's format strings print it ("|" marks a line that ends
# with spaces).
HEADER = """%EventDef PajeDefineContainerType 1
% Type string
% Alias string
% Name string
%EndEventDef

%EventDef PajeCreateContainer 2
% Time date |
% Type string  |
% Alias string |
% Name string   |
% Container string  |
%EndEventDef

%EventDef PajeDestroyContainer 3
% Time date
% Name string |
% Type string
%EndEventDef

%EventDef PajeDefineStateType 4
% Alias string |
% Type string |
% Name string |
%EndEventDef

%EventDef PajeDefineEntityValue 5
% Alias string  |
% Type string  |
% Name string  |
% Color color |
%EndEventDef

%EventDef PajeSetState 6
% Time date  |
% Type string  |
% Container string  |
% Value string  |
%EndEventDef |

%EventDef PajeDefineEventType 7
% Type string
% Alias string
% Name string
%EndEventDef

%EventDef PajeNewEvent 8
% Time date
% Type string
% Container string
% Value string
%EndEventDef

%EventDef PajeDefineVariableType 9
% Type string
% Alias string
% Name string
% Color string
%EndEventDef

%EventDef PajeSetVariable 10
% Time date
% Type string
% Container string
% Value double
%EndEventDef

# Container types creation
1 0 root_ct "Machines"
1 root_ct machine_ct "Machine"
1 0 scheduler_ct "Scheduler"
1 scheduler_ct killer_ct "Killer"

# Event types creation
7 killer_ct kk "Job kill"
7 machine_ct km "Job kill"

# Variable types creation
9 scheduler_ct vu_vt "Utilization" "0.0 0.5 0.0"

# Containers creation
2 0.000000 root_ct root "Machines" 0
""".replace("|\n", "\n")

SMALL_MACHINES = """2 0.000000 machine_ct m0 "Bourassa" root
2 0.000000 machine_ct m1 "Fafard" root
2 0.000000 machine_ct m2 "Ginette" root
2 0.000000 machine_ct m3 "Jupiter" root
2 0.000000 scheduler_ct sc "Scheduler" 0
2 0.000000 killer_ct k "Killer" sc

# States creation
4 machine_state machine_ct "Machine state"

# Creation of the different values the machine state can be
5 w machine_state "Waiting" "0.0 0.0 0.0"
5 l machine_state "Launching" "0.3 0.3 0.3"

# Begin of events
6 0.000000 machine_state m0 w
6 0.000000 machine_state m1 w
6 0.000000 machine_state m2 w
6 0.000000 machine_state m3 w
"""

CASES = ["a_delays_fcfs_small", "c1_mixed_profiles_easy_small",
         "e4_kill_pybatsim_fcfsKiller_seq_small", "e2_kill_batsched_killer_seq_small",
         "c5_ptask_cluster32_easy"]


def replay(folder: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    spec = json.loads((folder / "case.json").read_text())
    cmd = [sys.executable, "-m", "batsim_py.cli", "-p", str(folder / spec["platform"]),
           *[a for w in spec["workloads"] for a in ("-w", str(folder / w))],
           *spec["batsim_args"], "--scheduler", f"replay:{folder / 'transcript.jsonl'}",
           "-e", str(out / "out"), "-q", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def parse_events(text: str) -> list[list[str]]:
    body = text.split("# Begin of events\n", 1)[1].split("\n# End of events", 1)[0]
    return [line.split(" ", 4) for line in body.splitlines() if line]


@pytest.mark.parametrize("case", CASES)
def test_trace_events_match_batsim_job_times(reference_dir: Path, tmp_path: Path,
                                              case: str) -> None:
    folder = reference_dir / case
    res = replay(folder, tmp_path)
    assert res.returncode == 0, res.stderr
    text = (tmp_path / "out_schedule.trace").read_text()
    assert text.startswith(HEADER)
    if "small" in case:
        assert text[len(HEADER):].startswith(SMALL_MACHINES)
    events = parse_events(text)
    with open(folder / "expected" / "out_jobs.csv") as f:
        jobs = [row for row in csv.DictReader(f) if row["allocated_resources"]]
    for row in jobs:
        job = f"{row['workload_name']}!{row['job_id']}"
        machines = []
        for part in row["allocated_resources"].split(" "):
            lo, _, hi = part.partition("-")
            machines += range(int(lo), int(hi or lo) + 1)
        start, end = float(row["starting_time"]), float(row["finish_time"])
        runs = [(float(e[1]), int(e[3][1:])) for e in events
                if e[0] == "6" and e[4] == f"j{job}"]
        assert runs == [(pytest.approx(start, abs=1e-6), m) for m in machines], job
        kills = [e for e in events if e[0] == "8" and e[4] == f'"{job}"']
        if row["final_state"] == "COMPLETED_WALLTIME_REACHED":
            assert [(e[2], e[3]) for e in kills] == [("kk", "k")] + [
                ("km", f"m{m}") for m in machines]
            assert float(kills[0][1]) == pytest.approx(end, abs=1e-6)
        waits = [float(e[1]) for e in events if e[0] == "6" and e[4] == "w"
                 and int(e[3][1:]) in machines and float(e[1]) >= start - 1e-6]
        assert waits and waits[0] == pytest.approx(end, abs=1e-6), job
    # Each job's state value is defined once, before its first use, with the next colour.
    defs = [e for e in events if e[0] == "5"]
    colors = job_colors()
    assert [e[4] for e in defs] == [colors[i % 64] for i in range(len(defs))]
    assert len({e[1] for e in defs}) == len(defs) == len(jobs)


def test_disable_schedule_tracing(reference_dir: Path, tmp_path: Path) -> None:
    res = replay(reference_dir / "a_delays_fcfs_small", tmp_path, "--disable-schedule-tracing")
    assert res.returncode == 0, res.stderr
    assert not (tmp_path / "out_schedule.trace").exists()
    assert (tmp_path / "out_jobs.csv").exists()


def test_trace_is_deterministic(reference_dir: Path, tmp_path: Path) -> None:
    for sub in ("x", "y"):
        (tmp_path / sub).mkdir()
        assert replay(reference_dir / "c1_mixed_profiles_easy_small",
                      tmp_path / sub).returncode == 0
    assert ((tmp_path / "x" / "out_schedule.trace").read_bytes()
            == (tmp_path / "y" / "out_schedule.trace").read_bytes())


def test_palette_is_batsims() -> None:
    """64 fully saturated hues, 5.625 degrees apart (PajeTracer::generate_colors)."""
    colors = sorted(job_colors())
    assert len(set(colors)) == 64
    assert '"1.000000 0.000000 0.000000"' in colors  # hue 0
    assert '"0.000000 1.000000 1.000000"' in colors  # hue 180
    assert '"1.000000 0.093750 0.000000"' in colors  # hue 5.625


def test_compute_sharing_shows_the_job_started_first() -> None:
    """A on machine 0, then B on 0-1 (sharing 0): machine 0 keeps showing A, then B once A
    ends; an unavailable machine writes nothing when its last job ends."""
    trace = PajeTrace(["h0", "h1"])
    trace.job_starts("w0!A", (0,), 1.0)
    trace.job_starts("w0!B", (0, 1), 2.0)
    trace.job_ends("w0!A", (0,), 3.0)
    trace.job_killed("w0!B", (0, 1), 4.0)
    trace.job_ends("w0!B", (0, 1), 4.0, unavailable={1})
    events = [" ".join(e) for e in parse_events("".join(trace.chunks(5.0)))]
    colors = job_colors()
    assert events[2:] == [
        f'5 jw0!A machine_state "w0!A" {colors[0]}',
        "6 1.000000 machine_state m0 jw0!A",
        f'5 jw0!B machine_state "w0!B" {colors[1]}',
        "6 2.000000 machine_state m1 jw0!B",
        "6 3.000000 machine_state m0 jw0!B",
        '8 4.000000 kk k "w0!B"', '8 4.000000 km m0 "w0!B"', '8 4.000000 km m1 "w0!B"',
        "6 4.000000 machine_state m0 w",
    ]
