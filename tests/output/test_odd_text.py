"""Ids and names holding odd text (issue 12 item 4): jobs.csv stays valid CSV (RFC 4180 quoting;
Batsim writes them raw and corrupts its file), `compare` reads them back, a lone surrogate is
refused where it is read, and no id reaches the terminal raw."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from batsim_py.errors import ProtocolError, WorkloadError
from batsim_py.output.compare import _read
from batsim_py.protocol.codec import decode_reply
from batsim_py.workload.events import load_events
from batsim_py.workload.reader import load_workload

PROJECT = Path(__file__).resolve().parents[2]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")
ODD = ["a,b", 'say "hi"', "two\nlines", "cr\rlf", "tab\there", "plain", "é,ü"]


def cli(tmp_path: Path, workload: dict, *extra: str) -> subprocess.CompletedProcess:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    return subprocess.run(
        [sys.executable, "-m", "batsim_py.cli", "-p", SMALL4, "-w", str(path),
         "-e", str(tmp_path / "out"), "--scheduler", "fcfs", "-q", *extra],
        capture_output=True, text=True, timeout=120,
    )


def test_odd_ids_and_profile_names_round_trip_through_jobs_csv(tmp_path: Path) -> None:
    jobs = [{"id": name, "subtime": i, "res": 1, "profile": f"p {name}"}
            for i, name in enumerate(ODD)]
    profiles = {f"p {name}": {"type": "delay", "delay": 1} for name in ODD}
    proc = cli(tmp_path, {"nb_res": 4, "jobs": jobs, "profiles": profiles})
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "out_jobs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["job_id"], r["profile"]) for r in rows] == [(n, f"p {n}") for n in ODD]
    assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows)
    assert [r[0] for r in _read(str(tmp_path / "out_jobs.csv")).rows] == ODD


def test_ordinary_ids_are_written_exactly_as_batsim_does(tmp_path: Path) -> None:
    proc = cli(tmp_path, {"nb_res": 4, "jobs": [{"id": "j-1.x", "subtime": 0, "res": 1,
                                                 "profile": "d"}],
                          "profiles": {"d": {"type": "delay", "delay": 1}}})
    assert proc.returncode == 0, proc.stderr
    row = (tmp_path / "out_jobs.csv").read_text().splitlines()[1]
    assert row.startswith("j-1.x,w0,d,0.000000,1,")


def test_a_lone_surrogate_in_a_workload_is_refused_at_load(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 1}},\n'
                    '"jobs": [{"id": "a\\ud800b", "subtime": 0, "res": 1, "profile": "d"}]}')
    with pytest.raises(WorkloadError) as info:
        load_workload(str(path), "w0")
    assert str(info.value) == (
        f"{path}:2: invalid JSON: the escape \\ud800 is half of a UTF-16 surrogate pair, not a "
        "character (no file could hold it); fix or remove it")


def test_surrogate_pairs_and_escaped_backslashes_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 1}},'
                    '"jobs": [{"id": "\\ud83d\\ude00", "subtime": 0, "res": 1, "profile": "d"},'
                    '{"id": "x\\\\ud800", "subtime": 0, "res": 1, "profile": "d"}]}')
    assert [j.name for j in load_workload(str(path), "w0").jobs] == ["\U0001f600", "x\\ud800"]


def test_a_lone_surrogate_in_an_event_or_a_reply_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ev.txt"
    path.write_text('{"timestamp": 1, "type": "x\\udc00", "resources": "0"}\n')
    with pytest.raises(WorkloadError, match=r"ev.txt:1: the escape \\udc00 is half of"):
        load_events(str(path), "w0")
    reply = ('{"now": 1, "events": [{"timestamp": 1, "type": "SET_JOB_METADATA", '
             '"data": {"job_id": "w0!a", "metadata": "\\ud800"}}]}')
    with pytest.raises(ProtocolError, match=r"the escape \\ud800 is half of"):
        decode_reply(reply)


@pytest.mark.parametrize("evil", ["x\n\x1b[31mred", "bell\x07\x9b2J", "sep\u2028arator"])
def test_ids_never_reach_the_terminal_raw(tmp_path: Path, evil: str) -> None:
    jobs = [{"id": evil, "subtime": 0, "res": 1, "profile": "d"}] * 2
    proc = cli(tmp_path, {"nb_res": 4, "jobs": jobs,
                          "profiles": {"d": {"type": "delay", "delay": 1}}})
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and proc.stderr.endswith("\n")
    assert not any(c in proc.stderr[:-1] for c in "\n\r\x07\x1b\x9b\u2028")
    assert "duplicated job id" in proc.stderr
