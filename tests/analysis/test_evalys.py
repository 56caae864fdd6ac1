"""evalys, the Batsim ecosystem's analysis library, reads batsim-py's jobs.csv as it reads
Batsim's, and its utilisation agrees with ours (skipped when evalys is not installed; the
test extra of pyproject.toml installs it)."""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from pathlib import Path

import pytest

from batsim_py.analysis import load_run, run_metrics

if importlib.util.find_spec("evalys") is None:
    pytest.skip("evalys is not installed (the test extra installs it)", allow_module_level=True)


def _check(prefix: str) -> None:
    # (imported here, not at collection: it takes seconds, paid then by every xdist worker)
    evalys_jobset = importlib.import_module("evalys.jobset")
    run = load_run(prefix)
    ours = run_metrics(run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # evalys' own pandas deprecations
        js = evalys_jobset.JobSet.from_csv(prefix + "_jobs.csv")
        load = js.utilisation  # machines in use, from each event on
        first = float(load.index.min())
        mean = js.mean_utilisation(first, ours["makespan"])
    assert len(js.df) == ours["nb_jobs"]
    used = ours["utilisation"] * run.nb_machines * ours["makespan"]  # no unavailability here
    # evalys rounds times to 6 decimals, as Batsim prints them: same machine-seconds
    assert float(load["area"].sum()) == pytest.approx(used, rel=1e-9)
    assert mean * (ours["makespan"] - first) / (run.nb_machines * ours["makespan"]) == \
        pytest.approx(ours["utilisation"], rel=1e-9)
    assert float(js.df["waiting_time"].mean()) == pytest.approx(ours["waiting_mean"], abs=1e-6)


def test_evalys_reads_batsim_py_outputs(four_jobs: str) -> None:
    _check(four_jobs)


def test_evalys_reads_the_shipped_example(tmp_path: Path) -> None:
    import subprocess
    import sys

    project = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-m", "batsim_py.cli", "-p", "platforms/cluster128.xml",
                    "-w", "workloads/gen_delay_1k_128.json", "--scheduler", "easy", "-q", "-e",
                    str(tmp_path / "example")], check=True, cwd=project, timeout=300)
    _check(str(tmp_path / "example"))


def test_evalys_reads_real_batsim_outputs_alike(reference_dir: Path) -> None:
    case = reference_dir / "b2_paper800_easy_cluster32" / "expected"
    if not case.is_dir():
        pytest.skip("b2_paper800_easy_cluster32 is not in the reference corpus")
    _check(str(case / "out"))
