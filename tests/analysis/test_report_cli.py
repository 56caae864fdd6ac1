"""`batsim-py report` and `batsim-py stats` as a user runs them."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib.image import imread

PROJECT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "batsim_py.cli", *args], cwd=PROJECT,
                          capture_output=True, text=True, timeout=300)


def test_report_one_run(four_jobs: str) -> None:
    done = cli("report", four_jobs)
    assert done.returncode == 0, done.stderr
    page_path = Path(four_jobs + "_report.html")
    assert f"report written to {page_path}" in done.stdout
    page = page_path.read_text()
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 3  # Gantt, utilisation and queue, machine states (no -E)
    for data in images:
        assert base64.b64decode(data).startswith(b"\x89PNG")
    # self-contained: nothing fetched from elsewhere
    assert not re.search(r'(src|href)="(?!data:)', page)
    assert "<th>utilisation</th><td>0.6544</td>" in page  # 445 / 680
    assert "waiting time, median (s)</th><td>105.00</td>" in page


def test_report_comparison_and_pngs(four_jobs: str, four_jobs_easy: str, four_jobs_energy: str,
                                    tmp_path: Path) -> None:
    easy, energy = four_jobs_easy, four_jobs_energy
    page_path = tmp_path / "cmp.html"
    done = cli("report", four_jobs, easy, energy, "-o", str(page_path), "--png",
               str(tmp_path / "png"))
    assert done.returncode == 0, done.stderr
    page = page_path.read_text()
    # comparison + 3 runs x (Gantt, utilisation, machine states) + energy of the -E run
    assert page.count("data:image/png;base64,") == 1 + 3 * 3 + 1
    assert 'id="comparison"' in page
    # prefixes ending in "out" are named by their folder
    names = [Path(p).parent.name for p in (four_jobs, easy, energy)]
    assert "<th>metric</th>" + "".join(f"<th>{n}</th>" for n in names) in page
    assert "energy (J)" in page
    pngs = sorted(p.name for p in (tmp_path / "png").iterdir())
    assert "comparison.png" in pngs and f"{names[2]}_energy.png" in pngs and len(pngs) == 11
    for p in (tmp_path / "png").iterdir():
        assert imread(p).shape[1] >= 1000


def test_same_run_twice_gets_two_names(four_jobs: str) -> None:
    done = cli("stats", four_jobs, four_jobs)
    name = Path(four_jobs).parent.name
    assert done.stdout.splitlines()[0].split() == ["metric", name, name, "#2"]


def test_stats_table_and_json(four_jobs: str) -> None:
    done = cli("stats", four_jobs)
    assert done.returncode == 0, done.stderr
    lines = {line.split("  ")[0].strip(): line.split()[-1] for line in done.stdout.splitlines()}
    assert lines["utilisation"] == "0.6544"
    assert lines["makespan (s)"] == "170.00"
    assert lines["walltime reached"] == "1"
    done = cli("stats", four_jobs, "--json")
    data = json.loads(done.stdout)
    (name,) = data
    metrics = data[name]["metrics"]
    assert metrics["utilisation"] == pytest.approx(445 / 680)
    assert metrics["bsld_mean"] == pytest.approx(6.075)
    assert data[name]["workloads"]["w0"]["nb_jobs"] == 4
    assert metrics["nb_walltime"] == 1 and isinstance(metrics["nb_jobs"], int)


def test_errors_are_one_line(tmp_path: Path) -> None:
    for command in ("report", "stats"):
        done = cli(command, str(tmp_path / "nowhere"))
        assert done.returncode == 1
        assert done.stderr.startswith("batsim-py: error: ") and done.stderr.count("\n") == 1
        assert "no Batsim output found" in done.stderr
