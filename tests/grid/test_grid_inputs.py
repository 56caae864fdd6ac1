"""Bad grid and campaign files: one clear line naming the file, the culprit and the fix;
and `batsim-py cigri` end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from batsim_py.grid.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from grid_helpers import make_grid  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _grid(tmp_path: Path, **changes):
    path = Path(make_grid(tmp_path, [("alpha", 4), ("beta", 2)],
                          [{"name": "A", "nb_jobs": 4, "duration": 30,
                            "clusters": {"alpha": {}, "beta": {}}}]))
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data))
    return str(path)


def _error(capsys, *argv) -> str:
    assert main(list(argv)) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("batsim-py cigri: error: ")
    return err


@pytest.mark.parametrize("change, expected", [
    ({"clusters": {"alpha": {"policy": "sjf"}}}, "cluster 'alpha': unknown policy \"sjf\" "
                                                 "(known: fcfs, easy, conservative)"),
    ({"clusters": {"gamma": {}}}, "cluster(s) gamma not in the platform"),
    ({"flow_control": "aimd"}, "flow_control: expected one of taps, simple, tcp"),
    ({"cigri": {"RUNNER_PERIOD": 3}}, "cigri: unknown constant 'RUNNER_PERIOD'"),
    ({"campaigns": [{"name": "A", "nb_jobs": 3, "clusters": {"delta": {}}}]},
     "campaign 'A': cluster 'delta' is not in the grid (clusters: alpha, beta)"),
    ({"campaigns": [{"name": "A", "clusters": {"alpha": {}}}]},
     "campaign 'A': 'nb_jobs' (number of tasks) is missing"),
    ({"campaigns": [{"name": "A", "nb_jobs": 2, "duration": {"gauss": 3},
                     "clusters": {"alpha": {}}}]}, "campaign 'A': cluster 'alpha': duration: "
                                                   "expected seconds"),
    ({"campaigns": [{"name": "A", "nb_jobs": 2, "resources": 3, "clusters": {"beta": {}}}]},
     "campaign 'A': 3 resources per job on cluster 'beta', which has 2"),
    ({"campaigns": [{"name": "A", "nb_jobs": 2, "walltime": "1h",
                     "clusters": {"beta": {}}}]}, "walltime: expected a number, got \"1h\""),
    ({"campaigns": [{"name": "A", "nb_jobs": 2, "clusters": {"beta": {}}, "prio": 3}]},
     "campaign 'A': unknown field(s) prio"),
    ({"users_priority": {"beta": {"bob": "high"}}}, "users_priority: beta: bob: expected a "
                                                    "number"),
    ({"platform": None}, "'platform' must name a SimGrid platform file"),
])
def test_bad_grid_files(tmp_path, capsys, change, expected):
    path = _grid(tmp_path, **change)
    err = _error(capsys, path, "-e", str(tmp_path / "out" / "run"))
    assert path in err and expected in err


def test_missing_and_malformed_files(tmp_path, capsys):
    err = _error(capsys, str(tmp_path / "nope.json"))
    assert "nope.json: no such file" in err
    bad = tmp_path / "bad.json"
    bad.write_text('{"platform": "x.xml",')
    assert "bad.json: not valid JSON" in _error(capsys, str(bad))
    path = _grid(tmp_path, campaigns="camps.json")
    assert "camps.json: no such file" in _error(capsys, path)


def test_platform_without_clusters(tmp_path, capsys):
    path = _grid(tmp_path, platform=str(ROOT / "platforms" / "small4.xml"), clusters={},
                 campaigns=[])
    err = _error(capsys, path)
    assert "small4.xml: hosts node0, node1, node2, node3 belong to no cluster" in err


def test_cli_end_to_end(tmp_path):
    path = make_grid(tmp_path, [("alpha", 4), ("beta", 2)],
                     [{"name": "A", "nb_jobs": 20, "duration": 100,
                       "clusters": {"alpha": {}, "beta": {}}}],
                     local={"alpha": [(50.0, 4, 200.0, 300.0)]})
    prefix = tmp_path / "out" / "run"
    proc = subprocess.run([sys.executable, "-m", "batsim_py.cli", "cigri", path, "-e",
                           str(prefix), "--baseline", "--json", "--png", str(tmp_path / "png")],
                          capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)
    assert figures["cigri"]["utilisation"] > figures["nocigri"]["utilisation"]
    assert figures["cigri"]["campaign_makespans"]["A"] > 0
    for name in ("cigri_campaigns", "cigri_jobs", "cigri_taps", "grid_usage",
                 "grid_local_jobs", "jobs", "nocigri_jobs"):
        assert (tmp_path / "out" / f"run_{name}.csv").exists(), name
    for name in ("grid_usage", "cigri_taps"):
        assert (tmp_path / "png" / f"{name}.png").stat().st_size > 1000


def test_report_of_a_grid_run_has_its_figures(tmp_path):
    from batsim_py.analysis.report import write_report
    from batsim_py.grid.run import run_grid

    path = make_grid(tmp_path, [("alpha", 4)],
                     [{"name": "A", "nb_jobs": 12, "duration": 50, "clusters": {"alpha": {}}}],
                     local={"alpha": [(20.0, 4, 100.0, 200.0)]})
    prefix = str(tmp_path / "out" / "run")
    run_grid(path, export=prefix)
    page = open(write_report([prefix])).read()
    assert 'figure id="run_grid_usage"' in page and 'figure id="run_cigri_taps"' in page
