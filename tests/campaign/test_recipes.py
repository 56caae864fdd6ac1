"""The dask-jobqueue recipes of docs/campaigns.md build the clusters they promise.

They cannot run here (no Slurm, no OAR), so the docs mark them not to run; this test executes
each recipe up to its `cluster.scale(` line (building the cluster submits nothing) and checks
the job script dask-jobqueue would submit: the batch system's directives and one thread per
worker process, which the campaign's runs need.
"""

from __future__ import annotations

import warnings

import pytest
from docs_runner import parse_blocks

from .helpers import PROJECT

pytest.importorskip("dask_jobqueue")


def recipe(cluster_class: str) -> str:
    page = PROJECT / "docs" / "campaigns.md"
    blocks = [b for b in parse_blocks(page.read_text(encoding="utf-8"), "docs/campaigns.md")
              if b.lang == "python" and f"{cluster_class}(" in b.code]
    assert len(blocks) == 1, f"one {cluster_class} recipe expected"
    assert blocks[0].skip_reason, "the recipe needs a batch system: it must be marked skip"
    code = blocks[0].code
    assert "batsim_py.campaign.run(" in code and "cluster.scale(" in code
    return code[: code.index("cluster.scale(")]


@pytest.mark.parametrize("cluster_class, expected", [
    ("SLURMCluster", ["#SBATCH -p normal", "#SBATCH -A my_project", "#SBATCH -n 1",
                      "#SBATCH --cpus-per-task=32", "#SBATCH -t 02:00:00",
                      "source $HOME/venvs/batsim/bin/activate", "--nworkers 32",
                      "--nthreads 1"]),
    ("OARCluster", ["#OAR -q default", "#OAR --project my_project",
                    "#OAR -l /nodes=1/core=16,walltime=02:00:00", "#OAR -p memcore>=",
                    "source $HOME/venvs/batsim/bin/activate", "--nworkers 16",
                    "--nthreads 1"]),
])
def test_recipe_builds_the_promised_job_script(cluster_class: str, expected: list[str],
                                               tmp_path, monkeypatch) -> None:
    import dask

    monkeypatch.chdir(tmp_path)  # (log_directory is created where the recipe runs)
    namespace: dict = {}
    with dask.config.set({"distributed.scheduler.dashboard.address": None}), \
            warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. OAR's warning about memory without a property
        exec(compile(recipe(cluster_class), f"docs/campaigns.md:{cluster_class}", "exec"),
             namespace)
    cluster = namespace["cluster"]
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    for line in expected:
        assert line in script, f"{line!r} not in the job script:\n{script}"
