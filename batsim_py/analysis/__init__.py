"""Analysis of simulation outputs: DataFrames, metrics, plots and an HTML report.

    from batsim_py.analysis import load_run, run_metrics
    run = load_run("outputs/example")      # PREFIX_jobs.csv, ... (batsim-py's or Batsim's)
    run_metrics(run)["utilisation"]

pandas is imported here; matplotlib only by `plots` and `report`.
"""

from batsim_py.analysis.load import Run, load_run, read_jobs
from batsim_py.analysis.metrics import (
    BSLD_THRESHOLD,
    job_metrics,
    metrics_table,
    run_metrics,
    workload_metrics,
)

__all__ = ["BSLD_THRESHOLD", "Run", "job_metrics", "load_run", "metrics_table", "read_jobs",
           "run_metrics", "workload_metrics"]
