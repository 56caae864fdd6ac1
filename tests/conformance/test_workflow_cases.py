"""The workflow runs of real Batsim 4.2.1 (tests/conformance/workflows), reproduced.

Each case is rerun through the command line exactly as Batsim was run (its arguments, in a
folder holding its inputs), with the in-process equivalent of its pybatsim scheduler, then
again replaying its transcript strictly (every message batsim-py sends must be the one Batsim
sent: the JOB_SUBMITTED of each task, with its rounded subtime and walltime, at the same
date); every column of jobs.csv and schedule.csv (but the two wall-clock ones) and every row
of machine_states.csv must be what Batsim printed. A case where Batsim deadlocked must stop
with batsim-py's deadlock error, after writing the same outputs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from batsim_py.cli import main
from batsim_py.output.compare import compare

WORKFLOWS = Path(__file__).resolve().parent / "workflows"
EQUIVALENT = {"schedFcfs": "fcfs", "easyBackfill": "easy"}
CASES = sorted(p.parent.name for p in WORKFLOWS.glob("*/case.json"))


def test_the_corpus_is_there() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("replay", [False, True], ids=["scheduler", "strict-replay"])
@pytest.mark.parametrize("case", CASES)
def test_workflow_case(case: str, replay: bool, tmp_path: Path,
                       monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> None:
    folder = WORKFLOWS / case
    spec = json.loads((folder / "case.json").read_text())
    for f in folder.iterdir():
        if f.is_file() and f.name != "case.json":
            shutil.copy(f, tmp_path)
    monkeypatch.chdir(tmp_path)
    scheduler = (["--scheduler", "replay:transcript.jsonl", "--replay-strict"] if replay
                 else ["--scheduler", EQUIVALENT[spec["scheduler"]["name"]]])
    code = main([*spec["batsim_args"], *scheduler, "-e", "out", "-q"])
    err = capsys.readouterr().err
    if spec["deadlock"]:
        assert code == 1 and "batsim-py: error: deadlock at t=" in err, err
    else:
        assert code == 0, err
    result = compare(str(folder / "expected" / "out"), str(tmp_path / "out"))
    assert result.ok, result.table()
